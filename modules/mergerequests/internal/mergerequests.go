package internal

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// The service's commands and queries but the merge (merge.go): the
// lists, one merge request and what it holds, create, update, close,
// reopen, delete, subscriptions and todos.

func stateMatches(state mergerequest.State, flag byte) bool {
	switch state {
	case "":
		return true
	case mergerequest.Opened:
		return flag == flagOpen
	case mergerequest.Closed:
		return flag == flagClosed
	case mergerequest.Merged:
		return flag == flagMerged
	}
	return false
}

// List implements mergerequest.Service. With a transaction in ctx it reads
// in that one (the HTTP adapter renders the page in the same read). The
// filters are answered from the indexes (listfilter.go).
func (s *Service) List(ctx context.Context, project string, q mergerequest.ListQuery) ([]mergerequest.MergeRequest, int, error) {
	bucket := byCreated
	if q.OrderBy == mergerequest.ByUpdated {
		bucket = byUpdated
	}
	desc := !q.Ascending
	f := filterOf(q)
	var out []mergerequest.MergeRequest
	total := 0
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		info, err := s.readProject(tx.Context(), project)
		if err != nil {
			return err
		}
		var page []*MR
		total = 0
		switch {
		case len(q.IIDs) > 0:
			// By iid: the index, then the same order as a walk.
			var all []*MR
			keep, err := s.keeper(tx, info.ID, f)
			if err != nil {
				return err
			}
			for _, iid := range q.IIDs {
				m, err := mrByIID(tx, info.ID, int64(iid))
				if errors.Is(err, mergerequest.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if !stateMatches(q.State, flagOf(m)) || !keep(m) || slices.ContainsFunc(all, func(o *MR) bool { return o.ID == m.ID }) {
					continue
				}
				all = append(all, m)
			}
			sortByTime(all, string(bucket) == string(byUpdated), desc)
			total = len(all)
			page = store.Window(all, q.Offset, q.Limit)
		case !f.none():
			if page, total, err = s.filtered(tx, info.ID, bucket, desc, q.State, f, q.Offset, q.Limit); err != nil {
				return err
			}
		default:
			var ids []int64
			store.WalkTimeKeys(tx, bucket, info.ID, desc, func(id int64, flag byte) bool {
				if !stateMatches(q.State, flag) {
					return true
				}
				if total >= q.Offset && len(ids) < q.Limit {
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
		out = s.records(info, page)
		return nil
	})
	return out, total, err
}

func invalidText(v string) bool { return target.InvalidText(v) }

func invalid(field, text string) error { return &mergerequest.InvalidError{Field: field, Text: text} }

func checkBranchName(field, b string) error {
	if invalidText(b) || strings.ContainsAny(b, " ~^:?*[\\\x00") || len(b) > 255 {
		return invalid(field, "is invalid")
	}
	return nil
}

// assignee keeps an assignee who may read the target's merge requests
// (others are dropped, as GitLab filters them); 0 clears.
func (s *Service) assignee(ctx context.Context, project int64, id int64) int64 {
	if id <= 0 {
		return 0
	}
	u, err := s.Lookup.LookupUser(ctx, store.IDString(id))
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

// milestone checks that a milestone is the project's or one of its groups'
// (0 clears; a foreign or unknown one is ignored).
func (s *Service) milestone(ctx context.Context, project, id int64) (int64, bool) {
	if id <= 0 {
		return 0, true
	}
	if s.Milestones == nil {
		return 0, false
	}
	if _, err := s.Milestones.Assignable(ctx, project, id); err != nil {
		return 0, false
	}
	return id, true
}

// exists is ErrExists when another open merge request than m has m's
// branches.
func exists(tx *store.Tx, m *MR) error {
	same, err := mrs.AllBy(tx, "source", branchKey(m.SourceProjectID, m.SourceBranch))
	if err != nil {
		return err
	}
	for _, o := range same {
		if o.ID != m.ID && o.ProjectID == m.ProjectID && o.TargetBranch == m.TargetBranch {
			return &mergerequest.ExistsError{Title: o.Title}
		}
	}
	return nil
}

// Create implements mergerequest.Service.
func (s *Service) Create(ctx context.Context, project string, b mergerequest.Fields) (mergerequest.MergeRequest, error) {
	var missing []string
	for name, v := range map[string]*string{"source_branch": b.SourceBranch, "target_branch": b.TargetBranch, "title": b.Title} {
		if v == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return mergerequest.MergeRequest{}, target.MissingParams(missing...)
	}
	source, err := s.writeProject(ctx, project)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	targetInfo := source
	if b.TargetProjectID != nil && *b.TargetProjectID != source.ID {
		// A merge request from a fork into its upstream (GitLab 9.x: the
		// project the source was forked from); merging is the upstream's
		// developers' call.
		if *b.TargetProjectID != source.ForkedFromID {
			return mergerequest.MergeRequest{}, mergerequest.ErrNotUpstream
		}
		if targetInfo, err = s.readProjectID(ctx, *b.TargetProjectID); err != nil {
			return mergerequest.MergeRequest{}, err
		}
	}
	title := strings.TrimSpace(*b.Title)
	if err := target.CheckTitle(title); err != nil {
		return mergerequest.MergeRequest{}, err
	}
	srcBranch, tgtBranch := strings.TrimSpace(*b.SourceBranch), strings.TrimSpace(*b.TargetBranch)
	if err := checkBranchName("source_branch", srcBranch); err != nil {
		return mergerequest.MergeRequest{}, err
	}
	if err := checkBranchName("target_branch", tgtBranch); err != nil {
		return mergerequest.MergeRequest{}, err
	}
	if srcBranch == "" || tgtBranch == "" {
		return mergerequest.MergeRequest{}, mergerequest.ErrBranchesRequired
	}
	if source.ID == targetInfo.ID && srcBranch == tgtBranch {
		return mergerequest.MergeRequest{}, mergerequest.ErrSameBranch
	}
	m := &MR{ProjectID: targetInfo.ID, SourceProjectID: source.ID, SourceBranch: srcBranch,
		TargetBranch: tgtBranch, Title: title, State: StateOpened, AuthorID: auth.FromContext(ctx).UserID(),
		MergeStatus: StatusUnchecked}
	if b.Description != nil {
		if err := target.CheckDescription(*b.Description); err != nil {
			return mergerequest.MergeRequest{}, err
		}
		m.Description = *b.Description
	}
	srcSHA, err := s.Merges.BranchHead(ctx, source.ID, srcBranch)
	if err != nil {
		return mergerequest.MergeRequest{}, &mergerequest.BranchNotFoundError{Source: true, Branch: srcBranch}
	}
	tgtSHA, err := s.Merges.BranchHead(ctx, targetInfo.ID, tgtBranch)
	if err != nil {
		return mergerequest.MergeRequest{}, &mergerequest.BranchNotFoundError{Branch: tgtBranch}
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
		labelNames = *b.Labels
	}
	uid := m.AuthorID
	var out mergerequest.MergeRequest
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		if err := exists(tx, m); err != nil {
			return err
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
			if err := s.Labels.RecordLabelChange(tx.Context(), targetInfo.ID, mergerequest.NoteableType, m.ID, uid, nil, m.LabelIDs); err != nil {
				return err
			}
		}
		if s.Collab != nil && m.Description != "" {
			if err := s.Collab.Mentioned(tx.Context(), s.noteable(targetInfo, m), uid, m.Description); err != nil {
				return err
			}
		}
		if err := s.assignedTodo(tx, m, uid); err != nil {
			return err
		}
		out = s.record(targetInfo, m)
		return nil
	})
	return out, err
}

// readProjectID resolves a project by id for reading merge requests.
func (s *Service) readProjectID(ctx context.Context, id int64) (projects.ProjectInfo, error) {
	return s.Access.RequireID(ctx, id, projects.ReadMergeRequests)
}

func (s *Service) assignedTodo(tx *store.Tx, m *MR, uid int64) error {
	if s.Collab == nil || m.AssigneeID == 0 {
		return nil
	}
	return target.AssignedTodos(tx.Context(), s.Collab, targetOf(m), m.Title, uid, []int64{m.AssigneeID})
}

// Close implements mergerequest.Service.
func (s *Service) Close(ctx context.Context, ref mergerequest.Ref) (mergerequest.MergeRequest, error) {
	return s.Update(ctx, ref, mergerequest.Fields{}, mergerequest.Close)
}

// Reopen implements mergerequest.Service.
func (s *Service) Reopen(ctx context.Context, ref mergerequest.Ref) (mergerequest.MergeRequest, error) {
	return s.Update(ctx, ref, mergerequest.Fields{}, mergerequest.Reopen)
}

// Update implements mergerequest.Service.
func (s *Service) Update(ctx context.Context, ref mergerequest.Ref, b mergerequest.Fields, stateEvent mergerequest.StateEvent) (mergerequest.MergeRequest, error) {
	if b.TargetBranch == nil && b.Title == nil && b.Description == nil && b.AssigneeID == nil && stateEvent == "" &&
		b.Labels == nil && b.MilestoneID == nil && b.RemoveSourceBranch == nil {
		return mergerequest.MergeRequest{}, target.NothingGiven(
			"assignee_id", "description", "labels", "milestone_id", "remove_source_branch", "state_event", "target_branch", "title")
	}
	if stateEvent != "" && !stateEvent.Valid() {
		return mergerequest.MergeRequest{}, invalid("state_event", "does not have a valid value")
	}
	info, err := s.writeProject(ctx, ref.Project)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	title, description, err := target.CheckText(b.Title, b.Description)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	var tgt string
	var tgtSHA string
	if b.TargetBranch != nil {
		tgt = strings.TrimSpace(*b.TargetBranch)
		if err := checkBranchName("target_branch", tgt); err != nil {
			return mergerequest.MergeRequest{}, err
		}
		if tgtSHA, err = s.Merges.BranchHead(ctx, info.ID, tgt); err != nil {
			return mergerequest.MergeRequest{}, &mergerequest.BranchNotFoundError{Branch: tgt}
		}
	}
	var assignee int64
	if b.AssigneeID != nil {
		assignee = s.assignee(ctx, info.ID, *b.AssigneeID)
	}
	uid := auth.FromContext(ctx).UserID()
	var out mergerequest.MergeRequest
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, int64(ref.IID))
		if err != nil {
			return err
		}
		before := *m
		var notesToWrite []string
		changed := false
		if m.State == StateMerged && (b.TargetBranch != nil || stateEvent != "") {
			// A merged merge request keeps its branches and state.
			return mergerequest.ErrNotChangeable
		}
		if b.Title != nil && title != m.Title {
			notesToWrite = append(notesToWrite, target.TitleNote(m.Title, title))
			m.Title, changed = title, true
		}
		if b.Description != nil && description != m.Description {
			notesToWrite = append(notesToWrite, target.DescriptionNote)
			m.Description, changed = description, true
		}
		if b.TargetBranch != nil && tgt != m.TargetBranch {
			if m.SourceProjectID == m.ProjectID && tgt == m.SourceBranch {
				return mergerequest.ErrSameBranch
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
				ref := ""
				if ms != 0 {
					ref = "%" + store.IDString(ms)
					if mv, err := s.Milestones.Assignable(tx.Context(), info.ID, ms); err == nil {
						ref = target.MilestoneRef(mv.Title)
					}
				}
				body := target.MilestoneNote(ref)
				notesToWrite = append(notesToWrite, body)
				m.MilestoneID, changed = ms, true
			}
		}
		if b.Labels != nil && s.Labels != nil {
			ids, err := s.Labels.Ensure(tx.Context(), info.ID, *b.Labels)
			if err != nil {
				return err
			}
			if !target.SameLabels(ids, m.LabelIDs) {
				notesToWrite = append(notesToWrite, target.LabelNote(m.LabelIDs, ids))
				if err := s.Labels.RecordLabelChange(tx.Context(), info.ID, mergerequest.NoteableType, m.ID, uid, m.LabelIDs, ids); err != nil {
					return err
				}
				m.LabelIDs, changed = ids, true
			}
		}
		action := event.Update
		switch {
		case stateEvent == mergerequest.Close && m.Open():
			m.State, action = StateClosed, event.Close
			m.MergeWhenPipeline = false
		case stateEvent == mergerequest.Reopen && m.State == StateClosed:
			m.State, action = StateReopened, event.Reopen
			m.MergeStatus = StatusUnchecked
			if sha, err := s.Merges.BranchHead(tx.Context(), m.SourceProjectID, m.SourceBranch); err == nil {
				m.SHA = sha
			}
		}
		out = s.record(info, m)
		if !changed && action == event.Update {
			return nil
		}
		if action == event.Reopen {
			// Only one open merge request per pair of branches.
			if err := exists(tx, m); err != nil {
				return err
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
		if b.Description != nil && description != before.Description && s.Collab != nil && description != "" {
			if err := s.Collab.Mentioned(tx.Context(), s.noteable(info, m), uid, description); err != nil {
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
			if s.Collab != nil {
				if err := s.Collab.TodosDone(tx.Context(), targetOf(m), uid); err != nil {
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
		out = s.record(info, m)
		return nil
	})
	return out, err
}

// Delete implements mergerequest.Service: the record stays (its iid is
// never reused), hidden from every read; its notes, todos and label events
// go.
func (s *Service) Delete(ctx context.Context, ref mergerequest.Ref) error {
	info, err := s.readProject(ctx, ref.Project)
	if err != nil {
		return err
	}
	return s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, int64(ref.IID))
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
		if s.Collab != nil {
			if err := s.Collab.Remove(tx.Context(), targetOf(m)); err != nil {
				return err
			}
		}
		if s.Labels != nil {
			if err := s.Labels.RemoveLabelEvents(tx.Context(), mergerequest.NoteableType, m.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// maxCommits bounds the commits listed for one merge request.
const maxCommits = 10000

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

// loadRef resolves ref's project for reading and loads the merge request.
func (s *Service) loadRef(ctx context.Context, ref mergerequest.Ref) (projects.ProjectInfo, *MR, error) {
	info, err := s.readProject(ctx, ref.Project)
	if err != nil {
		return info, nil, err
	}
	m, err := s.load(ctx, info.ID, int64(ref.IID))
	return info, m, err
}

// Commits implements mergerequest.Service.
func (s *Service) Commits(ctx context.Context, ref mergerequest.Ref) ([]gitread.Commit, error) {
	_, m, err := s.loadRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.rangeCommits(ctx, m)
}

// rangeCommits are the merge request's commits, newest first.
func (s *Service) rangeCommits(ctx context.Context, m *MR) ([]gitread.Commit, error) {
	if err := s.Merges.Import(ctx, m.ProjectID, m.SourceProjectID, m.SHA); err != nil {
		return nil, err
	}
	return s.Merges.Commits(ctx, m.ProjectID, s.baseOf(ctx, m), m.SHA, maxCommits)
}

// baseOf is the target revision a merge request is compared with: the
// target branch's head while open; otherwise its recorded head (for a
// merged one, the merge commit's first parent: the target as it was).
func (s *Service) baseOf(ctx context.Context, m *MR) string {
	if m.Open() {
		if sha, err := s.Merges.BranchHead(ctx, m.ProjectID, m.TargetBranch); err == nil {
			return sha
		}
	}
	return m.TargetSHA
}

// Changes implements mergerequest.Service.
func (s *Service) Changes(ctx context.Context, ref mergerequest.Ref) (mergerequest.MergeRequest, []repository.DiffView, error) {
	info, m, err := s.loadRef(ctx, ref)
	if err != nil {
		return mergerequest.MergeRequest{}, nil, err
	}
	if err := s.Merges.Import(ctx, m.ProjectID, m.SourceProjectID, m.SHA); err != nil {
		return mergerequest.MergeRequest{}, nil, err
	}
	// Kept: the diff of two commits never changes (diffcache.go).
	diffs, err := s.diffsKept(ctx, info.ID, s.baseOf(ctx, m), m.SHA)
	if err != nil {
		return mergerequest.MergeRequest{}, nil, err
	}
	if diffs == nil {
		diffs = []repository.DiffView{}
	}
	return s.record(info, m), diffs, nil
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

// ClosesIssues implements mergerequest.Service.
func (s *Service) ClosesIssues(ctx context.Context, ref mergerequest.Ref) ([]any, error) {
	info, m, err := s.loadRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := []any{}
	// GitLab closes issues only on a merge into the default branch.
	if s.Closer != nil && m.TargetBranch == info.DefaultBranch {
		list, err := s.Closer.ClosedBy(ctx, info, s.closingTexts(ctx, m)...)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			out = append(out, c.View)
		}
	}
	return out, nil
}
