package internal

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
)

// The HTTP adapter: GitLab 9.x's issue, label and milestone endpoints
// decode their parameters, call the service (issue.Service) and render its
// records (httpviews.go); NewRoutes maps the service's errors to GitLab's
// answers once.

// ProjectPath is a project's :id. Exported because operations embed it
// (huma reads the parameters of exported embedded structs only).
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

// IssuePath is an issue's :id and :issue_iid.
type IssuePath struct {
	ProjectPath
	IID int64 `path:"issue_iid"`
}

func (p IssuePath) ref() issue.Ref { return issue.Ref{Project: p.ID, IID: issue.IID(p.IID)} }

// ListParams are the filters of the issue lists.
type ListParams struct {
	api.PageParams
	State     string  `query:"state" doc:"opened, closed or all (default)"`
	Labels    string  `query:"labels" doc:"comma-separated label names; issues must have all"`
	Milestone string  `query:"milestone" doc:"milestone title, 'No Milestone' or 'Any Milestone'"`
	IIDs      []int64 `query:"iids" doc:"iids[]=1&iids[]=2"`
	Search    string  `query:"search" doc:"in titles and descriptions"`
	OrderBy   string  `query:"order_by" doc:"created_at (default) or updated_at"`
	Sort      string  `query:"sort" doc:"desc (default) or asc"`
}

func (p *ListParams) query() issue.ListQuery {
	return issue.ListQuery{State: p.State, Labels: splitLabels(p.Labels), Milestone: p.Milestone, IIDs: p.IIDs,
		Search: p.Search, OrderBy: p.OrderBy, Sort: p.Sort, Offset: p.Offset(), Limit: p.Limit()}
}

// splitLabels turns "a, b,,c" into [a b c] (trimmed, no empties, no repeats).
func splitLabels(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

type issuesOutput struct {
	api.PageHeaders
	Body []IssueView
}

type issueOutput struct {
	Body *IssueView
}

type deleteOutput struct{}

// issueBody is the parameters of POST and PUT.
type issueBody struct {
	Title        *string  `json:"title,omitempty"`
	Description  *string  `json:"description,omitempty"`
	AssigneeID   *int64   `json:"assignee_id,omitempty"`
	AssigneeIDs  *[]int64 `json:"assignee_ids,omitempty"`
	MilestoneID  *int64   `json:"milestone_id,omitempty"`
	Labels       *string  `json:"labels,omitempty"`
	Confidential *bool    `json:"confidential,omitempty"`
	DueDate      *string  `json:"due_date,omitempty"`
	CreatedAt    *string  `json:"created_at,omitempty"`
	StateEvent   *string  `json:"state_event,omitempty"`
}

func (b *issueBody) fields() issue.Fields {
	f := issue.Fields{Title: b.Title, Description: b.Description, MilestoneID: b.MilestoneID, Confidential: b.Confidential,
		DueDate: b.DueDate, CreatedAt: b.CreatedAt, AssigneeIDs: b.AssigneeIDs}
	if f.AssigneeIDs == nil && b.AssigneeID != nil {
		f.AssigneeIDs = &[]int64{*b.AssigneeID}
	}
	if b.Labels != nil {
		names := splitLabels(*b.Labels)
		f.Labels = &names
	}
	return f
}

// mapErrors gives the service's domain errors GitLab 9.x's answers.
func mapErrors(a *api.API) {
	a.MapError(issue.ErrNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(issue.ErrMilestoneNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(issue.ErrLabelNotFound, func(error) *api.Error { return api.NotFound("Label") })
	a.MapError(issue.ErrLabelExists, func(error) *api.Error { return api.Conflict("Label already exists") })
	a.MapError(issue.ErrMissing, func(err error) *api.Error { return api.Missing(target.ParamsOf(err)...) })
	a.MapError(issue.ErrNothingGiven, func(err error) *api.Error { return api.AtLeastOne(target.ParamsOf(err)...) })
	a.MapError(issue.ErrInvalidValue, func(err error) *api.Error { return api.NotValidValue(strings.Join(target.ParamsOf(err), ", ")) })
	a.MapError(issue.ErrInvalidParam, func(err error) *api.Error { return api.Invalid(strings.Join(target.ParamsOf(err), ", ")) })
	a.MapError(issue.ErrMilestoneInvalid, func(err error) *api.Error {
		var e *issue.MilestoneError
		errors.As(err, &e)
		return api.BadRequest("Failed to " + e.Verb + " milestone {:" + e.Field + "=>[\"" + e.Text + "\"]}")
	})
}

// NewRoutes registers the module's operations and maps its errors.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "issues", Register: func(a *api.API) {
		mapErrors(a)
		s.registerIssues(a)
		s.registerLabels(a)
		s.registerMilestones(a)
		s.registerGroupMilestones(a)
		s.registerGroupLabels(a)
	}}
}

// page renders a page of records read by list in the same read.
func (s *Service) page(ctx context.Context, p api.PageParams, list func(ctx context.Context) ([]issue.Issue, int, error)) (*issuesOutput, error) {
	h, views, err := api.ReadPage(ctx, s.db, p, list, s.renderer(ctx).views)
	return &issuesOutput{PageHeaders: h, Body: views}, err
}

// one renders one record (with subscribed) read by get in the same read.
func (s *Service) one(ctx context.Context, get func(ctx context.Context) (issue.Issue, error)) (*issueOutput, error) {
	out := &issueOutput{}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		r, err := get(tx.Context())
		if err != nil {
			return err
		}
		out.Body, err = s.single(ctx, tx, r)
		return err
	})
	return out, err
}

func (s *Service) listIssues(ctx context.Context, in *struct {
	ProjectPath
	ListParams
}) (*issuesOutput, error) {
	return s.page(ctx, in.PageParams, func(ctx context.Context) ([]issue.Issue, int, error) {
		return s.List(ctx, in.ID, in.query())
	})
}

// listMine is GET /issues: the caller's issues across projects.
func (s *Service) listMine(ctx context.Context, in *struct {
	ListParams
	Scope string `query:"scope" doc:"created-by-me (default), assigned-to-me or all"`
}) (*issuesOutput, error) {
	q := in.query()
	q.Scope = in.Scope
	return s.page(ctx, in.PageParams, func(ctx context.Context) ([]issue.Issue, int, error) { return s.ListMine(ctx, q) })
}

func (s *Service) getIssue(ctx context.Context, in *IssuePath) (*issueOutput, error) {
	return s.one(ctx, func(ctx context.Context) (issue.Issue, error) { return s.Get(ctx, in.ref()) })
}

func (s *Service) createIssue(ctx context.Context, in *struct {
	ProjectPath
	Body issueBody
}) (*issueOutput, error) {
	r, err := s.Create(ctx, in.ID, in.Body.fields())
	if err != nil {
		return nil, err
	}
	return s.one(ctx, func(context.Context) (issue.Issue, error) { return r, nil })
}

func (s *Service) updateIssue(ctx context.Context, in *struct {
	IssuePath
	Body issueBody
}) (*issueOutput, error) {
	var ev issue.StateEvent
	if in.Body.StateEvent != nil {
		ev = issue.StateEvent(*in.Body.StateEvent)
		if ev == "" {
			// Given but empty is not a state event either.
			ev = " "
		}
	}
	r, err := s.Update(ctx, in.ref(), in.Body.fields(), ev)
	if err != nil {
		return nil, err
	}
	return s.one(ctx, func(context.Context) (issue.Issue, error) { return r, nil })
}

func (s *Service) deleteIssue(ctx context.Context, in *IssuePath) (*deleteOutput, error) {
	return &deleteOutput{}, s.Delete(ctx, in.ref())
}

func (s *Service) registerIssues(a *api.API) {
	tags := []string{"issues"}
	api.Register(a, api.Op{ID: "list-project-issues", Method: http.MethodGet, Path: "/projects/{id}/issues", Tags: tags,
		Summary: "A project's issues"}, s.listIssues)
	api.Register(a, api.Op{ID: "list-issues", Method: http.MethodGet, Path: "/issues", Tags: tags,
		Summary: "The caller's issues (scope)", Access: api.SignedIn}, s.listMine)
	api.Register(a, api.Op{ID: "get-project-issue", Method: http.MethodGet, Path: "/projects/{id}/issues/{issue_iid}", Tags: tags,
		Summary: "An issue"}, s.getIssue)
	api.Register(a, api.Op{ID: "create-project-issue", Method: http.MethodPost, Path: "/projects/{id}/issues", Tags: tags,
		Summary: "Open an issue", Access: api.SignedIn}, s.createIssue)
	api.Register(a, api.Op{ID: "update-project-issue", Method: http.MethodPut, Path: "/projects/{id}/issues/{issue_iid}", Tags: tags,
		Summary: "Edit, close or reopen an issue", Access: api.SignedIn}, s.updateIssue)
	api.Register(a, api.Op{ID: "delete-project-issue", Method: http.MethodDelete, Path: "/projects/{id}/issues/{issue_iid}", Tags: tags,
		Summary: "Delete an issue (owners and administrators)", Access: api.SignedIn}, s.deleteIssue)
}
