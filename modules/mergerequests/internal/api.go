package internal

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/issues"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/todos"
)

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

type listInput struct {
	ProjectPath
	api.PageParams
	IID     int64   `query:"iid" doc:"one iid"`
	IIDs    []int64 `query:"iids" doc:"iids[]=1&iids[]=2"`
	State   string  `query:"state" doc:"opened, closed, merged or all (default)"`
	OrderBy string  `query:"order_by" doc:"created_at (default) or updated_at"`
	Sort    string  `query:"sort" doc:"desc (default) or asc"`
}

type listOutput struct {
	api.PageHeaders
	Body []MRView
}

type mrOutput struct {
	Body *MRView
}

func stateMatches(state string, flag byte) bool {
	switch state {
	case "", "all":
		return true
	case StateOpened:
		return flag == flagOpen
	case StateClosed:
		return flag == flagClosed
	case StateMerged:
		return flag == flagMerged
	}
	return false
}

func (s *Service) list(ctx context.Context, in *listInput) (*listOutput, error) {
	switch in.State {
	case "", "all", StateOpened, StateClosed, StateMerged:
	default:
		return nil, api.NotValidValue("state")
	}
	bucket := byCreated
	switch in.OrderBy {
	case "", "created_at":
	case "updated_at":
		bucket = byUpdated
	default:
		return nil, api.NotValidValue("order_by")
	}
	desc := true
	switch in.Sort {
	case "", "desc":
	case "asc":
		desc = false
	default:
		return nil, api.NotValidValue("sort")
	}
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	iids := slices.Clone(in.IIDs)
	if in.IID != 0 {
		iids = append(iids, in.IID)
	}
	out := &listOutput{}
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		var page []*MR
		total := 0
		if len(iids) > 0 {
			// By iid: the index, then the same order as a walk.
			var all []*MR
			for _, iid := range iids {
				m, err := mrByIID(tx, info.ID, iid)
				if errors.Is(err, mergerequest.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if stateMatches(in.State, flagOf(m)) && !slices.ContainsFunc(all, func(o *MR) bool { return o.ID == m.ID }) {
					all = append(all, m)
				}
			}
			slices.SortFunc(all, func(a, b *MR) int {
				ta, tb := a.CreatedAt, b.CreatedAt
				if string(bucket) == string(byUpdated) {
					ta, tb = a.UpdatedAt, b.UpdatedAt
				}
				c := ta.Compare(tb)
				if c == 0 {
					c = int(a.ID) - int(b.ID)
				}
				if desc {
					return -c
				}
				return c
			})
			total = len(all)
			page = api.Window(all, in.PageParams)
		} else {
			from, limit := in.Offset(), in.Limit()
			var ids []uint64
			store.WalkTimeKeys(tx, bucket, uint64(info.ID), desc, func(id uint64, flag byte) bool {
				if !stateMatches(in.State, flag) {
					return true
				}
				if total >= from && len(ids) < limit {
					ids = append(ids, id)
				}
				total++
				return true
			})
			for _, id := range ids {
				m, err := mrs.Get(tx, id)
				if err != nil {
					return err
				}
				page = append(page, m)
			}
		}
		out.PageHeaders = api.Paginate(ctx, in.PageParams, total)
		var err error
		out.Body, err = s.renderer(ctx).views(tx, s.records(info, page))
		return err
	})
	return out, err
}

func (s *Service) get(ctx context.Context, in *MRPath) (*mrOutput, error) {
	m, err := s.Get(ctx, in.ref())
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, m)
}

// render answers one merge request as the caller sees it.
func (s *Service) render(ctx context.Context, info projects.ProjectInfo, iid int64) (*mrOutput, error) {
	uid := auth.FromContext(ctx).UserID()
	out := &mrOutput{}
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, iid)
		if err != nil {
			return err
		}
		out.Body, err = s.single(ctx, tx, s.record(info, m), uid)
		return err
	})
	return out, err
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
// schema (nullable) for the handler to call it missing, as an absent one.
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

func invalidText(v string) bool {
	return !utf8.ValidString(v) || strings.ContainsRune(v, utf8.RuneError)
}

// checkTitle is the model's validation of a title (already trimmed); a
// control character (C0, DEL, C1) makes it invalid: a title is one line of
// text, and a NUL or an escape sequence in it would reach every page, feed,
// mail and terminal that shows it.
func checkTitle(t string) error {
	switch {
	case invalidText(t) || strings.IndexFunc(t, unicode.IsControl) >= 0:
		return api.FieldErrors{"title": {"is invalid"}}
	case t == "":
		return api.FieldErrors{"title": {"can't be blank"}}
	case utf8.RuneCountInString(t) > maxTitle:
		return api.FieldErrors{"title": {"is too long (maximum is 255 characters)"}}
	}
	return nil
}

func checkDescription(d string) error {
	switch {
	case invalidText(d):
		return api.FieldErrors{"description": {"is invalid"}}
	case len(d) > maxDescription:
		return api.FieldErrors{"description": {"is too long (maximum is 1000000 characters)"}}
	}
	return nil
}

func checkBranchName(field, b string) error {
	if invalidText(b) || strings.ContainsAny(b, " ~^:?*[\\\x00") || len(b) > 255 {
		return api.FieldErrors{field: {"is invalid"}}
	}
	return nil
}

// assignee keeps an assignee who may read the target's merge requests
// (others are dropped, as GitLab filters them); 0 clears.
func (s *Service) assignee(ctx context.Context, project int64, id int64) int64 {
	if id <= 0 {
		return 0
	}
	u, err := s.Lookup.LookupUser(ctx, i64(id))
	if err != nil {
		return 0
	}
	p, err := auth.ForUser(u)
	if err != nil {
		return 0
	}
	if _, err := s.Access.RequireID(auth.WithPrincipal(ctx, p), project, projects.ReadMergeRequests); err != nil {
		return 0
	}
	return id
}

// milestone checks that a milestone is the project's (0 clears; a foreign
// or unknown one is ignored).
func (s *Service) milestone(ctx context.Context, project, id int64) (int64, bool) {
	if id <= 0 {
		return 0, true
	}
	if s.Milestones == nil {
		return 0, false
	}
	if _, err := s.Milestones.Milestone(ctx, project, id); err != nil {
		return 0, false
	}
	return id, true
}

func (s *Service) create(ctx context.Context, in *struct {
	ProjectPath
	Body mrCreateBody
}) (*mrOutput, error) {
	b := (*mrBody)(&in.Body)
	var missing []string
	for name, v := range map[string]*string{"source_branch": b.SourceBranch, "target_branch": b.TargetBranch, "title": b.Title} {
		if v == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, api.Missing(missing...)
	}
	source, err := s.writeProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	targetInfo := source
	if b.TargetProjectID != nil && *b.TargetProjectID != source.ID {
		// A merge request from a fork into its upstream (GitLab 9.x: the
		// project the source was forked from); merging is the upstream's
		// developers' call.
		if *b.TargetProjectID != source.ForkedFromID {
			return nil, &api.Error{Status: 422, Err: "The target project must be the project the source project was forked from"}
		}
		if targetInfo, err = s.readProjectID(ctx, *b.TargetProjectID); err != nil {
			return nil, err
		}
	}
	title := strings.TrimSpace(*b.Title)
	if err := checkTitle(title); err != nil {
		return nil, err
	}
	srcBranch, tgtBranch := strings.TrimSpace(*b.SourceBranch), strings.TrimSpace(*b.TargetBranch)
	if err := checkBranchName("source_branch", srcBranch); err != nil {
		return nil, err
	}
	if err := checkBranchName("target_branch", tgtBranch); err != nil {
		return nil, err
	}
	if srcBranch == "" || tgtBranch == "" {
		return nil, &api.Error{Status: 422, Err: "Source branch and target branch are required"}
	}
	if source.ID == targetInfo.ID && srcBranch == tgtBranch {
		return nil, &api.Error{Status: 422, Err: "You can not use same project/branch for source and target"}
	}
	m := &MR{ProjectID: uint64(targetInfo.ID), SourceProjectID: uint64(source.ID), SourceBranch: srcBranch,
		TargetBranch: tgtBranch, Title: title, State: StateOpened, AuthorID: auth.FromContext(ctx).UserID(),
		MergeStatus: StatusUnchecked}
	if b.Description != nil {
		if err := checkDescription(*b.Description); err != nil {
			return nil, err
		}
		m.Description = *b.Description
	}
	srcSHA, err := s.Merges.BranchHead(ctx, source.ID, srcBranch)
	if err != nil {
		return nil, &api.Error{Status: 422, Err: "Source branch \"" + srcBranch + "\" does not exist"}
	}
	tgtSHA, err := s.Merges.BranchHead(ctx, targetInfo.ID, tgtBranch)
	if err != nil {
		return nil, &api.Error{Status: 422, Err: "Target branch \"" + tgtBranch + "\" does not exist"}
	}
	m.SHA, m.TargetSHA = srcSHA, tgtSHA
	if b.RemoveSourceBranch != nil {
		m.ForceRemoveSource = *b.RemoveSourceBranch
	}
	if b.AssigneeID != nil {
		m.AssigneeID = s.assignee(ctx, targetInfo.ID, *b.AssigneeID)
	}
	var labelNames []string
	if b.Labels != nil {
		labelNames = splitLabels(*b.Labels)
	}
	uid := m.AuthorID
	out := &mrOutput{}
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		if ids, err := mrs.IDsBy(tx, "source", branchKey(m.SourceProjectID, m.SourceBranch)); err != nil {
			return err
		} else {
			for _, id := range ids {
				o, err := mrs.Get(tx, id)
				if err != nil {
					return err
				}
				if o.ProjectID == m.ProjectID && o.TargetBranch == m.TargetBranch {
					return api.Conflict("Cannot Create: This merge request already exists: [\"" + o.Title + "\"]")
				}
			}
		}
		if b.MilestoneID != nil {
			m.MilestoneID, _ = s.milestone(tx.Context(), targetInfo.ID, *b.MilestoneID)
		}
		if len(labelNames) > 0 && s.Labels != nil {
			ids, err := s.Labels.Ensure(tx.Context(), targetInfo.ID, labelNames)
			if err != nil {
				return err
			}
			m.LabelIDs = ids
		}
		now := s.now()
		m.CreatedAt, m.UpdatedAt = now, now
		if err := insertMR(tx, m); err != nil {
			return err
		}
		if err := s.publish(tx, targetInfo, m, uid, event.Open); err != nil {
			return err
		}
		if len(m.LabelIDs) > 0 {
			// Labels given at creation are added, as GitLab records them.
			if err := s.Labels.RecordLabelChange(tx.Context(), targetInfo.ID, "MergeRequest", int64(m.ID), uid, nil, m.LabelIDs); err != nil {
				return err
			}
		}
		if s.Notes != nil && m.Description != "" {
			if err := s.Notes.Mentioned(tx.Context(), s.noteable(targetInfo, m), uid, m.Description); err != nil {
				return err
			}
		}
		if err := s.assignedTodo(tx, m, uid); err != nil {
			return err
		}
		out.Body, err = s.single(ctx, tx, s.record(targetInfo, m), uid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readProjectID resolves a project by id for reading merge requests.
func (s *Service) readProjectID(ctx context.Context, id int64) (projects.ProjectInfo, error) {
	return s.Access.RequireID(ctx, id, projects.ReadMergeRequests)
}

func (s *Service) assignedTodo(tx *store.Tx, m *MR, uid int64) error {
	if s.Todos == nil || m.AssigneeID == 0 {
		return nil
	}
	return s.Todos.Add(tx.Context(), todos.New{UserID: m.AssigneeID, AuthorID: uid, Target: target(m), Action: todos.Assigned, Body: m.Title})
}

func (s *Service) update(ctx context.Context, in *struct {
	MRPath
	Body mrBody
}) (*mrOutput, error) {
	b := &in.Body
	if b.TargetBranch == nil && b.Title == nil && b.Description == nil && b.AssigneeID == nil && b.StateEvent == nil &&
		b.Labels == nil && b.MilestoneID == nil && b.RemoveSourceBranch == nil {
		return nil, api.AtLeastOne("assignee_id", "description", "labels", "milestone_id", "remove_source_branch",
			"state_event", "target_branch", "title")
	}
	if b.StateEvent != nil && *b.StateEvent != "close" && *b.StateEvent != "reopen" {
		return nil, api.NotValidValue("state_event")
	}
	info, err := s.writeProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var title, description, tgt string
	if b.Title != nil {
		title = strings.TrimSpace(*b.Title)
		if err := checkTitle(title); err != nil {
			return nil, err
		}
	}
	if b.Description != nil {
		if err := checkDescription(*b.Description); err != nil {
			return nil, err
		}
		description = *b.Description
	}
	var tgtSHA string
	if b.TargetBranch != nil {
		tgt = strings.TrimSpace(*b.TargetBranch)
		if err := checkBranchName("target_branch", tgt); err != nil {
			return nil, err
		}
		if tgtSHA, err = s.Merges.BranchHead(ctx, info.ID, tgt); err != nil {
			return nil, &api.Error{Status: 422, Err: "Target branch \"" + tgt + "\" does not exist"}
		}
	}
	var assignee int64
	if b.AssigneeID != nil {
		assignee = s.assignee(ctx, info.ID, *b.AssigneeID)
	}
	uid := auth.FromContext(ctx).UserID()
	out := &mrOutput{}
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, in.IID)
		if err != nil {
			return err
		}
		before := *m
		var notesToWrite []string
		changed := false
		if m.State == StateMerged && (b.TargetBranch != nil || b.StateEvent != nil) {
			// A merged merge request keeps its branches and state.
			return api.MethodNotAllowed("")
		}
		if b.Title != nil && title != m.Title {
			notesToWrite = append(notesToWrite, "changed title from **"+m.Title+"** to **"+title+"**")
			m.Title, changed = title, true
		}
		if b.Description != nil && description != m.Description {
			notesToWrite = append(notesToWrite, "changed the description")
			m.Description, changed = description, true
		}
		if b.TargetBranch != nil && tgt != m.TargetBranch {
			if m.SourceProjectID == m.ProjectID && tgt == m.SourceBranch {
				return &api.Error{Status: 422, Err: "You can not use same project/branch for source and target"}
			}
			notesToWrite = append(notesToWrite, "changed target branch from `"+m.TargetBranch+"` to `"+tgt+"`")
			m.TargetBranch, m.TargetSHA, m.MergeStatus, changed = tgt, tgtSHA, StatusUnchecked, true
			if m.MergeWhenPipeline {
				// Whoever set it approved a merge into the old target (and
				// may not merge into the new one): it does not carry over.
				m.MergeWhenPipeline, m.MergeUserID, m.MergeMessage = false, 0, ""
				notesToWrite = append(notesToWrite, "canceled the automatic merge: the target branch was changed")
			}
		}
		if b.RemoveSourceBranch != nil && *b.RemoveSourceBranch != m.ForceRemoveSource {
			m.ForceRemoveSource, changed = *b.RemoveSourceBranch, true
		}
		assigned := false
		if b.AssigneeID != nil && assignee != m.AssigneeID {
			m.AssigneeID, changed, assigned = assignee, true, assignee != 0
			body := "removed assignee"
			if assignee != 0 {
				if u, err := s.Users.UserByID(tx.Context(), assignee); err == nil {
					body = "assigned to @" + u.Username
				}
			}
			notesToWrite = append(notesToWrite, body)
		}
		if b.MilestoneID != nil {
			if ms, ok := s.milestone(tx.Context(), info.ID, *b.MilestoneID); ok && ms != m.MilestoneID {
				body := "removed milestone"
				if ms != 0 {
					body = "changed milestone to %" + i64(ms)
					if mv, err := s.Milestones.Milestone(tx.Context(), info.ID, ms); err == nil {
						body = `changed milestone to %"` + strings.ReplaceAll(mv.Title, `"`, "") + `"`
					}
				}
				notesToWrite = append(notesToWrite, body)
				m.MilestoneID, changed = ms, true
			}
		}
		if b.Labels != nil && s.Labels != nil {
			ids, err := s.Labels.Ensure(tx.Context(), info.ID, splitLabels(*b.Labels))
			if err != nil {
				return err
			}
			if !sameSet(ids, m.LabelIDs) {
				notesToWrite = append(notesToWrite, labelNote(m.LabelIDs, ids))
				if err := s.Labels.RecordLabelChange(tx.Context(), info.ID, "MergeRequest", int64(m.ID), uid, m.LabelIDs, ids); err != nil {
					return err
				}
				m.LabelIDs, changed = ids, true
			}
		}
		action := event.Update
		if b.StateEvent != nil {
			switch {
			case *b.StateEvent == "close" && m.Open():
				m.State, action = StateClosed, event.Close
				m.MergeWhenPipeline = false
			case *b.StateEvent == "reopen" && m.State == StateClosed:
				m.State, action = StateReopened, event.Reopen
				m.MergeStatus = StatusUnchecked
				if sha, err := s.Merges.BranchHead(tx.Context(), int64(m.SourceProjectID), m.SourceBranch); err == nil {
					m.SHA = sha
				}
			}
		}
		if !changed && action == event.Update {
			out.Body, err = s.single(ctx, tx, s.record(info, m), uid)
			return err
		}
		if action == event.Reopen {
			// Only one open merge request per pair of branches.
			ids, err := mrs.IDsBy(tx, "source", branchKey(m.SourceProjectID, m.SourceBranch))
			if err != nil {
				return err
			}
			for _, id := range ids {
				if o, err := mrs.Get(tx, id); err == nil && o.ID != m.ID && o.ProjectID == m.ProjectID && o.TargetBranch == m.TargetBranch {
					return api.Conflict("Cannot Create: This merge request already exists: [\"" + o.Title + "\"]")
				}
			}
		}
		s.touch(m, before.UpdatedAt)
		if err := saveMR(tx, before, m); err != nil {
			return err
		}
		for _, body := range notesToWrite {
			if err := s.system(tx, info, m, uid, body); err != nil {
				return err
			}
		}
		if b.Description != nil && description != before.Description && s.Notes != nil && description != "" {
			if err := s.Notes.Mentioned(tx.Context(), s.noteable(info, m), uid, description); err != nil {
				return err
			}
		}
		if assigned {
			if err := s.assignedTodo(tx, m, uid); err != nil {
				return err
			}
		}
		if changed && action != event.Update {
			if err := s.publish(tx, info, m, uid, event.Update); err != nil {
				return err
			}
		}
		switch action {
		case event.Close:
			if err := s.system(tx, info, m, uid, "closed"); err != nil {
				return err
			}
			if s.Todos != nil {
				if err := s.Todos.Done(tx.Context(), target(m), uid); err != nil {
					return err
				}
			}
		case event.Reopen:
			if err := s.system(tx, info, m, uid, "reopened"); err != nil {
				return err
			}
		}
		if err := s.publish(tx, info, m, uid, action); err != nil {
			return err
		}
		out.Body, err = s.single(ctx, tx, s.record(info, m), uid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func sameSet(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// labelNote is GitLab's label change note: "added ~1 label", "added ~1 ~2
// labels and removed ~3 label".
func labelNote(before, after []int64) string {
	var added, removed []string
	for _, id := range after {
		if !slices.Contains(before, id) {
			added = append(added, "~"+i64(id))
		}
	}
	for _, id := range before {
		if !slices.Contains(after, id) {
			removed = append(removed, "~"+i64(id))
		}
	}
	part := func(verb string, refs []string) string {
		noun := " label"
		if len(refs) > 1 {
			noun = " labels"
		}
		return verb + " " + strings.Join(refs, " ") + noun
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, part("added", added))
	}
	if len(removed) > 0 {
		parts = append(parts, part("removed", removed))
	}
	return strings.Join(parts, " and ")
}

type deleteOutput struct{}

// remove soft-deletes a merge request: the record stays (its iid is never
// reused), hidden from every read; its notes and todos go.
func (s *Service) remove(ctx context.Context, in *MRPath) (*deleteOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, in.IID)
		if err != nil {
			return err
		}
		if info.Level < projects.Owner {
			return projects.ErrForbidden
		}
		before := *m
		m.Deleted = true
		if err := untrack(tx, &before); err != nil {
			return err
		}
		if err := mrs.Update(tx, m); err != nil {
			return err
		}
		if s.Notes != nil {
			if err := s.Notes.Remove(tx.Context(), "MergeRequest", int64(m.ID)); err != nil {
				return err
			}
		}
		if s.Labels != nil {
			if err := s.Labels.RemoveLabelEvents(tx.Context(), "MergeRequest", int64(m.ID)); err != nil {
				return err
			}
		}
		if s.Todos != nil {
			return s.Todos.Remove(tx.Context(), target(m))
		}
		return nil
	})
	return &deleteOutput{}, err
}

func (s *Service) subscription(subscribed bool) func(ctx context.Context, in *MRPath) (*mrOutput, error) {
	return func(ctx context.Context, in *MRPath) (*mrOutput, error) {
		if s.Notes == nil {
			return nil, mergerequest.ErrUnavailable
		}
		info, err := s.readProject(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		uid := auth.FromContext(ctx).UserID()
		out := &mrOutput{}
		err = s.DB.Update(ctx, func(tx *store.Tx) error {
			m, err := mrByIID(tx, info.ID, in.IID)
			if err != nil {
				return err
			}
			changed, err := s.Notes.Subscribe(tx.Context(), s.noteable(info, m), uid, subscribed)
			if err != nil {
				return err
			}
			if !changed {
				return api.NotModified
			}
			out.Body, err = s.single(ctx, tx, s.record(info, m), uid)
			return err
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

type todoOutput struct {
	Body any
}

func (s *Service) markTodo(ctx context.Context, in *MRPath) (*todoOutput, error) {
	if s.Todos == nil {
		return nil, mergerequest.ErrUnavailable
	}
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := &todoOutput{}
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, in.IID)
		if err != nil {
			return err
		}
		out.Body, err = s.Todos.Mark(tx.Context(), target(m))
		if errors.Is(err, todos.ErrExists) {
			return api.NotModified
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxCommits bounds the commits listed for one merge request.
const maxCommits = 10000

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

// load reads one merge request (a copy, outside a transaction).
func (s *Service) load(ctx context.Context, project int64, iid int64) (*MR, error) {
	var m *MR
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		var err error
		m, err = mrByIID(tx, project, iid)
		return err
	})
	return m, err
}

// commits is GET .../commits: the source's commits not in the target,
// newest first (for a merged one, not in the target as it was merged).
func (s *Service) commits(ctx context.Context, in *MRPath) (*struct{ Body []commitSummary }, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	m, err := s.load(ctx, info.ID, in.IID)
	if err != nil {
		return nil, err
	}
	list, err := s.rangeCommits(ctx, m)
	if err != nil {
		return nil, err
	}
	out := make([]commitSummary, 0, len(list))
	for _, c := range list {
		out = append(out, commitSummary{ID: c.ID, ShortID: c.ShortID, Title: c.Title, AuthorName: c.AuthorName,
			AuthorEmail: c.AuthorEmail, CreatedAt: api.NewTime(time.Time(c.CreatedAt)), Message: c.Message})
	}
	return &struct{ Body []commitSummary }{Body: out}, nil
}

// rangeCommits are the merge request's commits, newest first.
func (s *Service) rangeCommits(ctx context.Context, m *MR) ([]repository.CommitView, error) {
	if err := s.Merges.Import(ctx, int64(m.ProjectID), int64(m.SourceProjectID), m.SHA); err != nil {
		return nil, err
	}
	return s.Merges.Commits(ctx, int64(m.ProjectID), s.baseOf(ctx, m), m.SHA, maxCommits)
}

// baseOf is the target revision a merge request is compared with: the
// target branch's head while open; otherwise its recorded head (for a
// merged one, the merge commit's first parent: the target as it was).
func (s *Service) baseOf(ctx context.Context, m *MR) string {
	if m.Open() {
		if sha, err := s.Merges.BranchHead(ctx, int64(m.ProjectID), m.TargetBranch); err == nil {
			return sha
		}
	}
	return m.TargetSHA
}

func (s *Service) changes(ctx context.Context, in *MRPath) (*mrOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out, err := s.render(ctx, info, in.IID)
	if err != nil {
		return nil, err
	}
	m, err := s.load(ctx, info.ID, in.IID)
	if err != nil {
		return nil, err
	}
	if err := s.Merges.Import(ctx, int64(m.ProjectID), int64(m.SourceProjectID), m.SHA); err != nil {
		return nil, err
	}
	diffs, err := s.Merges.Diffs(ctx, info.ID, s.baseOf(ctx, m), m.SHA)
	if err != nil {
		return nil, err
	}
	if diffs == nil {
		diffs = []repository.DiffView{}
	}
	out.Body.Changes = diffs
	return out, nil
}

// closingTexts are the texts whose closing pattern a merge request acts
// on: its title, description and commit messages.
func (s *Service) closingTexts(ctx context.Context, m *MR) []string {
	texts := []string{m.Title, m.Description}
	if cs, err := s.rangeCommits(ctx, m); err == nil {
		for _, c := range cs {
			texts = append(texts, c.Message)
		}
	}
	return texts
}

func (s *Service) closesIssues(ctx context.Context, in *MRPath) (*struct{ Body []issues.IssueView }, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	m, err := s.load(ctx, info.ID, in.IID)
	if err != nil {
		return nil, err
	}
	out := []issues.IssueView{}
	// GitLab closes issues only on a merge into the default branch.
	if s.Closer != nil && m.TargetBranch == info.DefaultBranch {
		list, err := s.Closer.ClosedBy(ctx, info, s.closingTexts(ctx, m)...)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return &struct{ Body []issues.IssueView }{Body: out}, nil
}

// NewRoutes registers the module's operations and maps its errors.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests", Register: func(a *api.API) {
		a.MapError(mergerequest.ErrNotFound, func(error) *api.Error { return api.RecordNotFound() })
		a.MapError(mergerequest.ErrNotMergeable, func(error) *api.Error { return api.MethodNotAllowed("Branch cannot be merged") })
		a.MapError(mergerequest.ErrUnavailable, func(error) *api.Error { return api.NotFound("") })
		mapMergeErrors(a)
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
		api.Register(a, api.Op{ID: "subscribe-merge-request", Method: http.MethodPost, Path: one + "/subscribe", Tags: tags,
			Summary: "Subscribe (304 when subscribed)", Access: api.SignedIn}, s.subscription(true))
		api.Register(a, api.Op{ID: "unsubscribe-merge-request", Method: http.MethodPost, Path: one + "/unsubscribe", Tags: tags,
			Summary: "Unsubscribe (304 when not subscribed)", Access: api.SignedIn}, s.subscription(false))
		api.Register(a, api.Op{ID: "todo-merge-request", Method: http.MethodPost, Path: one + "/todo", Tags: tags,
			Summary: "Add the merge request to the caller's todos (304 when there is one)", Access: api.SignedIn}, s.markTodo)
	}}
}
