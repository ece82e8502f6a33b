package internal

// The watch over jobs handed to runners: a runner may die (SIGKILL, a
// machine lost) or never get the job it was sent (its connection dropped
// as the answer went out). The first leaves a running job nobody reports
// on, failed here as a runner system failure once it has been silent
// longer than the silence timeout; the second a job no runner ever
// reported on, queued again after the start timeout. A job canceled here
// keeps its runner's token until the runner's last word (its final
// state); a runner that stays silent as long after the cancel, or after
// its last report since, loses it then.

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
)

// watchEvery is how often runner jobs are looked at: a quarter of the
// shorter timeout, within [50 ms, 30 s].
func (s *Service) watchEvery() time.Duration {
	d := min(s.cfg.RunnerSilenceTimeout, s.cfg.RunnerStartTimeout) / 4
	return max(50*time.Millisecond, min(d, 30*time.Second))
}

// watchRunners runs checkRunnerJobs until ctx ends, and drains the waiting
// job requests once the server stops answering (they would otherwise hold
// its shutdown for the poll timeout).
func (s *Service) watchRunners(ctx context.Context) {
	check := time.NewTicker(s.watchEvery())
	defer check.Stop()
	ready := time.NewTicker(100 * time.Millisecond)
	defer ready.Stop()
	q := s.runnerQueue
	for {
		select {
		case <-ctx.Done():
			q.drain()
			return
		case <-ready.C:
			// Not ready after having served (seen here, or by a request
			// that came while the server was ready): it is stopping.
			if s.server.Ready() {
				q.served.Store(true)
			} else if q.served.Load() {
				q.drain()
				ready.Stop()
			}
		case <-check.C:
			if err := s.checkRunnerJobs(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("checking runners' jobs", zap.Error(err))
			}
		}
	}
}

// checkRunnerJobs re-queues the runner jobs never started, fails those
// gone silent, and closes the canceled ones whose runner went silent.
func (s *Service) checkRunnerJobs(ctx context.Context) error {
	type watched struct {
		id int64
		// since is when the runner's clock started: the job's assignment,
		// or its cancel for a canceled one.
		since, start time.Time
		started      bool
		// canceled: a canceled job still open to its runner.
		canceled bool
	}
	var list []watched
	// collect lists the runner jobs of an index entry; since says when the
	// runner's clock started for that kind (assigned, or canceled).
	collect := func(tx *store.Tx, index, key string, canceled bool, keep func(*Job) bool, since func(*Job) *time.Time) error {
		ids, err := jobs.IDsBy(tx, index, key)
		if err != nil {
			return err
		}
		for _, id := range ids {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			if !keep(j) {
				continue
			}
			w := watched{id: j.ID, canceled: canceled}
			if t := since(j); t != nil {
				w.since = *t
			}
			if j.RunnerStartedAt != nil {
				w.started, w.start = true, *j.RunnerStartedAt
			}
			list = append(list, w)
		}
		return nil
	}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		err := collect(tx, "queue", StatusRunning, false,
			func(j *Job) bool { return j.RunnerID != 0 && j.Status == StatusRunning },
			func(j *Job) *time.Time { return j.StartedAt })
		if err != nil {
			return err
		}
		return collect(tx, "canceling", "canceling", true,
			func(j *Job) bool { return j.Status == StatusCanceled && j.RunnerTokenHash != "" },
			func(j *Job) *time.Time { return j.FinishedAt })
	})
	if err != nil {
		return err
	}
	now := s.now()
	for _, w := range list {
		// Nothing heard before this process started is known: its start
		// counts as the last word.
		last := s.runnerBootAt
		if w.started && w.start.After(last) {
			last = w.start
		}
		if w.canceled {
			// The cancel asked the runner for its last word: it has the
			// silence timeout from then, or from its latest report.
			if w.since.After(last) {
				last = w.since
			}
			if t, ok := s.runnerSeen.Load(w.id); ok && t.(time.Time).After(last) {
				last = t.(time.Time)
			}
			if silent := now.Sub(last); silent > s.cfg.RunnerSilenceTimeout {
				s.log.Info("a runner sent no last word on its canceled job: its token is dropped", zap.Int64("job", w.id), zap.Duration("silent", silent))
				s.closeCanceled(ctx, w.id)
			}
			continue
		}
		if !w.started {
			if w.since.After(last) {
				last = w.since
			}
			if now.Sub(last) > s.cfg.RunnerStartTimeout {
				s.log.Info("a runner never started its job: queued again", zap.Int64("job", w.id))
				s.requeue(ctx, w.id)
			}
			continue
		}
		if t, ok := s.runnerSeen.Load(w.id); ok && t.(time.Time).After(last) {
			last = t.(time.Time)
		}
		if silent := now.Sub(last); silent > s.cfg.RunnerSilenceTimeout {
			s.log.Warn("a runner stopped reporting on its job: failed as stuck", zap.Int64("job", w.id), zap.Duration("silent", silent))
			s.appendTraceLine(w.id, fmt.Sprintf("ERROR: Job failed (system failure): the runner sent no trace nor keep-alive for %s", silent.Round(time.Second)))
			s.complete(ctx, w.id, StatusFailed, "runner_system_failure", nil, nil)
		}
	}
	return nil
}
