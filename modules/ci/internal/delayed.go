package internal

// Delayed jobs (`when: delayed` with `start_in`, or a rule's): when gating
// makes one pending, it is scheduled instead, and becomes pending when its
// start_in has passed (scheduledJobsLoop), or at once when played. The
// time is kept in a time-keyed bucket, so a restart loses no delay; a key
// whose job is no longer scheduled (played, canceled, unscheduled) is
// dropped when its time comes.

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
)

// StatusScheduled is a delayed job waiting for its time.
const StatusScheduled = "scheduled"

// jobsScheduled keys each scheduled job under its scheduled_at
// (store.TimeKey in scope 0), as schedulesDue does for schedules.
var jobsScheduled = []byte("ci.jobs_scheduled")

// gateDelay runs on every change of a job's status (publishJob): a
// delayed job that gating made pending for the first time is scheduled
// start_in from now instead.
func (s *Service) gateDelay(tx *store.Tx, j *Job) error {
	if j.Status != StatusPending || j.StartAfter <= 0 || j.ScheduledAt != nil || j.Bridge || j.Retried {
		return nil
	}
	at := s.now().Add(j.StartAfter)
	j.Status, j.ScheduledAt, j.QueuedAt = StatusScheduled, &at, nil
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	tx.OnCommit(func() {
		select {
		case s.delayWake <- struct{}{}:
		default:
		}
	})
	return store.PutTimeKey(tx, jobsScheduled, int64(0), at, j.ID, 0)
}

// unschedule makes a scheduled job manual: it then waits to be played.
func (s *Service) unschedule(tx *store.Tx, j *Job) error {
	j.Status = StatusManual
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	if err := s.publishJob(tx, j, nil); err != nil {
		return err
	}
	return s.process(tx, j.PipelineID)
}

// scheduledJobsLoop makes scheduled jobs pending when their time comes,
// until ctx ends.
func (s *Service) scheduledJobsLoop(ctx context.Context) {
	s.dueLoop(ctx, s.delayWake, s.startDueJobs)
}

// startDueJobs makes every job due now pending and says when the next is
// due (zero: none known).
func (s *Service) startDueJobs(ctx context.Context) time.Time {
	var next time.Time
	started := 0
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		now := s.now()
		var ids []int64
		var times []time.Time
		ids, times, next = store.DueTimeKeys[int64, int64](tx, jobsScheduled, 0, now, dueBatch)
		started = 0
		for i, id := range ids {
			if err := store.DeleteTimeKey(tx, jobsScheduled, int64(0), times[i], id); err != nil {
				return err
			}
			j, err := jobs.Get(tx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if j.Status != StatusScheduled || j.Retried {
				continue // played, canceled or unscheduled meanwhile
			}
			j.Status, j.QueuedAt = StatusPending, &now
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
			if err := s.publishJob(tx, j, nil); err != nil {
				return err
			}
			if err := s.process(tx, j.PipelineID); err != nil {
				return err
			}
			started++
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("scheduled jobs due: not started", zap.Error(err))
		}
		return s.now().Add(stopCheckInterval)
	}
	if started > 0 {
		s.nudge()
	}
	return next
}
