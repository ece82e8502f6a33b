package internal

// An environment's life after its deployments: the job that stops it
// (`on_stop`), stopping by hand (the API's stop plays that job) or by a
// successful `action: stop` job, and stopping by time (`auto_stop_in`,
// environmentStopLoop).

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// environmentsToStop keys each environment that stops by time under its
// auto_stop_at (store.TimeKey in scope 0), as schedulesDue does for
// schedules.
var environmentsToStop = []byte("ci.environments_to_stop")

// stopCheckInterval is how long the due loops wait before trying again
// after a step failed.
const stopCheckInterval = time.Minute

// setAutoStop moves an environment's key in environmentsToStop from
// before's auto_stop_at to e's; call it with the row about to be saved.
func (s *Service) setAutoStop(tx *store.Tx, before *time.Time, e *Environment) error {
	if before != nil {
		if err := store.DeleteTimeKey(tx, environmentsToStop, int64(0), *before, e.ID); err != nil {
			return err
		}
	}
	if e.AutoStopAt == nil {
		return nil
	}
	tx.OnCommit(func() {
		select {
		case s.stopWake <- struct{}{}:
		default:
		}
	})
	return store.PutTimeKey(tx, environmentsToStop, int64(0), *e.AutoStopAt, e.ID, 0)
}

// deployed records on the environment what a successful deployment says
// of its future: available again, the job that stops it (the manual job
// its `on_stop` names, in the deploying pipeline), and when it stops by
// itself (`auto_stop_in`, counted from now; none when not written).
func (s *Service) deployed(tx *store.Tx, env *Environment, j *Job, spec *pipeline.Job) error {
	before := env.AutoStopAt
	env.State, env.StopJobID, env.AutoStopAt, env.UpdatedAt = "available", 0, nil, s.now()
	if stop := spec.Environment.OnStop; stop != "" {
		ids, err := jobs.IDsBy(tx, "name", nameKey(j.PipelineID, stop))
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			env.StopJobID = ids[len(ids)-1]
		}
	}
	if in := spec.Environment.AutoStopIn; in != "" {
		if d, never, err := pipeline.ParseExpireIn(in); err == nil && !never && d > 0 {
			at := env.UpdatedAt.Add(d)
			env.AutoStopAt = &at
		}
	}
	if err := s.setAutoStop(tx, before, env); err != nil {
		return err
	}
	return environments.Update(tx, env)
}

// stopEnv stops an environment: stopped at once, and its stop
// job played (as userID) when it waits to be. A job that is not manual
// (already run, or never to run) is left alone.
func (s *Service) stopEnv(tx *store.Tx, e *Environment, userID int64) error {
	before := e.AutoStopAt
	e.State, e.AutoStopAt, e.UpdatedAt = "stopped", nil, s.now()
	if err := s.setAutoStop(tx, before, e); err != nil {
		return err
	}
	if err := environments.Update(tx, e); err != nil {
		return err
	}
	if e.StopJobID == 0 {
		return nil
	}
	j, err := jobs.Get(tx, e.StopJobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || j.Status != StatusManual || j.Retried {
		return err
	}
	if userID == 0 {
		userID = j.UserID
	}
	return s.play(tx, j, userID)
}

// stoppedByJob marks the environment of a successful `action: stop` job
// stopped (its job has run: nothing is played).
func (s *Service) stoppedByJob(tx *store.Tx, j *Job, spec *pipeline.Job) error {
	name := j.Environment
	if name == "" {
		name = spec.Environment.Name
	}
	e, err := environments.GetBy(tx, "name", store.IDString(j.ProjectID)+"/"+name)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	before := e.AutoStopAt
	e.State, e.AutoStopAt, e.UpdatedAt = "stopped", nil, s.now()
	if err := s.setAutoStop(tx, before, e); err != nil {
		return err
	}
	return environments.Update(tx, e)
}

// environmentStopLoop stops the environments whose auto_stop_at has
// come, playing their stop jobs as the user who deployed them, until ctx
// ends.
func (s *Service) environmentStopLoop(ctx context.Context) {
	s.dueLoop(ctx, s.stopWake, s.stopDueEnvironments)
}

// stopDueEnvironments stops every environment due now and says when the
// next one is due (zero: none known).
func (s *Service) stopDueEnvironments(ctx context.Context) time.Time {
	var next time.Time
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var due []int64
		due, _, next = store.DueTimeKeys[int64, int64](tx, environmentsToStop, 0, s.now(), dueBatch)
		for _, id := range due {
			e, err := environments.Get(tx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := s.stopEnv(tx, e, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("environments due to stop: not stopped", zap.Error(err))
		}
		return s.now().Add(stopCheckInterval)
	}
	s.nudge()
	return next
}
