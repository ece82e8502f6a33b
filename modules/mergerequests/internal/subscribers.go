package internal

import (
	"context"
	"errors"
	"strconv"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// Subscribers are the module's event handlers: pushes move merge requests
// (sha, merge status, the merge-when-pipeline intent), a pipeline's end
// merges what waits for it, every opened or updated merge request has its
// merge status computed in the background and CI asked for its merge
// request pipeline.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Only(events.Subscribe("mergerequests.on_push", s.onPush), func(ev repository.PushEvent) bool {
			return ev.ObjectKind == repository.BranchPush
		}),
		events.Subscribe("mergerequests.on_pipeline", s.onPipeline),
		events.Only(events.Subscribe("mergerequests.check", s.onChange), func(ev event.MergeRequestEvent) bool {
			return ev.MergeRequest.MergeStatus == StatusUnchecked
		}),
		events.Only(events.Subscribe("mergerequests.ci_pipeline", s.onOpenOrMoved), func(ev event.MergeRequestEvent) bool {
			return ev.Action == event.Open || ev.Action == event.Reopen || ev.Action == event.Update
		}),
	}
}

// onOpenOrMoved asks CI for the merge request pipeline of an opened
// merge request's source head (CI makes one only when the CI file asks
// for merge request pipelines, and once per commit: an update that did
// not move the source makes none).
func (s *Service) onOpenOrMoved(ctx context.Context, ev event.MergeRequestEvent) error {
	m := ev.MergeRequest
	if s.CI == nil || m.State != StateOpened {
		return nil
	}
	return s.CI.MergeRequestPipeline(auth.WithPrincipal(ctx, auth.System()), cicd.MergeRequestRef{
		ID: m.ID, IID: m.IID, ProjectID: m.TargetProjectID, SourceProjectID: m.SourceProjectID,
		SourceBranch: m.SourceBranch, TargetBranch: m.TargetBranch, SHA: m.SHA, Title: m.Title,
		Labels: m.Labels, Draft: m.WorkInProgress, AssigneeID: m.AssigneeID, UserID: ev.UserID})
}

func (s *Service) onChange(ctx context.Context, ev event.MergeRequestEvent) error {
	ctx = auth.WithPrincipal(ctx, auth.System())
	var m *MR
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		var err error
		m, err = mrs.Get(tx, ev.MergeRequest.ID)
		return err
	})
	if err != nil || !m.Open() || m.Deleted || m.MergeStatus != StatusUnchecked {
		return nil
	}
	s.check(ctx, m)
	return nil
}

// onPush updates the open merge requests whose source or target branch
// moved: a new source head resets the merge status and the intent to merge
// when the pipeline succeeds, and notes the commits added.
func (s *Service) onPush(ctx context.Context, ev repository.PushEvent) error {
	ctx = auth.WithPrincipal(ctx, auth.System())
	branch := ev.Ref[len("refs/heads/"):]
	if !ev.Deleted() {
		// An event older than the branch's head is stale: a later one
		// brings the head. Following it would move the merge requests
		// back to an older commit for a while (and note, as added, the
		// commits they already had).
		if head, err := s.Merges.BranchHead(ctx, ev.ProjectID, branch); err == nil && head != ev.After {
			return nil
		}
	}
	return s.DB.Update(ctx, func(tx *store.Tx) error {
		srcIDs, err := mrs.IDsBy(tx, "source", branchKey(ev.ProjectID, branch))
		if err != nil {
			return err
		}
		tgtIDs, err := mrs.IDsBy(tx, "target", branchKey(ev.ProjectID, branch))
		if err != nil {
			return err
		}
		seen := map[int64]bool{}
		for n, id := range append(srcIDs, tgtIDs...) {
			if seen[id] {
				continue
			}
			seen[id] = true
			m, err := mrs.Get(tx, id)
			if err != nil {
				return err
			}
			if m.State == StateLocked || ev.Deleted() {
				continue
			}
			isSource := n < len(srcIDs)
			if isSource && m.SHA == ev.After {
				continue // already followed (the merge's own read, a redelivery)
			}
			if !isSource && m.TargetSHA == ev.After {
				continue
			}
			info, err := s.Access.ResolveID(tx.Context(), m.ProjectID)
			if err != nil {
				continue
			}
			before := *m
			m.MergeStatus = StatusUnchecked
			var notes []string
			if isSource {
				m.SHA = ev.After
				if len(ev.Commits) > 0 || ev.TotalCommitsCount > 0 {
					count := ev.TotalCommitsCount
					if count == 0 {
						count = len(ev.Commits)
					}
					word := " commit"
					if count != 1 {
						word = " commits"
					}
					notes = append(notes, "added "+strconv.Itoa(count)+word)
				}
				if m.MergeWhenPipeline {
					m.MergeWhenPipeline, m.MergeUserID, m.MergeMessage = false, 0, ""
					notes = append(notes, "canceled the automatic merge: new commits were pushed")
				}
			} else {
				m.TargetSHA = ev.After
			}
			if isSource {
				// A target's move changes no field of the merge request
				// but its merge status (as in GitLab, updated_at stays).
				s.touch(m, before.UpdatedAt)
			}
			if err := saveMR(tx, before, m); err != nil {
				return err
			}
			for _, body := range notes {
				if err := s.system(tx, info, m, ev.UserID, body); err != nil {
					return err
				}
			}
			if err := s.publish(tx, info, m, ev.UserID, event.Update); err != nil {
				return err
			}
		}
		return nil
	})
}

// onPipeline: a pipeline's success merges the merge requests waiting for it (mergeApproved), a failure
// drops their intent.
func (s *Service) onPipeline(ctx context.Context, ev ci.PipelineEvent) error {
	var waiting []*MR
	err := s.DB.Update(ctx, func(tx *store.Tx) error {
		waiting = nil
		heads, err := mrs.AllBy(tx, "sha", store.IDString(ev.ProjectID)+"/"+ev.SHA)
		if err != nil {
			return err
		}
		for _, m := range heads {
			if m.MergeWhenPipeline && m.Open() {
				waiting = append(waiting, m)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range waiting {
		switch ev.Status {
		case "success":
			if err := s.mergeApproved(ctx, m); err != nil {
				return err // redelivered: the intent is dropped (or the merge made) next time
			}
		case "failed", "canceled":
			sys := auth.WithPrincipal(ctx, auth.System())
			info, err := s.Access.ResolveID(sys, m.ProjectID)
			if err != nil {
				continue
			}
			if err := s.DB.Update(sys, func(tx *store.Tx) error {
				return s.dropMWPS(tx, info, m.IID, m.SHA, m.MergeUserID, false, "canceled the automatic merge: the pipeline "+ev.Status)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeApproved carries out m's intent to merge when its pipeline
// succeeds with the Merge every merge is, as the user who set it
// (MergeInput.AutoMerge), if what would be merged is still what that user
// approved: the source branch must still be at the approved commit (a push
// whose event is behind the pipeline's counts) and the user must still
// exist and not be blocked. Merge then asks, as for the button, whether
// the user may merge into the target as it is now, with the user's access
// as it is now, and checks in its lock that the intent is unchanged (a
// new target branch drops it). Otherwise the intent is dropped with a
// system note and nothing is merged. An error means the event is to be
// handled again.
func (s *Service) mergeApproved(ctx context.Context, m *MR) error {
	sys := auth.WithPrincipal(ctx, auth.System())
	// drop drops the intent (uid's only, with uidsOnly) with a note; a
	// project that is gone has none to drop.
	drop := func(reason string, uidsOnly bool) error {
		info, err := s.Access.ResolveID(sys, m.ProjectID)
		if err != nil {
			return nil
		}
		return s.DB.Update(sys, func(tx *store.Tx) error {
			return s.dropMWPS(tx, info, m.IID, m.SHA, m.MergeUserID, uidsOnly, "canceled the automatic merge: "+reason)
		})
	}
	head, err := s.Merges.BranchHead(sys, m.SourceProjectID, m.SourceBranch)
	switch {
	case errors.Is(err, repository.ErrBranchNotFound):
		return drop("the source branch was removed", false)
	case err != nil:
		if _, rerr := s.Access.ResolveID(sys, m.ProjectID); rerr != nil {
			return nil // the project is gone, with its intents
		}
		return err
	case head != m.SHA:
		return drop("new commits were pushed", false)
	}
	notAllowed := "not allowed to merge into `" + m.TargetBranch + "`"
	u, err := s.Lookup.LookupUser(ctx, store.IDString(m.MergeUserID))
	if errors.Is(err, auth.ErrUserNotFound) {
		return drop(notAllowed, false)
	}
	if err != nil {
		return err
	}
	p, err := auth.ForUser(u)
	if err != nil {
		return drop(notAllowed, false) // blocked
	}
	sha := m.SHA
	_, err = s.Merge(auth.WithPrincipal(ctx, p), mergerequest.Ref{Project: store.IDString(m.ProjectID), IID: mergerequest.IID(m.IID)},
		mergerequest.MergeInput{SHA: &sha, AutoMerge: true})
	switch {
	case err == nil, errors.Is(err, mergerequest.ErrAutoMergeCanceled):
		return nil
	case errors.Is(err, mergerequest.ErrMergeNotAllowed), errors.Is(err, projects.ErrForbidden):
		// Only the user's intent for sha: one set again meanwhile (by
		// someone who may) stays.
		return drop(notAllowed, true)
	case errors.Is(err, mergerequest.ErrSHAMismatch):
		return drop("new commits were pushed", false)
	}
	s.log.Info("merge when pipeline succeeds failed", zap.Int64("merge_request", m.ID), zap.Error(err))
	return drop("the merge failed", false)
}
