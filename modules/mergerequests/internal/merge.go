package internal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/issues"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

type acceptInput struct {
	MRPath
	Body struct {
		MergeCommitMessage        *string `json:"merge_commit_message,omitempty"`
		ShouldRemoveSourceBranch  *bool   `json:"should_remove_source_branch,omitempty"`
		MergeWhenPipelineSucceeds *bool   `json:"merge_when_pipeline_succeeds,omitempty"`
		SHA                       *string `json:"sha,omitempty"`
	}
}

// ErrNotMergeable: the merge request cannot be merged as it is
// (conflicts, work in progress, a missing branch); answered 405.
var ErrNotMergeable = errors.New("mergerequests: branch cannot be merged")

// pipelineActive says whether a pipeline status is still running.
func pipelineActive(status string) bool {
	switch status {
	case "created", "pending", "running":
		return true
	}
	return false
}

// accept is PUT .../merge: 401 without the right to merge into the target
// branch, 406 when merged or closed, 405 when it cannot be merged (work in
// progress, a missing branch, conflicts), 409 when sha is not the source's
// head; with merge_when_pipeline_succeeds while the head pipeline runs,
// the intent is recorded and the merge happens when it succeeds.
func (s *Service) accept(ctx context.Context, in *acceptInput) (*mrOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	m, err := s.load(ctx, info.ID, in.IID)
	if err != nil {
		return nil, err
	}
	if ok, err := s.Merges.MayMerge(ctx, info.ID, m.TargetBranch); err != nil {
		return nil, err
	} else if !ok || info.Archived {
		return nil, api.Unauthorized()
	}
	if !m.Open() {
		return nil, api.NotAcceptable("406 Not Acceptable")
	}
	if workInProgress(m.Title) {
		return nil, ErrNotMergeable
	}
	if err := s.unresolvedThreads(ctx, info, m); err != nil {
		return nil, err
	}
	head, err := s.Merges.BranchHead(ctx, int64(m.SourceProjectID), m.SourceBranch)
	if err != nil {
		return nil, ErrNotMergeable
	}
	if head != m.SHA {
		// A push the subscriber has not seen yet: follow it now.
		m.SHA = head
	}
	if b := in.Body.SHA; b != nil && *b != head {
		return nil, api.Conflict("SHA does not match HEAD of source branch: " + head)
	}
	b := &in.Body
	uid := auth.FromContext(ctx).UserID()
	if b.MergeWhenPipelineSucceeds != nil && *b.MergeWhenPipelineSucceeds {
		// CI is asked, not the module's copy of its pipelines: the copy
		// comes through the outbox, after the push, and "no copy yet" is
		// not "no pipeline". Coming reads the CI file, so it is asked
		// before the write; setMWPS then looks at the pipeline again in
		// its transaction.
		coming := false
		if s.CI != nil {
			if coming, err = s.CI.Coming(ctx, int64(m.SourceProjectID), m.SourceBranch, head); err != nil {
				return nil, err
			}
		}
		err := s.setMWPS(ctx, info, m.IID, uid, head, coming, b.MergeCommitMessage, b.ShouldRemoveSourceBranch)
		if err == nil {
			return s.render(ctx, info, in.IID)
		}
		if !errors.Is(err, errNothingToWaitFor) {
			return nil, err
		}
	}
	msg := ""
	if b.MergeCommitMessage != nil {
		msg = *b.MergeCommitMessage
	}
	removeSource := m.ForceRemoveSource
	if b.ShouldRemoveSourceBranch != nil {
		removeSource = *b.ShouldRemoveSourceBranch
	}
	if err := s.merge(ctx, info, int64(m.IID), uid, head, msg, removeSource, false); err != nil {
		return nil, err
	}
	return s.render(ctx, info, in.IID)
}

// errNothingToWaitFor: the head commit has no pipeline running and none
// on its way; the merge is made at once.
var errNothingToWaitFor = errors.New("mergerequests: no pipeline to wait for")

// setMWPS records the intent to merge when the pipeline of sha succeeds,
// if there is one to wait for: CI's newest pipeline of sha still runs or,
// when sha has none, coming (CI's answer before the transaction) says one
// is on its way. Otherwise errNothingToWaitFor. The pipeline is read in
// the transaction that records the intent, so a pipeline that ends after
// it finds the intent, and one that ended before it is seen ended.
func (s *Service) setMWPS(ctx context.Context, info projects.ProjectInfo, iid uint64, uid int64, sha string, coming bool, msg *string, remove *bool) error {
	return s.DB.Update(ctx, func(tx *store.Tx) error {
		m, err := mrByIID(tx, info.ID, int64(iid))
		if err != nil {
			return err
		}
		wait := false
		if s.CI != nil {
			p, ok, err := s.CI.Latest(tx.Context(), int64(m.SourceProjectID), sha)
			if err != nil {
				return err
			}
			wait = (ok && pipelineActive(p.Status)) || (!ok && coming)
		}
		if !wait {
			return errNothingToWaitFor
		}
		before := *m
		m.MergeWhenPipeline, m.MergeUserID, m.SHA = true, uid, sha
		m.MergeMessage = ""
		if msg != nil {
			m.MergeMessage = *msg
		}
		if remove != nil {
			m.ShouldRemoveSource = *remove
		}
		s.touch(m, before.UpdatedAt)
		if err := saveMR(tx, before, m); err != nil {
			return err
		}
		if before.MergeWhenPipeline {
			return nil
		}
		return s.system(tx, info, m, uid, "enabled an automatic merge when the pipeline for "+sha[:8]+" succeeds")
	})
}

func (s *Service) cancelMWPS(ctx context.Context, in *MRPath) (*mrOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	m, err := s.load(ctx, info.ID, in.IID)
	if err != nil {
		return nil, err
	}
	if ok, err := s.Merges.MayMerge(ctx, info.ID, m.TargetBranch); err != nil {
		return nil, err
	} else if !ok {
		return nil, api.Unauthorized()
	}
	if !m.Open() {
		return nil, api.MethodNotAllowed("")
	}
	if !m.MergeWhenPipeline {
		return nil, api.NotAcceptable("406 Not Acceptable")
	}
	uid := auth.FromContext(ctx).UserID()
	err = s.DB.Update(ctx, func(tx *store.Tx) error {
		return s.dropMWPS(tx, info, in.IID, "", uid, "canceled the automatic merge")
	})
	if err != nil {
		return nil, err
	}
	return s.render(ctx, info, in.IID)
}

// dropMWPS clears the intent with a system note; with sha, only an
// intent to merge sha (a later one, set for a newer head, stays).
func (s *Service) dropMWPS(tx *store.Tx, info projects.ProjectInfo, iid int64, sha string, uid int64, note string) error {
	m, err := mrByIID(tx, info.ID, iid)
	if err != nil || !m.MergeWhenPipeline || (sha != "" && m.SHA != sha) {
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
			parts = append(parts, "Closes "+issueRefs(info, list))
		}
	}
	parts = append(parts, "See merge request "+info.PathWithNamespace+"!"+u64(m.IID))
	return strings.Join(parts, "\n\n")
}

// issueRefs is "#1, #2 and other/project#3".
func issueRefs(info projects.ProjectInfo, list []issues.IssueView) string {
	refs := make([]string, len(list))
	for i, is := range list {
		refs[i] = "#" + u64(is.IID)
		if int64(is.ProjectID) != info.ID {
			refs[i] = fmt.Sprintf("%d#%d", is.ProjectID, is.IID)
			if web := is.WebURL; web != "" {
				// <base>/<path>/issues/<iid>: the path is the reference.
				if i := strings.Index(web, "/issues/"); i > 0 {
					path := web[:i]
					if j := strings.Index(path, "://"); j >= 0 {
						path = path[j+3:]
					}
					if k := strings.Index(path, "/"); k >= 0 {
						refs[i] = path[k+1:] + "#" + u64(is.IID)
					}
				}
			}
		}
	}
	if len(refs) == 1 {
		return refs[0]
	}
	return strings.Join(refs[:len(refs)-1], ", ") + " and " + refs[len(refs)-1]
}

// errIntentGone: the intent a merge was to carry out was dropped or
// changed meanwhile (whatever did it wrote its note); nothing merged.
var errIntentGone = errors.New("mergerequests: the automatic merge was canceled meanwhile")

// errMayNotMerge: the user of an automatic merge may no longer merge into
// its target; the intent is dropped with a note, nothing merged.
var errMayNotMerge = errors.New("mergerequests: the user of the automatic merge may not merge")

// merge merges merge request iid as user uid (ctx carries that user's
// principal): locked while the commit is made, merged after it landed,
// with the system note, events, closed issues and, when asked, the source
// branch removed.
//
// With intent it carries out uid's recorded intent to merge sha when its
// pipeline succeeds, and checks in the lock's transaction what the user
// approved and may do now: the intent must still be uid's, for sha
// (errIntentGone), and uid must be allowed to merge into the target
// branch as it is now, with the user's access as it is now; if not, the
// intent is dropped with a note in that transaction (errMayNotMerge).
func (s *Service) merge(ctx context.Context, info projects.ProjectInfo, iid int64, uid int64, sha, msg string, removeSource, intent bool) error {
	var m *MR
	var prior string
	refused := false
	// Lock it: a second merge of the same merge request finds it locked
	// (406), comments wait, pushes leave it alone.
	err := s.DB.Update(ctx, func(tx *store.Tx) error {
		var err error
		refused = false
		if m, err = mrByIID(tx, info.ID, iid); err != nil {
			return err
		}
		if intent {
			if !m.Open() || !m.MergeWhenPipeline || m.MergeUserID != uid || m.SHA != sha {
				return errIntentGone
			}
			may, err := s.Merges.MayMerge(tx.Context(), info.ID, m.TargetBranch)
			if err != nil {
				return err
			}
			if !may {
				refused = true
				return s.dropMWPS(tx, info, iid, sha, uid, "canceled the automatic merge: not allowed to merge into `"+m.TargetBranch+"`")
			}
		}
		if m.State == StateLocked || !m.Open() {
			return api.NotAcceptable("406 Not Acceptable")
		}
		before := *m
		prior = m.State
		m.State, m.SHA, m.PriorState, m.LockedByID = StateLocked, sha, m.State, uid
		return saveMR(tx, before, m)
	})
	if err != nil {
		return err
	}
	if refused {
		return errMayNotMerge
	}
	// unlock puts the prior state back after a failed merge (and the merge
	// status it found, when it found one).
	unlock := func(status string) {
		err := s.DB.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			cur, err := mrByIID(tx, info.ID, iid)
			if err != nil || cur.State != StateLocked {
				return err
			}
			before := *cur
			cur.State, cur.PriorState, cur.LockedByID = prior, "", 0
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
	if err := s.Merges.Import(ctx, info.ID, int64(m.SourceProjectID), sha); err != nil {
		unlock("")
		return err
	}
	if msg == "" {
		msg = s.defaultMessage(ctx, info, m)
	}
	mergeSHA, err := s.Merges.Merge(ctx, info.ID, repository.MergeSpec{Branch: m.TargetBranch, Source: sha, Message: msg,
		SourceProject: int64(m.SourceProjectID)})
	if err != nil {
		if errors.Is(err, repository.ErrMergeConflict) {
			unlock(StatusCannot)
			return ErrNotMergeable
		}
		unlock("")
		if errors.Is(err, repository.ErrBranchNotFound) {
			return ErrNotMergeable
		}
		if errors.Is(err, repository.ErrRefMoved) {
			// Pushes kept landing on the target while merging.
			return api.Conflict("The target branch moved while merging; try again")
		}
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if m, err = s.markMerged(ctx, info, iid, uid, mergeSHA, removeSource); err != nil {
		return err
	}
	if s.Closer != nil && m.TargetBranch == info.DefaultBranch {
		texts := s.closingTexts(ctx, m)
		if err := s.Closer.CloseReferenced(ctx, info.ID, uid, "merge_request:"+u64(m.ID), "merge request !"+u64(m.IID),
			"merge request !"+u64(m.IID), texts...); err != nil {
			s.log.Warn("closing the issues of a merge failed", zap.Uint64("merge_request", m.ID), zap.Error(err))
		}
	}
	if removeSource && !(m.SourceProjectID == uint64(info.ID) && m.SourceBranch == info.DefaultBranch) {
		s.removeSourceBranch(ctx, m)
	}
	return nil
}

// removeSourceBranch deletes a merged merge request's source branch unless
// it is protected or its project's default branch, or the merger may not
// push to it.
func (s *Service) removeSourceBranch(ctx context.Context, m *MR) {
	src, err := s.Access.RequireID(ctx, int64(m.SourceProjectID), projects.PushCode)
	if err != nil || src.DefaultBranch == m.SourceBranch {
		return
	}
	if protected, err := s.Protection.IsProtected(ctx, src.ID, m.SourceBranch); err != nil || protected {
		return
	}
	if err := s.Merges.DeleteBranch(ctx, src.ID, m.SourceBranch, m.SHA); err != nil {
		s.log.Warn("the source branch of a merge could not be removed", zap.Uint64("merge_request", m.ID),
			zap.String("branch", m.SourceBranch), zap.Error(err))
	}
}

// checkIfUnchecked computes the merge status of an open merge request
// whose status is unchecked (a single view, as GitLab checks lazily).
func (s *Service) checkIfUnchecked(ctx context.Context, project, iid int64) {
	m, err := s.load(ctx, project, iid)
	if err != nil || !m.Open() || m.MergeStatus != StatusUnchecked {
		return
	}
	s.check(ctx, m)
}

// check computes and stores a merge request's merge status against the
// current heads of both branches.
func (s *Service) check(ctx context.Context, m *MR) {
	src, err := s.Merges.BranchHead(ctx, int64(m.SourceProjectID), m.SourceBranch)
	if err != nil {
		return
	}
	tgt, err := s.Merges.BranchHead(ctx, int64(m.ProjectID), m.TargetBranch)
	if err != nil {
		return
	}
	status := StatusCannot
	if s.Merges.Import(ctx, int64(m.ProjectID), int64(m.SourceProjectID), src) == nil {
		if ok, err := s.Merges.CanMerge(ctx, int64(m.ProjectID), tgt, src); err == nil && ok {
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
		s.log.Warn("the merge status could not be stored", zap.Uint64("merge_request", m.ID), zap.Error(err))
	}
}

// markMerged records that merge request iid was merged by uid as mergeSHA:
// its state, the system note, the todos done and the merge event, in one
// transaction.
func (s *Service) markMerged(ctx context.Context, info projects.ProjectInfo, iid int64, uid int64, mergeSHA string, removeSource bool) (*MR, error) {
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
		cur.PriorState, cur.LockedByID = "", 0
		if mc, err := s.Merges.Commits(tx.Context(), info.ID, "", mergeSHA, 1); err == nil && len(mc) == 1 && len(mc[0].ParentIDs) > 0 {
			cur.TargetSHA = mc[0].ParentIDs[0]
		}
		s.touch(cur, before.UpdatedAt)
		if err := saveMR(tx, before, cur); err != nil {
			return err
		}
		if err := s.system(tx, info, cur, uid, "merged"); err != nil {
			return err
		}
		if s.Todos != nil {
			if err := s.Todos.Done(tx.Context(), target(cur), 0); err != nil {
				return err
			}
		}
		if err := s.publish(tx, info, cur, uid, event.Merge); err != nil {
			return err
		}
		m = cur
		return nil
	})
	return m, err
}
