package internal

import (
	"context"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// A merge request is "locked" only while its merge is being made, which
// takes a request's time. One still locked when the server starts was being
// merged when the process stopped: either the merge commit landed on the
// target branch (the source commit is in the target's history) and only
// the bookkeeping is missing, or it did not and the merge request goes back
// to the state it had. Without this it would stay locked for ever: every
// merge answers 406 to a locked merge request.

// Several nodes sharing a store each mark their merges with their name
// (MR.LockedNode). The recovery runs where the leader's part runs: at
// start, when a node takes the lead, and then every half lease (Run), and
// it recovers only the merges of nodes that are gone: another node's merge
// in flight is left to it.

var (
	_ fennec.Provisioner = (*Service)(nil)
	_ fennec.Runner      = (*Service)(nil)
)

// Provision runs the recovery when the app starts (or this node takes the
// lead), before the bus delivers and requests are served.
func (s *Service) Provision(ctx context.Context) error {
	s.recoverLocked(auth.WithPrincipal(context.WithoutCancel(ctx), auth.System()))
	return nil
}

// Run recovers, on a shared store, the merges of nodes that die while this
// node leads; on a store of one process there are none, and it returns.
func (s *Service) Run(ctx context.Context) error {
	if s.node != nil {
		s.node.SweepDeadNodes(ctx, func(ctx context.Context) {
			s.recoverLocked(auth.WithPrincipal(ctx, auth.System()))
		})
	}
	return nil
}

// nodeName is this node's name for MR.LockedNode.
func (s *Service) nodeName() string {
	if s.node == nil {
		return ""
	}
	return s.node.Name()
}

func (s *Service) recoverLocked(ctx context.Context) {
	var locked []MR
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		locked = locked[:0]
		ids, err := mrs.IDsBy(tx, "locked", lockedKey)
		if err != nil {
			return err
		}
		for _, id := range ids {
			m, err := mrs.Get(tx, id)
			if err != nil {
				return err
			}
			locked = append(locked, *m)
		}
		return nil
	})
	if err != nil {
		s.log.Error("merge requests left locked by a stop could not be listed", zap.Error(err))
		return
	}
	for _, m := range locked {
		if s.node != nil {
			if alive, err := s.node.Alive(ctx, m.LockedNode); err != nil {
				s.log.Warn("whether a merging node lives could not be read", zap.Error(err))
				return
			} else if alive {
				continue // its merge is in flight
			}
		}
		if err := s.recoverOne(ctx, m); err != nil {
			s.log.Error("a merge request left locked by a stop could not be recovered",
				zap.Int64("project", m.ProjectID), zap.Int64("iid", m.IID), zap.Error(err))
		}
	}
}

func (s *Service) recoverOne(ctx context.Context, m MR) error {
	info, err := s.Access.ResolveID(ctx, m.ProjectID)
	if err != nil {
		return err
	}
	if mergeSHA := s.landedMerge(ctx, info, m); mergeSHA != "" {
		s.log.Warn("finishing a merge a stop interrupted after its commit landed",
			zap.Int64("project", m.ProjectID), zap.Int64("iid", m.IID), zap.String("merge_commit", mergeSHA))
		_, err := s.markMerged(ctx, info, m.IID, m.LockedByID, mergeSHA, m.ShouldRemoveSource, false)
		return err
	}
	prior := m.PriorState
	if prior == "" {
		prior = StateOpened
	}
	s.log.Warn("undoing a merge a stop interrupted before its commit landed",
		zap.Int64("project", m.ProjectID), zap.Int64("iid", m.IID), zap.String("state", prior))
	return s.DB.Update(ctx, func(tx *store.Tx) error {
		cur, err := mrByIID(tx, info.ID, m.IID)
		if err != nil || cur.State != StateLocked {
			return err
		}
		before := *cur
		cur.State, cur.PriorState, cur.LockedByID, cur.LockedNode, cur.MergeStatus = prior, "", 0, "", StatusUnchecked
		return saveMR(tx, before, cur)
	})
}

// landedMerge finds the merge commit of m on its target branch: a recent
// commit of the target whose second parent is the commit m was merging.
// "" when the merge did not land.
func (s *Service) landedMerge(ctx context.Context, info projects.ProjectInfo, m MR) string {
	head, err := s.Merges.BranchHead(ctx, info.ID, m.TargetBranch)
	if err != nil || m.SHA == "" {
		return ""
	}
	// The source commit is not in the target's history: no merge landed.
	if rest, err := s.Merges.Commits(ctx, info.ID, head, m.SHA, 1); err != nil || len(rest) > 0 {
		return ""
	}
	recent, err := s.Merges.Commits(ctx, info.ID, "", head, 100)
	if err != nil {
		return ""
	}
	for _, c := range recent {
		if len(c.ParentIDs) == 2 && c.ParentIDs[1] == m.SHA {
			return c.ID
		}
	}
	return ""
}
