package internal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	collabevent "github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

var _ mergerequest.Service = (*Service)(nil)

// pipelineActive says whether a pipeline status is still running.
func pipelineActive(status string) bool {
	switch status {
	case "created", "pending", "running":
		return true
	}
	return false
}

// A merge is policy, then mechanism. The policy is one question, "may
// the caller merge this merge request into its target now?", asked in one
// read (decide): the project resolved for the caller once, the merge
// request, the target branch's protection, the threads. The mechanism
// (lock, merge, land) then acts on the answer; the lock's transaction
// checks only what a concurrent write may have changed since (the state,
// the target branch). A merge from the button reads the source branch's
// head between the two, outside any transaction; an automatic merge knows
// the commit it merges (the approved one), so it asks the question in the
// lock's own transaction, after checking that the intent still stands.

// decision is the answer to the merge's question: the project as the
// caller sees it and the merge request as it was read.
type decision struct {
	info projects.ProjectInfo
	m    *MR
}

// decide asks the merge's question in one read transaction: the caller
// reads the project's merge requests, the merge request is there, the
// caller may merge into its target branch (its protection, their access,
// not an archived project: ErrMergeNotAllowed), it is open (ErrNotOpen)
// and it may be merged as it is (not work in progress, threads resolved
// where the project requires it: ErrNotMergeable). The checks come in
// this order, as GitLab answers them; first, when given, runs on the merge
// request before them. With a transaction in ctx it reads in that one.
func (s *Service) decide(ctx context.Context, ref mergerequest.Ref, first func(*MR) error) (decision, error) {
	var d decision
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		ctx := tx.Context()
		info, err := s.readProject(ctx, ref.Project)
		if err != nil {
			return err
		}
		m, err := mrByIID(tx, info.ID, int64(ref.IID))
		if err != nil {
			return err
		}
		if first != nil {
			if err := first(m); err != nil {
				return err
			}
		}
		if ok, err := s.Merges.MayMerge(ctx, info.ID, m.TargetBranch); err != nil {
			return err
		} else if !ok || info.Archived {
			return mergerequest.ErrMergeNotAllowed
		}
		if !m.Open() {
			return mergerequest.ErrNotOpen
		}
		if workInProgress(m.Title) {
			return mergerequest.ErrNotMergeable
		}
		if err := s.unresolvedThreads(ctx, info, m); err != nil {
			return err
		}
		d = decision{info: info, m: m}
		return nil
	})
	return d, err
}

// head is the source branch's head a merge acts on: in.SHA, when given,
// must be it.
func (s *Service) head(ctx context.Context, m *MR, in mergerequest.MergeInput) (string, error) {
	head, err := s.Merges.BranchHead(ctx, m.SourceProjectID, m.SourceBranch)
	if err != nil {
		return "", mergerequest.ErrNotMergeable
	}
	if in.SHA != nil && *in.SHA != head {
		return "", &mergerequest.SHAMismatchError{Head: head}
	}
	// A push the subscriber has not seen yet is followed now: head is
	// merged, not the merge request's older SHA.
	return head, nil
}

// Merge implements mergerequest.Service.
func (s *Service) Merge(ctx context.Context, ref mergerequest.Ref, in mergerequest.MergeInput) (mergerequest.MergeRequest, error) {
	uid := auth.FromContext(ctx).UserID()
	if in.AutoMerge {
		if in.SHA == nil {
			// An automatic merge merges the commit that was approved.
			return mergerequest.MergeRequest{}, mergerequest.ErrAutoMergeCanceled
		}
		d, m, err := s.merge(ctx, ref, nil, uid, *in.SHA, "", false)
		if err != nil {
			return mergerequest.MergeRequest{}, err
		}
		return s.record(d.info, m), nil
	}
	d, err := s.decide(ctx, ref, nil)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	head, err := s.head(ctx, d.m, in)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	if in.WhenPipelineSucceeds {
		r, err := s.setAutoMerge(ctx, d, uid, head, in)
		if !errors.Is(err, mergerequest.ErrNothingToWaitFor) {
			return r, err
		}
	}
	if err := s.pipelineSucceeded(ctx, d, head); err != nil {
		return mergerequest.MergeRequest{}, err
	}
	msg := ""
	if in.Message != nil {
		msg = *in.Message
	}
	removeSource := d.m.ForceRemoveSource
	if in.RemoveSourceBranch != nil {
		removeSource = *in.RemoveSourceBranch
	}
	d, m, err := s.merge(ctx, ref, &d, uid, head, msg, removeSource)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	return s.record(d.info, m), nil
}

// pipelineSucceeded refuses a merge made now (ErrPipelineMustSucceed)
// when the project merges only once the pipeline succeeds and the head's
// newest pipeline has not: it runs, failed or was canceled. As in GitLab,
// a head without any pipeline may be merged. Merge when pipeline succeeds
// skips the check while there is a pipeline to wait for, but not when it
// falls back to merging at once: a failed pipeline is nothing to wait for,
// and must not turn the button into a way round the rule. The pipeline is
// read outside the merge's transaction; a retry that starts between the
// two is the same race as a push during the merge, which the SHA guards.
func (s *Service) pipelineSucceeded(ctx context.Context, d decision, head string) error {
	if !d.info.OnlyAllowMergeIfPipelineSucceeds || s.CI == nil {
		return nil
	}
	p, ok, err := s.CI.Latest(ctx, d.m.SourceProjectID, head)
	if err != nil || !ok {
		return err
	}
	if p.Status == "success" || p.Status == "skipped" {
		return nil
	}
	return mergerequest.ErrPipelineMustSucceed
}

// SetAutoMerge implements mergerequest.Service.
func (s *Service) SetAutoMerge(ctx context.Context, ref mergerequest.Ref, in mergerequest.MergeInput) (mergerequest.MergeRequest, error) {
	d, err := s.decide(ctx, ref, nil)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	head, err := s.head(ctx, d.m, in)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	return s.setAutoMerge(ctx, d, auth.FromContext(ctx).UserID(), head, in)
}

// setAutoMerge records the intent to merge sha when its pipeline
// succeeds, if there is one to wait for: CI's newest pipeline of sha still
// runs or, when sha has none, CI says one is on its way. Otherwise
// ErrNothingToWaitFor. CI is asked, never a copy of its pipelines: a copy
// would come through the outbox, after the push, and "no copy yet" is not
// "no pipeline". Coming reads the CI file, so it is asked
// before the write; the pipeline is then read again in the transaction
// that records the intent, so a pipeline that ends after it finds the
// intent, and one that ended before it is seen ended.
func (s *Service) setAutoMerge(ctx context.Context, d decision, uid int64, sha string, in mergerequest.MergeInput) (mergerequest.MergeRequest, error) {
	coming := false
	if s.CI != nil {
		var err error
		if coming, err = s.CI.Coming(ctx, d.m.SourceProjectID, d.m.SourceBranch, sha); err != nil {
			return mergerequest.MergeRequest{}, err
		}
	}
	info := d.info
	var out mergerequest.MergeRequest
	err := s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, d.m.IID)
		if err != nil {
			return err
		}
		wait := false
		if s.CI != nil {
			p, ok, err := s.CI.Latest(tx.Context(), m.SourceProjectID, sha)
			if err != nil {
				return err
			}
			wait = (ok && pipelineActive(p.Status)) || (!ok && coming)
		}
		if !wait {
			return mergerequest.ErrNothingToWaitFor
		}
		before := *m
		m.MergeWhenPipeline, m.MergeUserID, m.SHA = true, uid, sha
		m.MergeMessage = ""
		if in.Message != nil {
			m.MergeMessage = *in.Message
		}
		if in.RemoveSourceBranch != nil {
			m.ShouldRemoveSource = *in.RemoveSourceBranch
		}
		s.touch(m, before.UpdatedAt)
		if err := saveMR(tx, before, m); err != nil {
			return err
		}
		out = s.record(info, m)
		if before.MergeWhenPipeline {
			return nil
		}
		return s.system(tx, info, m, uid, "enabled an automatic merge when the pipeline for "+sha[:8]+" succeeds")
	})
	return out, err
}

// CancelAutoMerge implements mergerequest.Service: the question (who may
// merge may cancel) and the merge request are read in one transaction,
// the intent dropped in another.
func (s *Service) CancelAutoMerge(ctx context.Context, ref mergerequest.Ref) (mergerequest.MergeRequest, error) {
	var info projects.ProjectInfo
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		var err error
		if info, err = s.readProject(tx.Context(), ref.Project); err != nil {
			return err
		}
		m, err := mrByIID(tx, info.ID, int64(ref.IID))
		if err != nil {
			return err
		}
		if ok, err := s.Merges.MayMerge(tx.Context(), info.ID, m.TargetBranch); err != nil {
			return err
		} else if !ok {
			return mergerequest.ErrMergeNotAllowed
		}
		if !m.Open() {
			return mergerequest.ErrNotChangeable
		}
		if !m.MergeWhenPipeline {
			return mergerequest.ErrNoAutoMerge
		}
		return nil
	})
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	uid := auth.FromContext(ctx).UserID()
	var out mergerequest.MergeRequest
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		if err := s.dropMWPS(tx, info, int64(ref.IID), "", uid, false, "canceled the automatic merge"); err != nil {
			return err
		}
		m, err := mrByIID(tx, info.ID, int64(ref.IID))
		if err != nil {
			return err
		}
		out = s.record(info, m)
		return nil
	})
	return out, err
}

// dropMWPS clears the intent with a system note by uid; with sha, only an
// intent to merge sha (a later one, set for a newer head, stays); with
// uidsOnly, only uid's intent (one set again by someone else stays).
func (s *Service) dropMWPS(tx *store.Tx, info projects.ProjectInfo, iid int64, sha string, uid int64, uidsOnly bool, note string) error {
	m, err := mrByIID(tx, info.ID, iid)
	if err != nil || !m.MergeWhenPipeline || (sha != "" && m.SHA != sha) || (uidsOnly && m.MergeUserID != uid) {
		return err
	}
	before := *m
	m.MergeWhenPipeline, m.MergeUserID, m.MergeMessage = false, 0, ""
	s.touch(m, before.UpdatedAt)
	if err := saveMR(tx, before, m); err != nil {
		return err
	}
	return s.system(tx, info, m, uid, note)
}

// defaultMessage is GitLab's merge commit message.
func (s *Service) defaultMessage(ctx context.Context, info projects.ProjectInfo, m *MR) string {
	parts := []string{"Merge branch '" + m.SourceBranch + "' into '" + m.TargetBranch + "'", m.Title}
	if s.Closer != nil && m.TargetBranch == info.DefaultBranch {
		sys := auth.WithPrincipal(ctx, auth.System())
		if list, err := s.Closer.ClosedBy(sys, info, s.closingTexts(ctx, m)...); err == nil && len(list) > 0 {
			parts = append(parts, "Closes "+issueRefs(list))
		}
	}
	parts = append(parts, "See merge request "+info.PathWithNamespace+"!"+store.IDString(m.IID))
	return strings.Join(parts, "\n\n")
}

// issueRefs is "#1, #2 and other/project#3".
func issueRefs(list []target.Closed) string {
	refs := make([]string, len(list))
	for i, c := range list {
		refs[i] = c.Ref
	}
	if len(refs) == 1 {
		return refs[0]
	}
	return strings.Join(refs[:len(refs)-1], ", ") + " and " + refs[len(refs)-1]
}

// merge is the mechanism of a merge of sha by the caller (uid): the
// merge request is locked while the commit is made, marked merged once it
// landed, with the system note, events, closed issues and, when asked, the
// source branch removed. It returns the decision it acted on and the
// merged merge request.
//
// asked is the decision of a merge from the button. Without one it is an
// automatic merge: the lock's transaction checks that the intent is still
// uid's, for sha (ErrAutoMergeCanceled), then asks the question (decide)
// in it, and merges with the recorded message and branch removal. Either
// way the lock's transaction checks what may have changed since the
// question was asked: the merge request is still open and not being
// merged (ErrNotOpen), its target is the one the caller was allowed to
// merge into (ErrTargetMoved).
func (s *Service) merge(ctx context.Context, ref mergerequest.Ref, asked *decision, uid int64, sha, msg string, removeSource bool) (decision, *MR, error) {
	var d decision
	var m *MR
	var prior string
	// Lock it: a second merge of the same merge request finds it locked
	// (ErrNotOpen), comments wait, pushes leave it alone.
	err := s.DB.Update(ctx, func(tx *store.Tx) error {
		var err error
		if asked != nil {
			d = *asked
		} else {
			d, err = s.decide(tx.Context(), ref, func(m *MR) error {
				if !m.Open() || !m.MergeWhenPipeline || m.MergeUserID != uid || m.SHA != sha {
					return mergerequest.ErrAutoMergeCanceled
				}
				return nil
			})
			if err != nil {
				return err
			}
			msg, removeSource = d.m.MergeMessage, d.m.ShouldRemoveSource
		}
		if m, err = mrByIID(tx, d.info.ID, d.m.IID); err != nil {
			return err
		}
		if m.State == StateLocked || !m.Open() {
			return mergerequest.ErrNotOpen
		}
		if m.TargetBranch != d.m.TargetBranch {
			// Retargeted since the caller was allowed: ask again.
			return mergerequest.ErrTargetMoved
		}
		before := *m
		prior = m.State
		m.State, m.SHA, m.PriorState, m.LockedByID, m.LockedNode = StateLocked, sha, m.State, uid, s.nodeName()
		return saveMR(tx, before, m)
	})
	if err != nil {
		return d, nil, err
	}
	info, iid := d.info, d.m.IID
	// unlock puts the prior state back after a failed merge (and the merge
	// status it found, when it found one).
	unlock := func(status string) {
		err := s.DB.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			cur, err := mrByIID(tx, info.ID, iid)
			if err != nil || cur.State != StateLocked {
				return err
			}
			before := *cur
			cur.State, cur.PriorState, cur.LockedByID, cur.LockedNode = prior, "", 0, ""
			if status != "" {
				cur.MergeStatus = status
			}
			return saveMR(tx, before, cur)
		})
		if err != nil {
			// It stays locked until the next start, whose recovery puts it back.
			s.log.Error("a failed merge could not unlock its merge request", zap.Int64("project", info.ID), zap.Int64("iid", iid), zap.Error(err))
		}
	}
	if err := s.Merges.Import(ctx, info.ID, m.SourceProjectID, sha); err != nil {
		unlock("")
		return d, nil, err
	}
	if msg == "" {
		msg = s.defaultMessage(ctx, info, m)
	}
	mergeSHA, err := s.Merges.Merge(ctx, info, repository.MergeSpec{Branch: m.TargetBranch, Source: sha, Message: msg,
		SourceProject: m.SourceProjectID})
	if err != nil {
		if errors.Is(err, repository.ErrMergeConflict) {
			unlock(StatusCannot)
			return d, nil, mergerequest.ErrNotMergeable
		}
		unlock("")
		if errors.Is(err, repository.ErrBranchNotFound) {
			return d, nil, mergerequest.ErrNotMergeable
		}
		if errors.Is(err, repository.ErrRefMoved) {
			// Pushes kept landing on the target while merging.
			return d, nil, fmt.Errorf("%w (%v)", mergerequest.ErrTargetMoved, err)
		}
		return d, nil, err
	}
	ctx = context.WithoutCancel(ctx)
	if m, err = s.markMerged(ctx, info, iid, uid, mergeSHA, removeSource, true); err != nil {
		return d, nil, err
	}
	if removeSource && !(m.SourceProjectID == info.ID && m.SourceBranch == info.DefaultBranch) {
		s.removeSourceBranch(ctx, m)
	}
	return d, m, nil
}

// removeSourceBranch deletes a merged merge request's source branch unless
// it is protected or its project's default branch, or the merger may not
// push to it.
func (s *Service) removeSourceBranch(ctx context.Context, m *MR) {
	src, err := s.Access.RequireID(ctx, m.SourceProjectID, projects.PushCode)
	if err != nil || src.DefaultBranch == m.SourceBranch {
		return
	}
	if protected, err := s.Protection.IsProtected(ctx, src.ID, m.SourceBranch); err != nil || protected {
		return
	}
	if err := s.Merges.DeleteBranch(ctx, src.ID, m.SourceBranch, m.SHA); err != nil {
		s.log.Warn("the source branch of a merge could not be removed", zap.Int64("merge_request", m.ID),
			zap.String("branch", m.SourceBranch), zap.Error(err))
	}
}

// Get implements mergerequest.Service: an open merge request whose
// merge status is unchecked has it computed first (GitLab checks lazily,
// when one is looked at).
func (s *Service) Get(ctx context.Context, ref mergerequest.Ref) (mergerequest.MergeRequest, error) {
	info, err := s.readProject(ctx, ref.Project)
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	m, err := s.load(ctx, info.ID, int64(ref.IID))
	if err != nil {
		return mergerequest.MergeRequest{}, err
	}
	if m.Open() && m.MergeStatus == StatusUnchecked {
		s.check(ctx, m)
		if m, err = s.load(ctx, info.ID, int64(ref.IID)); err != nil {
			return mergerequest.MergeRequest{}, err
		}
	}
	return s.record(info, m), nil
}

// check computes and stores a merge request's merge status against the
// current heads of both branches.
func (s *Service) check(ctx context.Context, m *MR) {
	src, err := s.Merges.BranchHead(ctx, m.SourceProjectID, m.SourceBranch)
	if err != nil {
		return
	}
	tgt, err := s.Merges.BranchHead(ctx, m.ProjectID, m.TargetBranch)
	if err != nil {
		return
	}
	status := StatusCannot
	if s.Merges.Import(ctx, m.ProjectID, m.SourceProjectID, src) == nil {
		if ok, err := s.Merges.CanMerge(ctx, m.ProjectID, tgt, src); err == nil && ok {
			status = StatusCan
		} else if err != nil {
			return
		}
	}
	err = s.DB.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := mrs.Get(tx, m.ID)
		if err != nil || !cur.Open() || cur.Deleted || cur.State == StateLocked {
			return err
		}
		before := *cur
		cur.SHA, cur.TargetSHA, cur.MergeStatus = src, tgt, status
		if before.SHA == cur.SHA && before.TargetSHA == cur.TargetSHA && before.MergeStatus == status {
			return nil
		}
		return mrs.Update(tx, cur) // no ordering key changes: UpdatedAt stays
	})
	if err != nil {
		// The status is computed again on the next look; say why it was not kept.
		s.log.Warn("the merge status could not be stored", zap.Int64("merge_request", m.ID), zap.Error(err))
	}
}

// markMerged records that merge request iid was merged by uid as mergeSHA:
// its state, the system note, the todos done and the merge event, in one
// transaction.
func (s *Service) markMerged(ctx context.Context, info projects.ProjectInfo, iid int64, uid int64, mergeSHA string, removeSource, closing bool) (*MR, error) {
	// The target as it was (the merge commit's first parent) is the base
	// of the merged range, read before the write.
	targetSHA := ""
	if mc, err := s.Merges.Commits(ctx, info.ID, "", mergeSHA, 1); err == nil && len(mc) == 1 && len(mc[0].ParentIDs) > 0 {
		targetSHA = mc[0].ParentIDs[0]
	}
	// What the merge says it closes, when it lands on the default branch:
	// its title, description and commits, read before the write too.
	var texts []string
	if closing {
		if landed, err := s.load(ctx, info.ID, iid); err == nil && landed.TargetBranch == info.DefaultBranch {
			landed.State, landed.TargetSHA = StateMerged, targetSHA
			texts = s.closingTexts(ctx, landed)
		}
	}
	var m *MR
	err := s.DB.Update(ctx, func(tx *store.Tx) error {
		cur, err := mrByIID(tx, info.ID, iid)
		if err != nil {
			return err
		}
		before := *cur
		now := s.now()
		cur.State, cur.MergeCommitSHA, cur.MergedByID, cur.MergedAt = StateMerged, mergeSHA, uid, &now
		cur.MergeStatus, cur.MergeWhenPipeline, cur.ShouldRemoveSource = StatusCan, false, removeSource
		cur.PriorState, cur.LockedByID, cur.LockedNode = "", 0, ""
		if targetSHA != "" {
			cur.TargetSHA = targetSHA
		}
		s.touch(cur, before.UpdatedAt)
		if err := saveMR(tx, before, cur); err != nil {
			return err
		}
		if err := s.system(tx, info, cur, uid, "merged"); err != nil {
			return err
		}
		if s.Collab != nil {
			if err := s.Collab.TodosDone(tx.Context(), targetOf(cur), 0); err != nil {
				return err
			}
		}
		if err := s.publish(tx, info, cur, uid, event.Merge); err != nil {
			return err
		}
		if len(texts) > 0 {
			// The issues module closes what the texts name, as uid may.
			via := "merge request !" + store.IDString(cur.IID)
			if err := s.Bus.Publish(tx, collabevent.Merged{ProjectID: info.ID, UserID: uid, Key: "merge_request:" + store.IDString(cur.ID),
				Via: via, MentionVia: via, Texts: texts}); err != nil {
				return err
			}
		}
		m = cur
		return nil
	})
	return m, err
}
