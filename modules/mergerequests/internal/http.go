package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// The HTTP adapter: GitLab 9.x's /projects/:id/merge_requests endpoints
// decode their parameters, call the service and render its records
// (httpviews.go); NewRoutes maps the service's errors to GitLab's answers
// once. The merge's operations are httpmerge.go's.

// ProjectPath is a project's :id (exported: huma reads the parameters of
// exported embedded structs only).
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

// MRPath is a merge request's :id and :merge_request_iid.
type MRPath struct {
	ProjectPath
	IID int64 `path:"merge_request_iid"`
}

func (p MRPath) ref() mergerequest.Ref {
	return mergerequest.Ref{Project: p.ID, IID: mergerequest.IID(p.IID)}
}

type listInput struct {
	ProjectPath
	api.PageParams
	IID     int64   `query:"iid" doc:"one iid"`
	IIDs    []int64 `query:"iids" doc:"iids[]=1&iids[]=2"`
	State   string  `query:"state" doc:"opened, closed, merged or all (default)"`
	OrderBy string  `query:"order_by" doc:"created_at (default) or updated_at"`
	Sort    string  `query:"sort" doc:"desc (default) or asc"`
	// The filters of GitLab's later list API.
	Labels     string `query:"labels" doc:"comma-separated label names; merge requests must have all; None or Any"`
	Milestone  string `query:"milestone" doc:"milestone title; None or Any"`
	Search     string `query:"search" doc:"in titles and descriptions"`
	AuthorID   int64  `query:"author_id" doc:"the author's user id"`
	AssigneeID string `query:"assignee_id" doc:"the assignee's user id; None or Any"`
}

type listOutput struct {
	api.PageHeaders
	Body []MRView
}

type mrOutput struct {
	Body *MRView
}

// mapErrors gives the service's domain errors GitLab 9.x's answers.
func mapErrors(a *api.API) {
	a.MapError(mergerequest.ErrNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(mergerequest.ErrNotMergeable, func(error) *api.Error { return api.MethodNotAllowed("Branch cannot be merged") })
	a.MapError(mergerequest.ErrUnavailable, func(error) *api.Error { return api.NotFound("") })
	a.MapError(mergerequest.ErrMissing, func(err error) *api.Error { return api.Missing(target.ParamsOf(err)...) })
	a.MapError(mergerequest.ErrNothingGiven, func(err error) *api.Error { return api.AtLeastOne(target.ParamsOf(err)...) })
	a.MapError(mergerequest.ErrInvalid, func(err error) *api.Error {
		var e *mergerequest.InvalidError
		errors.As(err, &e)
		return api.Validation(map[string][]string{e.Field: {e.Text}})
	})
	unprocessable := func(text string) func(error) *api.Error {
		return func(error) *api.Error { return &api.Error{Status: 422, Err: text} }
	}
	a.MapError(mergerequest.ErrNotUpstream, unprocessable("The target project must be the project the source project was forked from"))
	a.MapError(mergerequest.ErrBranchesRequired, unprocessable("Source branch and target branch are required"))
	a.MapError(mergerequest.ErrSameBranch, unprocessable("You can not use same project/branch for source and target"))
	a.MapError(mergerequest.ErrBranchNotFound, func(err error) *api.Error {
		var e *mergerequest.BranchNotFoundError
		errors.As(err, &e)
		return &api.Error{Status: 422, Err: e.Error()}
	})
	a.MapError(mergerequest.ErrExists, func(err error) *api.Error {
		var e *mergerequest.ExistsError
		errors.As(err, &e)
		return api.Conflict("Cannot Create: This merge request already exists: [\"" + e.Title + "\"]")
	})
	mapMergeErrors(a)
}

// inRead runs fn in one read transaction whose context the service's
// reads join, so that a list and its rendering are one read.
func (s *Service) inRead(ctx context.Context, fn func(tx *store.Tx) error) error {
	return s.DB.View(ctx, fn)
}

// page renders a page of records read by list in the same read.
func (s *Service) page(ctx context.Context, p api.PageParams,
	list func(ctx context.Context) ([]mergerequest.MergeRequest, int, error)) (*listOutput, error) {
	h, views, err := api.ReadPage(ctx, s.DB, p, list, s.renderer(ctx).views)
	return &listOutput{PageHeaders: h, Body: views}, err
}

// pageOf renders a page the service read on its own.
func (s *Service) pageOf(ctx context.Context, p api.PageParams, recs []mergerequest.MergeRequest, total int) (*listOutput, error) {
	out := &listOutput{PageHeaders: api.Paginate(ctx, p, total)}
	err := s.inRead(ctx, func(tx *store.Tx) error {
		var err error
		out.Body, err = s.renderer(ctx).views(tx, recs)
		return err
	})
	return out, err
}

func (s *Service) list(ctx context.Context, in *listInput) (*listOutput, error) {
	q := mergerequest.ListQuery{Offset: in.Offset(), Limit: in.Limit()}
	switch in.State {
	case "", "all":
	case StateOpened, StateClosed, StateMerged:
		q.State = mergerequest.State(in.State)
	default:
		return nil, api.NotValidValue("state")
	}
	switch in.OrderBy {
	case "", "created_at":
		q.OrderBy = mergerequest.ByCreated
	case "updated_at":
		q.OrderBy = mergerequest.ByUpdated
	default:
		return nil, api.NotValidValue("order_by")
	}
	switch in.Sort {
	case "", "desc":
	case "asc":
		q.Ascending = true
	default:
		return nil, api.NotValidValue("sort")
	}
	for _, iid := range in.IIDs {
		q.IIDs = append(q.IIDs, mergerequest.IID(iid))
	}
	if in.IID != 0 {
		q.IIDs = append(q.IIDs, mergerequest.IID(in.IID))
	}
	q.Labels, q.Milestone, q.Search, q.AuthorID = splitLabels(in.Labels), in.Milestone, in.Search, in.AuthorID
	switch a := strings.TrimSpace(in.AssigneeID); {
	case a == "":
	case strings.EqualFold(a, "none"):
		q.AssigneeID = mergerequest.AssignedToNone
	case strings.EqualFold(a, "any"):
		q.AssigneeID = mergerequest.AssignedToAny
	default:
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, api.NotValidValue("assignee_id")
		}
		q.AssigneeID = id
	}
	return s.page(ctx, in.PageParams, func(ctx context.Context) ([]mergerequest.MergeRequest, int, error) {
		return s.List(ctx, in.ID, q)
	})
}

func (s *Service) get(ctx context.Context, in *MRPath) (*mrOutput, error) {
	m, err := s.Get(ctx, in.ref())
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, m)
}

// mrBody is the parameters of POST and PUT.
type mrBody struct {
	SourceBranch       *string `json:"source_branch,omitempty"`
	TargetBranch       *string `json:"target_branch,omitempty"`
	Title              *string `json:"title,omitempty"`
	Description        *string `json:"description,omitempty"`
	AssigneeID         *int64  `json:"assignee_id,omitempty"`
	TargetProjectID    *int64  `json:"target_project_id,omitempty"`
	Labels             *string `json:"labels,omitempty"`
	MilestoneID        *int64  `json:"milestone_id,omitempty"`
	RemoveSourceBranch *bool   `json:"remove_source_branch,omitempty"`
	StateEvent         *string `json:"state_event,omitempty"`
}

// mrCreateBody is mrBody as POST documents it: GitLab requires the
// branches and the title there, while PUT takes any one attribute. Only
// the tags differ, so mrBody(b) converts it. A null is let through the
// schema (nullable) for the service to call it missing, as an absent one.
type mrCreateBody struct {
	SourceBranch       *string `json:"source_branch,omitempty" required:"true" nullable:"true"`
	TargetBranch       *string `json:"target_branch,omitempty" required:"true" nullable:"true"`
	Title              *string `json:"title,omitempty" required:"true" nullable:"true"`
	Description        *string `json:"description,omitempty"`
	AssigneeID         *int64  `json:"assignee_id,omitempty"`
	TargetProjectID    *int64  `json:"target_project_id,omitempty"`
	Labels             *string `json:"labels,omitempty"`
	MilestoneID        *int64  `json:"milestone_id,omitempty"`
	RemoveSourceBranch *bool   `json:"remove_source_branch,omitempty"`
	StateEvent         *string `json:"state_event,omitempty"`
}

// fields are the service's fields of a body; labels come as "a, b,,c".
func (b *mrBody) fields() mergerequest.Fields {
	f := mergerequest.Fields{SourceBranch: b.SourceBranch, TargetBranch: b.TargetBranch, TargetProjectID: b.TargetProjectID,
		Title: b.Title, Description: b.Description, AssigneeID: b.AssigneeID, MilestoneID: b.MilestoneID,
		RemoveSourceBranch: b.RemoveSourceBranch}
	if b.Labels != nil {
		names := splitLabels(*b.Labels)
		f.Labels = &names
	}
	return f
}

// splitLabels turns "a, b,,c" into [a b c].
func splitLabels(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (s *Service) create(ctx context.Context, in *struct {
	ProjectPath
	Body mrCreateBody
}) (*mrOutput, error) {
	m, err := s.Create(ctx, in.ID, (*mrBody)(&in.Body).fields())
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, m)
}

func (s *Service) update(ctx context.Context, in *struct {
	MRPath
	Body mrBody
}) (*mrOutput, error) {
	b := &in.Body
	var ev mergerequest.StateEvent
	if b.StateEvent != nil {
		if ev = mergerequest.StateEvent(*b.StateEvent); !ev.Valid() {
			return nil, api.NotValidValue("state_event")
		}
	}
	m, err := s.Update(ctx, in.ref(), b.fields(), ev)
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, m)
}

type deleteOutput struct{}

// remove is DELETE .../merge_requests/:iid.
func (s *Service) remove(ctx context.Context, in *MRPath) (*deleteOutput, error) {
	return &deleteOutput{}, s.Delete(ctx, in.ref())
}

// commitSummary is the commit of .../commits.
type commitSummary struct {
	ID          string   `json:"id"`
	ShortID     string   `json:"short_id"`
	Title       string   `json:"title"`
	AuthorName  string   `json:"author_name"`
	AuthorEmail string   `json:"author_email"`
	CreatedAt   api.Time `json:"created_at"`
	Message     string   `json:"message"`
}

// commits is GET .../commits: the source's commits not in the target,
// newest first (for a merged one, not in the target as it was merged).
func (s *Service) commits(ctx context.Context, in *MRPath) (*struct{ Body []commitSummary }, error) {
	list, err := s.Commits(ctx, in.ref())
	if err != nil {
		return nil, err
	}
	out := make([]commitSummary, 0, len(list))
	for _, c := range list {
		title, _, _ := strings.Cut(c.Message, "\n")
		out = append(out, commitSummary{ID: c.ID, ShortID: c.ID[:8], Title: strings.TrimRight(title, "\r"),
			AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, CreatedAt: api.NewTime(c.Committer.When), Message: c.Message})
	}
	return &struct{ Body []commitSummary }{Body: out}, nil
}

func (s *Service) changes(ctx context.Context, in *MRPath) (*mrOutput, error) {
	m, diffs, err := s.Changes(ctx, in.ref())
	if err != nil {
		return nil, err
	}
	out, err := s.renderOne(ctx, m)
	if err != nil {
		return nil, err
	}
	out.Body.Changes = diffs
	return out, nil
}

func (s *Service) closesIssues(ctx context.Context, in *MRPath) (*struct{ Body []any }, error) {
	list, err := s.ClosesIssues(ctx, in.ref())
	if err != nil {
		return nil, err
	}
	return &struct{ Body []any }{Body: list}, nil
}

// NewRoutes registers the module's operations and maps its errors.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests", Register: func(a *api.API) {
		mapErrors(a)
		tags := []string{"merge requests"}
		base := "/projects/{id}/merge_requests"
		one := base + "/{merge_request_iid}"
		api.Register(a, api.Op{ID: "list-merge-requests", Method: http.MethodGet, Path: base, Tags: tags,
			Summary: "A project's merge requests"}, s.list)
		api.Register(a, api.Op{ID: "get-merge-request", Method: http.MethodGet, Path: one, Tags: tags,
			Summary: "A merge request"}, s.get)
		api.Register(a, api.Op{ID: "merge-request-commits", Method: http.MethodGet, Path: one + "/commits", Tags: tags,
			Summary: "A merge request's commits, newest first"}, s.commits)
		api.Register(a, api.Op{ID: "merge-request-changes", Method: http.MethodGet, Path: one + "/changes", Tags: tags,
			Summary: "A merge request with its diffs"}, s.changes)
		api.Register(a, api.Op{ID: "merge-request-closes-issues", Method: http.MethodGet, Path: one + "/closes_issues", Tags: tags,
			Summary: "The issues merging would close"}, s.closesIssues)
		api.Register(a, api.Op{ID: "create-merge-request", Method: http.MethodPost, Path: base, Tags: tags,
			Summary: "Open a merge request", Access: api.SignedIn}, s.create)
		api.Register(a, api.Op{ID: "update-merge-request", Method: http.MethodPut, Path: one, Tags: tags,
			Summary: "Edit, close or reopen a merge request", Access: api.SignedIn}, s.update)
		api.Register(a, api.Op{ID: "delete-merge-request", Method: http.MethodDelete, Path: one, Tags: tags,
			Summary: "Delete a merge request (owners and administrators)", Access: api.SignedIn}, s.remove)
		api.Register(a, api.Op{ID: "merge-merge-request", Method: http.MethodPut, Path: one + "/merge", Tags: tags,
			Summary: "Accept (merge) a merge request", Access: api.SignedIn}, s.accept)
		api.Register(a, api.Op{ID: "cancel-merge-when-pipeline-succeeds", Method: http.MethodPut,
			Path: one + "/cancel_merge_when_pipeline_succeeds", Tags: tags,
			Summary: "Cancel merge when pipeline succeeds", Access: api.SignedIn}, s.cancelMWPS)
		api.Register(a, api.Op{ID: "cancel-merge-when-pipeline-succeeds-post", Method: http.MethodPost,
			Path: one + "/cancel_merge_when_pipeline_succeeds", Tags: tags,
			Summary: "Cancel merge when pipeline succeeds", Access: api.SignedIn}, s.cancelMWPS)
	}}
}

type commitMRsInput struct {
	ProjectPath
	api.PageParams
	SHA string `path:"sha" doc:"Commit sha, branch or tag"`
}

// NewCommitMRRoutes registers GET .../commits/:sha/merge_requests (the
// repository's path, this module's answer).
func NewCommitMRRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests-commits", Register: func(a *api.API) {
		api.Register(a, api.Op{ID: "commit-merge-requests", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/merge_requests",
			Tags: []string{"merge requests"}, Summary: "The merge requests that hold a commit, newest first"},
			func(ctx context.Context, in *commitMRsInput) (*listOutput, error) {
				recs, total, err := s.CommitMergeRequests(ctx, in.ID, in.SHA, in.Offset(), in.Limit())
				if err != nil {
					return nil, err
				}
				return s.pageOf(ctx, in.PageParams, recs, total)
			})
	}}
}

type milestoneMRsInput struct {
	ProjectPath
	api.PageParams
	MilestoneID int64 `path:"milestone_id" doc:"The id of a project milestone"`
}

// NewMilestoneRoutes registers the merge requests of a milestone; the
// route is the milestones' (issues module), the answer this module's.
func NewMilestoneRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests-milestones", Register: func(a *api.API) {
		api.Register(a, api.Op{ID: "list-project-milestone-merge-requests", Method: http.MethodGet,
			Path: "/projects/{id}/milestones/{milestone_id}/merge_requests", Tags: []string{"milestones"},
			Summary: "The merge requests of a milestone"},
			func(ctx context.Context, in *milestoneMRsInput) (*listOutput, error) {
				return s.page(ctx, in.PageParams, func(ctx context.Context) ([]mergerequest.MergeRequest, int, error) {
					return s.MilestoneMergeRequests(ctx, in.ID, in.MilestoneID, in.Offset(), in.Limit())
				})
			})
	}}
}

type labelEventsOutput struct {
	api.PageHeaders
	Body []any
}

type labelEventOutput struct {
	Body any
}

type mrLabelEventPath struct {
	MRPath
	EventID int64 `path:"resource_label_event_id"`
}

// NewLabelEventRoutes registers the label events of merge requests.
func NewLabelEventRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests-label-events", Register: func(a *api.API) {
		tags := []string{"merge requests"}
		base := "/projects/{id}/merge_requests/{merge_request_iid}/resource_label_events"
		api.Register(a, api.Op{ID: "list-merge-request-label-events", Method: http.MethodGet, Path: base, Tags: tags,
			Summary: "The labels added to and removed from a merge request, oldest first"},
			func(ctx context.Context, in *struct {
				MRPath
				api.PageParams
			}) (*labelEventsOutput, error) {
				list, total, err := s.LabelEvents(ctx, in.ref(), in.Offset(), in.Limit())
				if err != nil {
					return nil, err
				}
				return &labelEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: list}, nil
			})
		api.Register(a, api.Op{ID: "get-merge-request-label-event", Method: http.MethodGet, Path: base + "/{resource_label_event_id}",
			Tags: tags, Summary: "One label event of a merge request"},
			func(ctx context.Context, in *mrLabelEventPath) (*labelEventOutput, error) {
				v, err := s.LabelEvent(ctx, in.ref(), in.EventID)
				if err != nil {
					return nil, err
				}
				return &labelEventOutput{Body: v}, nil
			})
	}}
}
