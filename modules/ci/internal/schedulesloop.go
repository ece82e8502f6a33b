package internal

// The loop that runs due pipeline schedules. It reads schedulesDue from
// its start and stops at the first schedule not due, sleeps until that
// one (at most a minute: a clock moved forward is noticed), and wakes
// early when a schedule is created or edited. Each due schedule's next
// run is moved past now before its pipeline is made, in one transaction:
// a schedule overdue after a long stop runs once, not once per missed
// tick, and a crash between the two loses that run rather than making
// it twice (GitLab moves it first too).

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// dueBatch is how many due schedules one read of schedulesDue takes.
const dueBatch = 50

// wakeSchedules tells scheduleLoop that a schedule changed; it never
// blocks.
func (s *Service) wakeSchedules() {
	select {
	case s.scheduleWake <- struct{}{}:
	default:
	}
}

// scheduleLoop runs due schedules until ctx ends.
func (s *Service) scheduleLoop(ctx context.Context) {
	s.dueLoop(ctx, s.scheduleWake, s.runDueSchedules)
}

// dueLoop runs step, which acts on what is due now and says when the next
// thing is due (zero: none known), then waits until then, a minute at
// most, or until woken, until ctx ends: the loop of schedules,
// environments to stop and delayed jobs.
func (s *Service) dueLoop(ctx context.Context, wake <-chan struct{}, step func(context.Context) time.Time) {
	for {
		next := step(ctx)
		wait := time.Minute
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(s.now()), 0))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// runDueSchedules runs every schedule due now and says when the next one
// is (zero: none active).
func (s *Service) runDueSchedules(ctx context.Context) time.Time {
	for ctx.Err() == nil {
		now := s.now()
		var ids []int64
		var next time.Time
		err := s.db.View(ctx, func(tx *store.Tx) error {
			ids, next = dueSchedules(tx, now, dueBatch)
			return nil
		})
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("due pipeline schedules: not listed", zap.Error(err))
			}
			return now.Add(time.Minute)
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return next
			}
			s.runDue(ctx, id, now)
		}
		if len(ids) < dueBatch {
			return next
		}
	}
	return time.Time{}
}

// runDue moves a due schedule's next run past now and makes its
// pipeline as its owner. An owner who was blocked, deleted or lost the
// right to run pipelines on the ref makes none: the run is skipped and
// logged, the schedule stays active (access given back, it runs again).
func (s *Service) runDue(ctx context.Context, id int64, now time.Time) {
	var sc *Schedule
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := schedules.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil || !cur.Active || cur.NextRunAt.After(now) {
			return err
		}
		before := *cur
		next, err := nextRun(cur.Cron, cur.CronTimezone, now)
		if err != nil {
			// Stored specs were checked; one that no longer parses (a
			// zone gone from the database) stops rather than spins.
			cur.Active = false
		}
		cur.NextRunAt = next
		if err := saveSchedule(tx, &before, cur); err != nil {
			return err
		}
		sc = cur
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("a due pipeline schedule could not be moved on", zap.Int64("schedule", id), zap.Error(err))
		}
		return
	}
	if sc == nil {
		return
	}
	bg := auth.WithPrincipal(context.WithoutCancel(ctx), auth.System())
	info, err := s.access.ResolveID(bg, sc.ProjectID)
	if errors.Is(err, projects.ErrNotFound) {
		// The project was deleted: its schedule stops for good rather
		// than waking the loop for nothing at every tick.
		s.log.Info("pipeline schedule of a deleted project deactivated", zap.Int64("schedule", id))
		s.deactivateSchedule(ctx, id)
		return
	}
	if err != nil {
		s.log.Error("scheduled pipeline skipped: project not read", zap.Int64("schedule", id), zap.Error(err))
		return
	}
	if !info.Features.JobsEnabled {
		return
	}
	octx, info, err := s.actAsOwner(bg, info.ID, sc.OwnerID)
	if err == nil {
		_, err = s.runSchedule(octx, info, sc, sc.OwnerID)
	}
	switch {
	case err == nil:
	case errors.Is(err, errScheduleOwnerMayNotRun), errors.Is(err, cicd.ErrProtectedRef):
		s.log.Info("scheduled pipeline skipped: its owner may not run it", zap.Int64("schedule", id), zap.Int64("owner", sc.OwnerID))
	case errors.Is(err, cicd.ErrNoConfig), errors.Is(err, cicd.ErrNoJobs), errors.Is(err, cicd.ErrRefNotFound):
		s.log.Info("scheduled pipeline: none to make", zap.Int64("schedule", id), zap.Error(err))
	default:
		s.log.Error("scheduled pipeline not made", zap.Int64("schedule", id), zap.Error(err))
	}
}

// deactivateSchedule takes a schedule out of the due ones.
func (s *Service) deactivateSchedule(ctx context.Context, id int64) {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		sc, err := schedules.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !sc.Active) {
			return nil
		}
		if err != nil {
			return err
		}
		before := *sc
		sc.Active = false
		return saveSchedule(tx, &before, sc)
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error("a pipeline schedule could not be deactivated", zap.Int64("schedule", id), zap.Error(err))
	}
}
