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
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
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
	files := s.repoFiles(p.ProjectID, p.SHA, s.pipelineReader(ctx, p.UserID)).(ciFiles)
	files.ruleContext = s.includeRuleContext(ctx, p)
	cfg, err := pipeline.ParseFiles(ctx, src, files)
	if err != nil {
		return nil, nil, err
	}
	ref, err := s.pipelineRef(ctx, cfg, p)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Workflow != nil {
		p.AutoCancel = cfg.Workflow.AutoCancelOnNewCommit
		if cfg.Workflow.Name != "" {
			if p.Name, err = s.pipelineName(ctx, cfg, ref, p); err != nil {
				return nil, nil, err
			}
		}
	}
	stages, specs, err := cfg.ForPipeline(ref, s.cfg.MaxPipelineJobs)
	if errors.Is(err, ciexpr.ErrWorkflowFiltered) {
		return nil, nil, cicd.ErrFilteredByWorkflow
	}
	if err != nil {
		return nil, nil, err
	}
	if len(specs) == 0 {
		return nil, nil, cicd.ErrNoJobs
	}
	return stages, specs, nil
}

// pipelineRef is what the jobs of p are chosen by: its ref and source,
// and, for a file whose rules or only/except need them, the variables
// expressions see, the paths p changed and the files of its commit.
func (s *Service) pipelineRef(ctx context.Context, cfg *pipeline.Config, p *Pipeline) (pipeline.RefInfo, error) {
	ref := pipeline.RefInfo{Name: p.Ref, IsTag: p.Tag, Source: pipeline.Source(p.Source), ProjectPath: p.ProjectPath}
	if cfg.UsesVariableExpressions() {
		var err error
		if ref.Variables, err = s.expressionVariables(ctx, p); err != nil {
			return ref, err
		}
	}
	ref.Changed, ref.FileExists = s.changedPaths(ctx, p), s.fileExists(ctx, p)
	return ref, nil
}

// includeRuleContext is what `include: rules` of p's configuration are
// evaluated against, made on first use: the variables expressions see
// (the file's own are not read yet, as in GitLab), p's changes and files.
func (s *Service) includeRuleContext(ctx context.Context, p *Pipeline) func() ciexpr.RuleContext {
	var made *ciexpr.RuleContext
	return func() ciexpr.RuleContext {
		if made == nil {
			rc := ciexpr.RuleContext{Changed: s.changedPaths(ctx, p), FileExists: s.fileExists(ctx, p)}
			if lookup, err := s.expressionVariables(ctx, p); err == nil {
				rc.Lookup = lookup
			} else {
				s.log.Info("include rules: the pipeline's variables could not be read; none is seen", zap.Error(err))
			}
			made = &rc
		}
		return *made
	}
}

// maxPipelineName is GitLab's bound on a pipeline's name.
const maxPipelineName = 255

// pipelineName is `workflow: name` with the variables expanded that a
// pipeline has at creation: the pipeline's (predefined, project, group,
// its own), then the matched workflow rule's, then the file's global ones.
func (s *Service) pipelineName(ctx context.Context, cfg *pipeline.Config, ref pipeline.RefInfo, p *Pipeline) (string, error) {
	name := cfg.Workflow.Name
	if strings.Contains(name, "$") {
		if ref.Variables == nil {
			var err error
			if ref.Variables, err = s.expressionVariables(ctx, p); err != nil {
				return "", err
			}
		}
		wf := cfg.WorkflowFor(ref)
		name = ciexpr.Expand(name, func(key string) (string, bool) {
			if v, ok := ref.Variables(key); ok {
				return v, true
			}
			for i := len(wf.Variables) - 1; i >= 0; i-- {
				if wf.Variables[i].Key == key {
					return wf.Variables[i].Value, true
				}
			}
			for i := len(cfg.Variables) - 1; i >= 0; i-- {
				if cfg.Variables[i].Key == key {
					return cfg.Variables[i].Value, true
				}
			}
			return "", false
		})
	}
	name = strings.TrimSpace(name)
	if len(name) > maxPipelineName {
		name = name[:maxPipelineName]
		for !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	return name, nil
}

// maxExistsFiles is how many files of a commit `rules: exists` globs are
// matched against, GitLab's bound: past it, a glob that matched none of
// them does not hold.
const maxExistsFiles = 10_000

// changedPaths answers `changes` for a pipeline (pipeline.RefInfo.Changed):
// the paths a push changed since its before-SHA, a merge request's since
// the merge base with its target branch, or since the merge base with
// compare_to's commit; unknown for what GitLab counts as having no
// changes to compare (ciexpr.ChangesKnown), a compare_to that names no
// commit, or a before-SHA that is gone (a force push that dropped it).
// Each comparison is made once per pipeline.
func (s *Service) changedPaths(ctx context.Context, p *Pipeline) func(string) ([]string, bool) {
	type answer struct {
		paths []string
		known bool
	}
	made := map[string]answer{}
	return func(compareTo string) ([]string, bool) {
		if a, ok := made[compareTo]; ok {
			return a.paths, a.known
		}
		var a answer
		base := p.BeforeSHA
		if compareTo != "" {
			sha, err := s.git.Resolve(readAsCI(ctx), p.ProjectID, compareTo)
			base = sha
			if err != nil {
				base = ""
			}
		} else if !ciexpr.ChangesKnown(p.Source, p.BeforeSHA, p.Tag) {
			base = ""
		} else if mr := p.MergeRequest; mr != nil && mr.SourceProjectID != mr.ProjectID {
			// A fork's: its target branch is in another repository.
			base = ""
		} else if mr != nil {
			// A merge request's changes: since the merge base with its
			// target branch's head.
			sha, err := s.git.Resolve(readAsCI(ctx), p.ProjectID, "refs/heads/"+mr.TargetBranch)
			base = sha
			if err != nil {
				base = ""
			}
		}
		if base != "" {
			diffs, err := s.merges.Diffs(readAsCI(ctx), p.ProjectID, base, p.SHA)
			if err == nil {
				a.known = true
				seen := map[string]bool{}
				for _, d := range diffs {
					for _, path := range []string{d.OldPath, d.NewPath} {
						if path != "" && !seen[path] {
							seen[path] = true
							a.paths = append(a.paths, path)
						}
					}
				}
			} else {
				s.log.Info("rules: changes: the comparison could not be made; changes hold",
					zap.Int64("project", p.ProjectID), zap.String("base", base), zap.Error(err))
			}
		}
		made[compareTo] = a
		return a.paths, a.known
	}
}

// fileExists answers `rules: exists` for a pipeline's commit: a literal
// path is looked up, a glob is matched against the commit's files (the
// first maxExistsFiles, listed once per pipeline).
func (s *Service) fileExists(ctx context.Context, p *Pipeline) func(*ciexpr.Glob) bool {
	var files []string
	listed := false
	return func(g *ciexpr.Glob) bool {
		if path, literal := g.Literal(); literal {
			_, err := s.git.File(readAsCI(ctx), p.ProjectID, p.SHA, path, 1)
			return err == nil || errors.Is(err, gitread.ErrTooLarge)
		}
		if !listed {
			listed = true
			files = s.listFiles(ctx, p.ProjectID, p.SHA, maxExistsFiles)
		}
		for _, f := range files {
			if g.Match(f) {
				return true
			}
		}
		return false
	}
}

// listFiles lists the paths of the files of commit sha, breadth first, at
// most limit of them.
func (s *Service) listFiles(ctx context.Context, projectID int64, sha string, limit int) []string {
	var files []string
	dirs := []string{""}
	for len(dirs) > 0 && len(files) < limit {
		dir := dirs[0]
		dirs = dirs[1:]
		entries, err := s.git.Tree(readAsCI(ctx), projectID, sha, dir, 0, limit)
		if err != nil {
			continue
		}
		for _, e := range entries {
			switch e.Type {
			case gitread.Tree:
				dirs = append(dirs, e.Path)
			case gitread.Blob:
				if len(files) < limit {
					files = append(files, e.Path)
				}
			}
		}
	}
	return files
}

// expressionVariables looks up the variables only/except `variables`
// expressions see at creation: the predefined ones a pipeline has before
// its jobs exist (9.x's and today's), under the project's and groups'
// (protected ones for a protected branch or any tag), under the
// pipeline's own (a trigger's or a schedule's).
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
	for _, v := range s.todayVariables(ctx, p, &Job{Ref: p.Ref, Tag: p.Tag, SHA: p.SHA}, protected) {
		if _, ok := values[v.Key]; !ok && v.Public {
			values[v.Key] = v.Value
		}
	}
	for _, v := range secrets {
		values[v.Key] = v.Value
	}
	for _, v := range p.requestVariables {
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
	present, needed := neededNames(specs)
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
			AllowFailure: spec.AllowFailure, Tags: spec.Tags, Spec: raw, UserID: p.UserID, CreatedAt: p.CreatedAt,
			Needs: spec.Needs, Needed: needed[spec.Name], BlockedOn: firstBlocker(spec.Needs, present),
			Bridge: spec.Bridge()}
		if spec.Environment != nil {
			j.Environment, j.EnvironmentURL = s.expandEnvironment(p, spec)
		}
		j.ResourceGroup = s.expandResourceGroup(p, spec)
		j.StartAfter = spec.StartAfter
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
	src, _, err := s.pipelineConfig(ctx, p.ProjectID, p.SHA, p.Upstream)
	if err == nil {
		// Its jobs were chosen seeing the variables it was asked with
		// (stored sealed apart): the same choice needs them again.
		p.requestVariables, err = s.pipelineRunVariables(ctx, p)
	}
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
