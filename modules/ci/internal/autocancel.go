package internal

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// The modes of `workflow: auto_cancel: on_new_commit`.
const (
	autoCancelConservative  = "conservative"
	autoCancelInterruptible = "interruptible"
	autoCancelNone          = "none"
)

// autoCancel cancels what a new pipeline makes redundant, as GitLab's
// "auto-cancel redundant pipelines" does: the unfinished pipelines of
// the same branch (or merge request) at an older commit. Each follows its
// own `workflow: auto_cancel: on_new_commit`:
//
//   - conservative (the default): the whole pipeline is canceled, unless
//     a job that is not `interruptible` has started (running or done);
//   - interruptible: only its interruptible jobs are canceled;
//   - none: nothing.
//
// Unlike GitLab, a pipeline whose file names neither interruptible jobs
// nor an auto_cancel mode is left alone even when none of its jobs has
// started: the keyword is what asks for cancellation here, so pushing
// twice never loses the first pipeline of a file that did not ask.
func (s *Service) autoCancel(ctx context.Context, p *Pipeline) {
	if p.Tag || (p.Source != SourcePush && p.Source != SourceMergeRequestEvent) {
		return
	}
	canceled := 0
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		canceled = 0
		ids, err := pipelines.IDsBy(tx, "open", "open")
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id >= p.ID {
				continue
			}
			old, err := pipelines.Get(tx, id)
			if err != nil {
				return err
			}
			if !redundant(old, p) {
				continue
			}
			n, err := s.cancelRedundant(tx, old)
			if err != nil {
				return err
			}
			canceled += n
		}
		return nil
	})
	if err != nil {
		s.log.Error("auto-cancel of redundant pipelines", zap.Int64("pipeline", p.ID), zap.Error(err))
		return
	}
	if canceled > 0 {
		s.log.Info("redundant pipelines' jobs canceled", zap.Int64("by_pipeline", p.ID), zap.Int("jobs", canceled))
		s.nudge()
	}
}

// redundant says whether newer makes old redundant: same project, ref and
// kind (the same merge request for merge request pipelines), another
// commit, old not finished.
func redundant(old, newer *Pipeline) bool {
	if finished(old.Status) || old.YAMLErrors != nil || old.ProjectID != newer.ProjectID || old.Ref != newer.Ref ||
		old.Tag || old.Source != newer.Source || old.SHA == newer.SHA {
		return false
	}
	if newer.MergeRequest != nil {
		return old.MergeRequest != nil && old.MergeRequest.IID == newer.MergeRequest.IID
	}
	return true
}

// cancelRedundant cancels what old's mode allows and says how many jobs.
func (s *Service) cancelRedundant(tx *store.Tx, old *Pipeline) (int, error) {
	mode := old.AutoCancel
	if mode == autoCancelNone {
		return 0, nil
	}
	list, err := latestJobs(tx, old.ID)
	if err != nil {
		return 0, err
	}
	interruptible := make([]bool, len(list))
	anyInterruptible := false
	for i, j := range list {
		var spec pipeline.Job
		if json.Unmarshal(j.Spec, &spec) == nil && spec.Interruptible {
			interruptible[i], anyInterruptible = true, true
		}
	}
	if mode == "" {
		if !anyInterruptible {
			return 0, nil // the file asked for nothing (see autoCancel)
		}
		mode = autoCancelConservative
	}
	if mode == autoCancelConservative {
		for i, j := range list {
			if started(j.Status) && !interruptible[i] {
				return 0, nil
			}
		}
	}
	n := 0
	for i, j := range list {
		if !active(j.Status) || (mode == autoCancelInterruptible && !interruptible[i]) {
			continue
		}
		if err := s.cancelOne(tx, j); err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	return n, s.process(tx, old.ID)
}

// started says whether a job has begun: it runs or ran.
func started(status string) bool {
	switch status {
	case StatusRunning, StatusSuccess, StatusFailed, StatusCanceled:
		return true
	}
	return false
}
