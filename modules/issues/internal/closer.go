package internal

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	collabevent "github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// Subscribers are the module's event handlers.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Only(events.Subscribe("issues.close_on_push", s.onPush), func(ev repository.PushEvent) bool {
			return ev.ObjectKind == repository.BranchPush && !ev.Deleted() && len(ev.Commits) > 0
		}),
		// A merge request merged into the default branch closes what its
		// texts name; the merge requests module, above this one, publishes
		// the event through the collab contract.
		events.Subscribe("issues.close_on_merge", s.onMerged),
		// Not in the bus's transaction: a project's issues are removed a
		// step at a time (onProjectDeleted).
		events.Only(events.Subscribe("issues.project_deleted", s.onProjectDeleted), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
	}
}

// refProject resolves the project of a reference as the caller in ctx sees
// it: "" is base itself, a bare name a project of base's namespace, a path
// any project.
func (s *Service) refProject(ctx context.Context, base projects.ProjectInfo, ref IssueRef) (projects.ProjectInfo, error) {
	switch {
	case ref.Project == "" || ref.Project == base.PathWithNamespace:
		return base, nil
	case !strings.Contains(ref.Project, "/"):
		ns := base.PathWithNamespace[:max(strings.LastIndex(base.PathWithNamespace, "/"), 0)]
		return s.access.Resolve(ctx, ns+"/"+ref.Project)
	}
	return s.access.Resolve(ctx, ref.Project)
}

// onMerged closes the issues a merged merge request's texts name, as its
// merger may; the key makes a redelivery close and note nothing twice.
func (s *Service) onMerged(ctx context.Context, ev collabevent.Merged) error {
	return s.CloseReferenced(ctx, ev.ProjectID, ev.UserID, ev.Key, ev.Via, ev.MentionVia, ev.Texts...)
}

// closedBy is target.Closer's (Seams.ClosedBy): the open issues texts
// would close, relative to project, among those the caller in ctx may
// see, and how a text of project names each ("#1", "group/p#3").
func (s *Service) closedBy(ctx context.Context, project projects.ProjectInfo, texts ...string) ([]issue.Issue, []string, error) {
	uid := auth.FromContext(ctx).UserID()
	type hit struct {
		info projects.ProjectInfo
		iid  int64
	}
	var hits []hit
	seen := map[string]bool{}
	for _, t := range texts {
		for _, ref := range ClosingRefs(t) {
			info, err := s.refProject(ctx, project, ref)
			if err != nil || !info.Features.IssuesEnabled {
				continue
			}
			key := store.IDString(info.ID) + "#" + store.IDString(ref.IID)
			if !seen[key] {
				seen[key] = true
				hits = append(hits, hit{info, ref.IID})
			}
		}
	}
	out := []issue.Issue{}
	var refs []string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, h := range hits {
			i, err := issueByIID(tx, h.info, h.iid, uid)
			if errors.Is(err, ErrIssueNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if i.Open() {
				out = append(out, s.record(h.info, i))
				ref := "#" + store.IDString(i.IID)
				if h.info.ID != project.ID {
					ref = h.info.PathWithNamespace + ref
				}
				refs = append(refs, ref)
			}
		}
		return nil
	})
	return out, refs, err
}

// CloseReferenced closes the issues texts name (relative to project
// projectID) as user userID would, with the system note "closed via
// <via>"; key identifies the cause (a commit sha, a merge request), so a
// second call with the same key closes and notes nothing. mentionVia, when
// set, notes "mentioned in <mentionVia>" on the issues texts only
// reference. Issues the user may not update are left alone.
func (s *Service) CloseReferenced(ctx context.Context, projectID, userID int64, key, via, mentionVia string, texts ...string) error {
	u, err := s.lookup.LookupUser(ctx, store.IDString(userID))
	if err != nil {
		return nil // the user is gone: nobody to act as
	}
	p, err := auth.ForUser(u)
	if err != nil {
		return nil // blocked
	}
	uctx := auth.WithPrincipal(ctx, p)
	base, err := s.access.ResolveID(uctx, projectID)
	if err != nil {
		return nil
	}
	type target struct {
		info  projects.ProjectInfo
		iid   int64
		close bool
	}
	var targets []target
	seen := map[string]bool{}
	add := func(ref IssueRef, close bool) {
		info, err := s.refProject(uctx, base, ref)
		if err != nil || !info.Features.IssuesEnabled || info.Archived {
			return
		}
		k := store.IDString(info.ID) + "#" + store.IDString(ref.IID)
		if !seen[k] {
			seen[k] = true
			targets = append(targets, target{info, ref.IID, close})
		}
	}
	for _, t := range texts {
		for _, ref := range ClosingRefs(t) {
			add(ref, true)
		}
	}
	if mentionVia != "" {
		for _, t := range texts {
			for _, ref := range MentionedRefs(t) {
				add(ref, false)
			}
		}
	}
	if len(targets) == 0 {
		return nil
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		for _, t := range targets {
			i, err := issueByIID(tx, t.info, t.iid, userID)
			if errors.Is(err, ErrIssueNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			// A reference from another project names it ("group/p@sha").
			from := ""
			if t.info.ID != base.ID {
				from = base.PathWithNamespace
			}
			if t.close {
				if slices.Contains(i.ClosedBy, key) || !mayUpdate(t.info, i, userID) {
					continue
				}
				before := *i
				i.ClosedBy = append(i.ClosedBy, key)
				wasOpen := i.Open()
				if wasOpen {
					i.State = StateClosed
					i.UpdatedAt = s.now()
				}
				if err := updateIssue(tx, before, i); err != nil {
					return err
				}
				if wasOpen {
					if err := s.stateChanged(tx, t.info, i, userID, qualify(via, from)); err != nil {
						return err
					}
				}
				continue
			}
			if slices.Contains(i.MentionedIn, key) {
				continue
			}
			before := *i
			i.MentionedIn = append(i.MentionedIn, key)
			if err := updateIssue(tx, before, i); err != nil {
				return err
			}
			if s.collab != nil {
				if err := s.collab.System(tx.Context(), s.noteable(t.info, i), userID, "mentioned in "+qualify(mentionVia, from)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// qualify turns "commit <sha>" into "commit group/p@<sha>" for a reference
// from another project.
func qualify(via, from string) string {
	if from == "" {
		return via
	}
	kind, ref, ok := strings.Cut(via, " ")
	if !ok {
		return via
	}
	return kind + " " + from + "@" + ref
}

// onPush closes the issues that the commits pushed to a project's default
// branch say they close ("Fixes #12"), as the pusher, with "closed via
// commit <sha>", and notes "mentioned in commit <short sha>" on the issues
// they only reference. Each commit is its own key: a redelivered push, or
// the same commit pushed again to another branch that becomes default,
// changes nothing.
func (s *Service) onPush(ctx context.Context, ev repository.PushEvent) error {
	sys := auth.WithPrincipal(ctx, auth.System())
	info, err := s.access.ResolveID(sys, ev.ProjectID)
	if err != nil {
		return nil // the project is gone
	}
	branch, ok := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !ok || branch != info.DefaultBranch {
		return nil
	}
	commits := ev.Commits
	if ev.TotalCommitsCount > len(commits) {
		// The event lists the newest 20; the others are read from the
		// repository.
		if more, err := s.olderCommits(ctx, ev); err != nil {
			s.log.Warn("issues: reading the pushed commits failed; only the newest 20 close issues", zap.Error(err))
		} else {
			commits = append(more, commits...)
		}
	}
	for _, c := range commits {
		short := c.ID
		if len(short) > 8 {
			short = short[:8]
		}
		if err := s.CloseReferenced(ctx, ev.ProjectID, ev.UserID, "commit:"+c.ID, "commit "+c.ID, "commit "+short, c.Message); err != nil {
			s.log.Warn("closing issues by a pushed commit failed", zap.String("sha", c.ID), zap.Error(err))
			return err
		}
	}
	return nil
}

// onProjectDeleted removes a deleted project's issues (with their notes and
// todos), labels and milestones, removeStep rows per transaction: a
// project's thousands of issues removed in one kept every other writer of
// the server waiting for seconds. The outbox calls it again until it
// returns nil, and each call goes on from what is left.
func (s *Service) onProjectDeleted(ctx context.Context, ev projects.ProjectEvent) error {
	pid := store.IDString(ev.ProjectID)
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := issues.FirstIDsBy(tx, "project", pid, removeStep)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			i, err := issues.Get(tx, id)
			if err != nil {
				return false, err
			}
			if err := s.removeIssue(tx, i); err != nil {
				return false, err
			}
		}
		if len(ids) > 0 {
			return false, nil
		}
		for _, t := range []interface {
			FirstIDsBy(*store.Tx, string, string, int) ([]int64, error)
			Delete(*store.Tx, int64) error
		}{labels, milestones} {
			ids, err := t.FirstIDsBy(tx, "project", pid, removeStep)
			if err != nil {
				return false, err
			}
			for _, id := range ids {
				if err := t.Delete(tx, id); err != nil {
					return false, err
				}
			}
			if len(ids) > 0 {
				return false, nil
			}
		}
		for _, k := range []byte{countOpen, countClosed, countConfidential} {
			if err := counts.Delete(tx, countKey(ev.ProjectID, k)); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// removeStep is how many issues (labels, milestones) one transaction of
// onProjectDeleted removes.
const removeStep = 100

// maxPushWalk bounds the commits of one push read for closing references.
const maxPushWalk = 1000

// olderCommits reads the commits of a push that its event does not list
// (it lists the newest 20), oldest first: a walk back from the oldest
// listed commit's parents that stops at the push's old value, bounded by
// the push's commit count and maxPushWalk.
func (s *Service) olderCommits(ctx context.Context, ev repository.PushEvent) ([]repository.PushCommit, error) {
	if len(ev.Commits) == 0 {
		return nil, nil
	}
	want := min(ev.TotalCommitsCount-len(ev.Commits), maxPushWalk)
	if want <= 0 {
		return nil, nil
	}
	// The push's own work: read as the server, whoever pushed.
	ctx = auth.WithPrincipal(ctx, auth.System())
	oldest, err := s.repos.Commit(ctx, ev.ProjectID, ev.Commits[0].ID)
	if err != nil {
		return nil, err
	}
	q := gitread.LogQuery{From: oldest.ParentIDs, Stop: []string{ev.Before}, Limit: want}
	for _, c := range ev.Commits {
		q.Stop = append(q.Stop, c.ID)
	}
	var out []repository.PushCommit
	err = s.repos.Log(ctx, ev.ProjectID, q, func(c gitread.Commit) bool {
		out = append(out, repository.PushCommit{ID: c.ID, Message: c.Message})
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}
