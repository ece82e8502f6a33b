package internal

// A pipeline's jobs are stored, and decided, a bounded number per
// transaction. Stored in one, a 1 MiB CI file's 23,000 jobs held the
// store's writer for seconds, every other write of the server waiting
// behind it; and bbolt splits a page only when its transaction commits,
// so each key added to the same page of one long transaction moved all
// those added before it: the cost grew with the square of the number of
// jobs.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// The bounds of one transaction of createJobs: CreateChunkJobs jobs, or
// about createChunkBytes of their definitions, whichever comes first; and
// of the jobs one call of process decides, each of which also records a
// commit status and publishes an event, hence fewer. A step takes a few
// milliseconds, tens on a busy machine (see BenchmarkPipelineCreation).
const (
	CreateChunkJobs  = 200
	createChunkBytes = 1 << 20
	DecideChunkJobs  = 100
)

// errCreationMoved: the pipeline is no longer being created as this
// creator left it (another creator finished it, or it is gone).
var errCreationMoved = errors.New("ci: the pipeline's creation was taken over or its pipeline is gone")

// pipelineJobs parses a pipeline's CI file and selects its jobs and stages
// (pipeline.Config.ForPipeline): cicd.ErrNoJobs when none applies to the
// pipeline's ref and source, a *pipeline.ConfigError for an invalid file
// or one past ci.max_pipeline_jobs. Files the CI file includes are read
// from the pipeline's repository at its commit; a failure to read one is
// an error of its own, not the file's.
func (s *Service) pipelineJobs(ctx context.Context, src []byte, p *Pipeline) ([]string, []pipeline.Job, error) {
	cfg, err := pipeline.ParseFiles(ctx, src, s.repoFiles(p.ProjectID, p.SHA))
	if err != nil {
		return nil, nil, err
	}
	ref := pipeline.RefInfo{Name: p.Ref, IsTag: p.Tag, Source: pipeline.Source(p.Source), ProjectPath: p.ProjectPath}
	if cfg.UsesVariableExpressions() {
		if ref.Variables, err = s.expressionVariables(ctx, p); err != nil {
			return nil, nil, err
		}
	}
	stages, specs, err := cfg.ForPipeline(ref, s.cfg.MaxPipelineJobs)
	if err != nil {
		return nil, nil, err
	}
	if len(specs) == 0 {
		return nil, nil, cicd.ErrNoJobs
	}
	return stages, specs, nil
}

// expressionVariables looks up the variables only/except `variables`
// expressions see at creation: the predefined ones a pipeline has before
// its jobs exist, under the project's and groups' (protected ones for a
// protected branch or any tag). A trigger's variables are stored with the
// pipeline, after this, and are not seen.
func (s *Service) expressionVariables(ctx context.Context, p *Pipeline) (func(string) (string, bool), error) {
	protected := true
	if !p.Tag {
		var err error
		if protected, err = s.protection.IsProtected(ctx, p.ProjectID, p.Ref); err != nil {
			return nil, err
		}
	}
	secrets, err := s.secretVariables(ctx, p.ProjectID, protected)
	if err != nil {
		return nil, err
	}
	facts := pipeline.JobFacts{
		ServerURL: s.server.ExternalURL(), ServerVersion: s.version,
		CommitSHA: p.SHA, BeforeSHA: p.BeforeSHA, RefName: p.Ref, IsTag: p.Tag,
		ProjectID: p.ProjectID, ProjectPath: p.ProjectPath, UserID: p.UserID,
		Triggered: p.Source == SourceTrigger, PipelineSource: pipeline.Source(p.Source),
	}
	values := map[string]string{}
	for _, v := range pipeline.Predefined(facts) {
		if v.Public {
			values[v.Key] = v.Value
		}
	}
	for _, v := range secrets {
		values[v.Key] = v.Value
	}
	return func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	}, nil
}

// createJobs stores the jobs of a pipeline being created (Creating), from
// the JobsCreated-th of specs on, at most CreateChunkJobs per transaction,
// each of which records how far it got; then, in one more, clears
// Creating and decides the first stages (process). A crash in between
// leaves a pipeline that resumeCreations completes at the next start.
//
// The last transaction decides a whole stage at once, which is why a
// pipeline's jobs are capped (ci.max_pipeline_jobs).
func (s *Service) createJobs(ctx context.Context, p *Pipeline, specs []pipeline.Job) error {
	for from := p.JobsCreated; from < len(specs); {
		rows, end, err := s.jobRows(p, specs, from)
		if err != nil {
			return err
		}
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			cur, err := creatingPipeline(tx, p.ID, from)
			if err != nil {
				return err
			}
			for _, j := range rows {
				j.ID = 0 // this function may run again: ids are the store's
				if err := jobs.Insert(tx, j); err != nil {
					return err
				}
			}
			cur.JobsCreated = end
			return pipelines.Update(tx, cur)
		})
		if err != nil {
			return err
		}
		from = end
		s.observe(Step{PipelineID: p.ID, Stored: len(rows), Done: end, Total: len(specs)})
	}
	deciding := false
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := creatingPipeline(tx, p.ID, len(specs))
		if err != nil {
			return err
		}
		cur.Creating, cur.JobsCreated = false, 0
		if err := pipelines.Update(tx, cur); err != nil {
			return err
		}
		if err := s.process(tx, cur.ID); err != nil {
			return err
		}
		cur, err = pipelines.Get(tx, cur.ID)
		deciding = err == nil && cur.Deciding
		return err
	})
	if err == nil {
		s.observe(Step{PipelineID: p.ID, Done: len(specs), Total: len(specs), Decided: true, Deciding: deciding})
	}
	return err
}

// creatingPipeline loads a pipeline whose creation has stored done jobs.
func creatingPipeline(tx *store.Tx, id int64, done int) (*Pipeline, error) {
	p, err := pipelines.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errCreationMoved
	}
	if err != nil {
		return nil, err
	}
	if !p.Creating || p.JobsCreated != done {
		return nil, errCreationMoved
	}
	return p, nil
}

// jobRows builds the rows of the next chunk of specs from the from-th,
// outside any transaction, and says where the chunk ends.
func (s *Service) jobRows(p *Pipeline, specs []pipeline.Job, from int) ([]*Job, int, error) {
	var rows []*Job
	size, end := 0, from
	for ; end < len(specs) && len(rows) < CreateChunkJobs && size < createChunkBytes; end++ {
		spec := &specs[end]
		raw, err := json.Marshal(spec)
		if err != nil {
			return nil, 0, err
		}
		j := &Job{ProjectID: p.ProjectID, PipelineID: p.ID, Name: spec.Name, Stage: spec.Stage, StageIdx: spec.StageIndex,
			Ref: p.Ref, SHA: p.SHA, Tag: p.Tag, Status: StatusCreated, When: string(spec.When),
			AllowFailure: spec.AllowFailure, Tags: spec.Tags, Spec: raw, UserID: p.UserID, CreatedAt: p.CreatedAt}
		if spec.Environment != nil {
			j.Environment, j.EnvironmentURL = s.expandEnvironment(p, spec)
		}
		rows = append(rows, j)
		size += len(raw)
	}
	return rows, end, nil
}

// Step is one transaction of the bounded work on a pipeline's jobs, as
// SetStepObserver reports it.
type Step struct {
	PipelineID int64
	// Stored is how many jobs the step stored; Done of Total are stored
	// now (both 0 for a step of continueDeciding).
	Stored, Done, Total int
	// Decided: the step decided jobs (process); Deciding: some of the
	// stage are left for the next steps.
	Decided, Deciding bool
}

// SetStepObserver has fn called after each transaction that stored or
// decided a chunk of a pipeline's jobs (createJobs, continueDeciding).
// For tests, which check that a large pipeline is made in bounded steps;
// call it before the app starts.
func (s *Service) SetStepObserver(fn func(Step)) { s.observeStep = fn }

func (s *Service) observe(st Step) {
	if s.observeStep != nil {
		s.observeStep(st)
	}
}

// settleLoop completes, at start, what a crash cut short (pipelines being
// created: resumeCreation), then decides the rest of the stages that
// process decided only in part (continueDeciding), at start and whenever
// process leaves one so (wakeDecider), until ctx ends.
func (s *Service) settleLoop(ctx context.Context) {
	var creating []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		creating, err = pipelines.IDsBy(tx, "unsettled", "creating")
		return err
	})
	if err != nil {
		s.log.Error("pipelines left half made: not listed", zap.Error(err))
	}
	for _, id := range creating {
		if ctx.Err() != nil {
			return
		}
		if err := s.resumeCreation(ctx, id); err != nil && !errors.Is(err, errCreationMoved) {
			s.log.Error("a pipeline left half made could not be completed", zap.Int64("pipeline", id), zap.Error(err))
		}
	}
	for {
		var deciding []int64
		err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			deciding, err = pipelines.IDsBy(tx, "unsettled", "deciding")
			return err
		})
		if err != nil && ctx.Err() == nil {
			s.log.Error("pipelines being decided: not listed", zap.Error(err))
		}
		for _, id := range deciding {
			if ctx.Err() != nil {
				return
			}
			s.continueDeciding(ctx, id)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.decideWake:
		}
	}
}

// wakeDecider tells settleLoop that a pipeline has a stage left to
// decide; it never blocks (commit hooks call it).
func (s *Service) wakeDecider() {
	select {
	case s.decideWake <- struct{}{}:
	default:
	}
}

// continueDeciding decides the rest of a pipeline's stage after process
// decided its first DecideChunkJobs jobs, a transaction per chunk, until
// the pipeline is no longer Deciding (process clears it once the stage is
// done; any other call of process meanwhile decides a chunk too).
func (s *Service) continueDeciding(ctx context.Context, id int64) {
	for ctx.Err() == nil {
		deciding := false
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			deciding = false
			p, err := pipelines.Get(tx, id)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil || !p.Deciding {
				return err
			}
			if err := s.process(tx, id); err != nil {
				return err
			}
			p, err = pipelines.Get(tx, id)
			deciding = err == nil && p.Deciding
			return err
		})
		if err != nil {
			if ctx.Err() == nil { // else the next start goes on
				s.log.Error("a pipeline's stage could not be decided further", zap.Int64("pipeline", id), zap.Error(err))
			}
			return
		}
		s.nudge()
		s.observe(Step{PipelineID: id, Decided: true, Deciding: deciding})
		if !deciding {
			return
		}
	}
}

// resumeCreation completes a pipeline whose creation a crash cut short:
// its CI file is read and parsed again at its commit, which gives the
// same jobs in the same order, and the jobs not stored yet are. A
// pipeline whose jobs cannot be had again (its repository gone, the limit
// lowered since) is failed instead, its stored jobs canceled.

func (s *Service) resumeCreation(ctx context.Context, id int64) error {
	var p *Pipeline
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		p, err = pipelines.Get(tx, id)
		return err
	}); err != nil {
		return err
	}
	if !p.Creating {
		return nil
	}
	src, _, err := s.readConfig(ctx, p.ProjectID, p.SHA)
	var specs []pipeline.Job
	if err == nil {
		var stages []string
		stages, specs, err = s.pipelineJobs(ctx, src, p)
		if err == nil && (len(specs) < p.JobsCreated || !slices.Equal(stages, p.Stages)) {
			err = errors.New("its CI file no longer gives the jobs already stored")
		}
	}
	if err != nil {
		return s.abandonCreation(ctx, p, err)
	}
	s.log.Info("completing a pipeline left half made", zap.Int64("pipeline", id),
		zap.Int("stored", p.JobsCreated), zap.Int("jobs", len(specs)))
	if err := s.createJobs(ctx, p, specs); err != nil {
		return err
	}
	s.nudge()
	return nil
}

// abandonCreation fails a pipeline whose creation cannot be completed,
// with why in yaml_errors, and cancels the jobs it has (at most
// ci.max_pipeline_jobs: no job of it ever left created, so there is no
// status nor event to publish).
func (s *Service) abandonCreation(ctx context.Context, p *Pipeline, why error) error {
	s.log.Warn("a pipeline left half made is failed", zap.Int64("pipeline", p.ID), zap.Error(why))
	msg := "The pipeline's creation was interrupted and could not be completed: " + why.Error()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := creatingPipeline(tx, p.ID, p.JobsCreated)
		if err != nil {
			return err
		}
		ids, err := jobs.IDsBy(tx, "pipeline", store.IDString(cur.ID))
		if err != nil {
			return err
		}
		now := s.now()
		for _, id := range ids {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			if j.Status == StatusCreated {
				j.Status, j.FinishedAt = StatusCanceled, &now
				if err := jobs.Update(tx, j); err != nil {
					return err
				}
			}
		}
		cur.Creating, cur.JobsCreated = false, 0
		cur.YAMLErrors, cur.Status, cur.FinishedAt, cur.UpdatedAt = &msg, StatusFailed, &now, now
		return pipelines.Update(tx, cur)
	})
}
