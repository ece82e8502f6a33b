package internal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// ConfigPath is where a project's CI configuration lives in its repository.
const ConfigPath = ".gitlab-ci.yml"

// Pipeline sources as pipelines record them.
const (
	SourcePush              = string(pipeline.SourcePush)
	SourceAPI               = string(pipeline.SourceAPI)
	SourceMergeRequestEvent = string(pipeline.SourceMergeRequestEvent)
)

// pipelineRequest is what a new pipeline is made from.
type pipelineRequest struct {
	project   projects.ProjectInfo
	ref       string // short name
	tag       bool
	sha       string
	beforeSHA string
	source    string
	userID    int64
	// upstream is set for a trigger job's downstream pipeline
	// (bridge.go).
	upstream *Upstream
	// inserted, when set, runs in the transaction that stores the
	// pipeline: what must exist as soon as it does (a trigger's
	// variables, which its jobs read).
	inserted func(tx *store.Tx, p *Pipeline) error
	// variables are the pipeline's own (a trigger's, a schedule's), which
	// rules and only/except expressions see above every other.
	variables []pipeline.Variable
	// mergeRequest makes a merge request pipeline (source
	// merge_request_event) of the merge request it describes.
	mergeRequest *pipeline.MergeRequestFacts
	// dropOnErrors stores no pipeline for a CI file with errors: the
	// caller gets a *cicd.ConfigError instead (the web form's run).
	dropOnErrors bool
}

// readAsCI is ctx for CI's reads of a repository: as the server, for
// every caller has been checked (or is the server) before CI reads, and a
// trigger's pipeline or another module's question comes with no principal
// that may read the code itself.
func readAsCI(ctx context.Context) context.Context {
	return auth.WithPrincipal(ctx, auth.System())
}

// readConfig reads the CI file and the commit summary at sha, the file
// bounded by pipeline.MaxConfigBytes: a larger one is never read.
func (s *Service) readConfig(ctx context.Context, projectID int64, sha string) ([]byte, CommitSummary, error) {
	ctx = readAsCI(ctx)
	c, err := s.git.Commit(ctx, projectID, sha)
	if err != nil {
		return nil, CommitSummary{}, fmt.Errorf("ci: commit %s: %w", sha, err)
	}
	sum := summarize(c)
	text, err := s.git.File(ctx, projectID, c.ID, ConfigPath, pipeline.MaxConfigBytes)
	switch {
	case errors.Is(err, gitread.ErrPathNotFound):
		return nil, sum, cicd.ErrNoConfig
	case errors.Is(err, gitread.ErrTooLarge):
		// Parse words the refusal; the huge blob is not read to get it.
		return make([]byte, pipeline.MaxConfigBytes+1), sum, nil
	case err != nil:
		return nil, sum, err
	}
	return text, sum, nil
}

// pipelineConfig is readConfig for a pipeline, whose upstream, when it is
// a child, names its CI files instead of ConfigPath (bridge.go).
func (s *Service) pipelineConfig(ctx context.Context, projectID int64, sha string, up *Upstream) ([]byte, CommitSummary, error) {
	if up == nil || len(up.Include) == 0 {
		return s.readConfig(ctx, projectID, sha)
	}
	c, err := s.git.Commit(readAsCI(ctx), projectID, sha)
	if err != nil {
		return nil, CommitSummary{}, fmt.Errorf("ci: commit %s: %w", sha, err)
	}
	return pipeline.ChildConfig(up.Include), summarize(c), nil
}

// repoFiles reads the files a CI file includes (`include: local`) from
// the project's repository at sha, as CI reads the CI file itself, and
// those of other projects (`include: project`) as reader may read them
// (nil: public projects only; includeproject.go).
func (s *Service) repoFiles(projectID int64, sha string, reader *auth.Principal) pipeline.Files {
	return ciFiles{s: s, projectID: projectID, sha: sha, reader: reader}
}

type ciFiles struct {
	s         *Service
	projectID int64
	sha       string
	reader    *auth.Principal
	// ruleContext, when set, is the pipeline's context for `include:
	// rules` (pipeline.IncludeRules).
	ruleContext func() ciexpr.RuleContext
}

// IncludeRuleContext implements pipeline.IncludeRules.
func (f ciFiles) IncludeRuleContext() ciexpr.RuleContext {
	if f.ruleContext == nil {
		return ciexpr.RuleContext{}
	}
	return f.ruleContext()
}

func (f ciFiles) Read(ctx context.Context, path string) ([]byte, error) {
	text, err := f.s.git.File(readAsCI(ctx), f.projectID, f.sha, path, pipeline.MaxConfigBytes)
	switch {
	case errors.Is(err, gitread.ErrPathNotFound):
		return nil, fmt.Errorf("ci: include %s: %w", path, fs.ErrNotExist)
	case errors.Is(err, gitread.ErrTooLarge):
		// The parser words the refusal; the huge blob is not read to get it.
		return make([]byte, pipeline.MaxConfigBytes+1), nil
	case err != nil:
		return nil, fmt.Errorf("ci: include %s: %w", path, err)
	}
	return text, nil
}

// List lists a directory for wildcard includes, at most one more entry
// than the parser looks at in all, so a huge directory is refused rather
// than read whole.
func (f ciFiles) List(ctx context.Context, dir string) ([]string, error) {
	entries, err := f.s.git.Tree(readAsCI(ctx), f.projectID, f.sha, dir, 0, pipeline.MaxGlobVisits+1)
	if errors.Is(err, gitread.ErrPathNotFound) {
		return nil, fmt.Errorf("ci: include %s: %w", dir, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("ci: include %s: %w", dir, err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		switch e.Type {
		case gitread.Tree:
			out = append(out, e.Name+"/")
		case gitread.Blob:
			out = append(out, e.Name)
		}
	}
	return out, nil
}

func summarize(c gitread.Commit) CommitSummary {
	return CommitSummary{ID: c.ID, ShortID: c.ID[:8], Title: c.Title(), Message: c.Message,
		AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, CreatedAt: c.Committer.When.UTC()}
}

// createPipeline reads and parses the CI file at the request's sha and
// stores the pipeline with its jobs, decided as far as stage gating allows
// (createJobs: in transactions of a bounded size, so that a pipeline of
// thousands of jobs never holds every other writer of the server). A CI
// file with errors, or with more jobs than ci.max_pipeline_jobs, gives a
// failed pipeline with yaml_errors and no jobs; no CI file, or no job for
// this ref, gives none (cicd.ErrNoConfig, cicd.ErrNoJobs).
func (s *Service) createPipeline(ctx context.Context, req pipelineRequest) (*Pipeline, error) {
	src, commit, err := s.pipelineConfig(ctx, req.project.ID, req.sha, req.upstream)
	if err != nil {
		return nil, err
	}
	now := s.now()
	committed := commit.CreatedAt
	p := &Pipeline{ProjectID: req.project.ID, Ref: req.ref, SHA: req.sha, BeforeSHA: req.beforeSHA, Tag: req.tag,
		Source: req.source, Status: StatusCreated, UserID: req.userID, CreatedAt: now, UpdatedAt: now,
		CommittedAt: &committed, Commit: commit, ProjectWebURL: req.project.WebURL,
		ProjectPath: req.project.PathWithNamespace, requestVariables: req.variables, MergeRequest: req.mergeRequest,
		Upstream: req.upstream}
	stages, specs, perr := s.pipelineJobs(ctx, src, p)
	switch {
	case errors.Is(perr, cicd.ErrNoJobs):
		return nil, perr // cicd.ErrNoJobs, or ErrFilteredByWorkflow
	case perr != nil && !errors.Is(perr, pipeline.ErrInvalidConfig):
		return nil, perr // an included file could not be read: not the file's fault
	case perr != nil && req.dropOnErrors:
		return nil, &cicd.ConfigError{Errors: perr.Error()}
	case perr != nil:
		msg := perr.Error()
		p.YAMLErrors, p.Status, p.FinishedAt = &msg, StatusFailed, &now
	default:
		p.Stages, p.Creating = stages, true
	}
	// Once the pipeline is stored its jobs must follow, even when the
	// request that asked for it is gone: a canceled context would leave it
	// half made until the next start.
	ctx = context.WithoutCancel(ctx)
	// A pipeline whose jobs fit one of createJobs' chunks is stored with
	// them, and its first stages decided, in one transaction, as GitLab
	// creates a pipeline: no reader ever lists it without its jobs. A
	// larger one is stored first, then its jobs in chunks (createJobs), so
	// that it never holds every other writer.
	var stored int
	whole, deciding := false, false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p.ID, p.Creating, whole = 0, p.YAMLErrors == nil, false
		if err := pipelines.Insert(tx, p); err != nil {
			return err
		}
		if req.inserted != nil {
			if err := req.inserted(tx, p); err != nil {
				return err
			}
		}
		if p.YAMLErrors != nil || len(specs) > CreateChunkJobs {
			return nil
		}
		rows, end, err := s.jobRows(p, specs, 0)
		if err != nil || end != len(specs) {
			return err // more than one chunk: createJobs stores them
		}
		for _, j := range rows {
			if err := jobs.Insert(tx, j); err != nil {
				return err
			}
		}
		p.Creating = false
		if err := pipelines.Update(tx, p); err != nil {
			return err
		}
		if err := s.process(tx, p.ID); err != nil {
			return err
		}
		cur, err := pipelines.Get(tx, p.ID)
		whole, stored, deciding = err == nil, len(rows), err == nil && cur.Deciding
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.YAMLErrors != nil {
		return p, nil
	}
	if whole {
		s.observe(Step{PipelineID: p.ID, Stored: stored, Done: stored, Total: len(specs)})
		s.observe(Step{PipelineID: p.ID, Done: len(specs), Total: len(specs), Decided: true, Deciding: deciding})
	} else if err := s.createJobs(ctx, p, specs); err != nil {
		return nil, err
	}
	s.nudge()
	s.autoCancel(ctx, p)
	view := *p
	view.Creating = false
	return &view, nil
}

// errNotACommit: a tag points at a tree or a blob, which has no CI file.
var errNotACommit = errors.New("ci: the tag does not point at a commit")

// refHead is the commit at the head of a branch or tag of that short name,
// a branch first, and whether it is a tag's: cicd.ErrRefNotFound for
// neither, errNotACommit for a tag of a tree or a blob.
func (s *Service) refHead(ctx context.Context, projectID int64, ref string) (sha string, tag bool, err error) {
	ctx = readAsCI(ctx)
	sha, err = s.git.Resolve(ctx, projectID, "refs/heads/"+ref)
	if !errors.Is(err, gitread.ErrRevisionNotFound) {
		return sha, false, err
	}
	sha, err = s.git.Resolve(ctx, projectID, "refs/tags/"+ref)
	if !errors.Is(err, gitread.ErrRevisionNotFound) {
		return sha, true, err
	}
	// No commit: no such tag, or one that names no commit. Only a
	// refusal lists the tags, to say which.
	tags, err := s.git.Tags(ctx, projectID)
	if err != nil {
		return "", false, err
	}
	for _, t := range tags {
		if t.FullName == "refs/tags/"+ref {
			return "", true, fmt.Errorf("%w: the tag %q names no commit", errNotACommit, ref)
		}
	}
	return "", false, fmt.Errorf("%w: %q", cicd.ErrRefNotFound, ref)
}

// createForRefRequest makes the pipeline of a branch or tag head, as
// req says (no access check: runForRef's callers have made theirs); its
// sha and tag are found from req.ref, a branch first.
func (s *Service) createForRefRequest(ctx context.Context, req pipelineRequest) (*Pipeline, error) {
	sha, tag, err := s.refHead(ctx, req.project.ID, req.ref)
	if errors.Is(err, errNotACommit) {
		return nil, fmt.Errorf("%w: %w", cicd.ErrNoConfig, err) // a tagged tree has no CI file of a commit
	}
	if err != nil {
		return nil, err
	}
	req.sha, req.tag = sha, tag
	return s.createPipeline(ctx, req)
}

// latestJobs loads a pipeline's jobs, leaving out tries replaced by a
// retry, in id order.
func latestJobs(tx *store.Tx, pipelineID int64) ([]*Job, error) {
	ids, err := jobs.IDsBy(tx, "pipeline", store.IDString(pipelineID))
	if err != nil {
		return nil, err
	}
	out := make([]*Job, 0, len(ids))
	for _, id := range ids {
		j, err := jobs.Get(tx, id)
		if err != nil {
			return nil, err
		}
		if !j.Retried {
			out = append(out, j)
		}
	}
	return out, nil
}

// process applies stage gating to a pipeline (created jobs whose earlier
// stages are done become pending, manual or skipped), then decides the
// jobs with needs whose needed jobs allow it (decideNeeds, dag.go), and
// updates the pipeline's status from its jobs. Every change of a job's or pipeline's
// status goes through here, in the transaction that made it.
//
// It runs on every change of every job, so it must not read every job:
// that made a pipeline of n jobs cost n² decodes (a 1,000-job pipeline
// spent 80% of its 22 s there). The jobs' states come from the "state"
// index (which statuses each stage holds, no row decoded); only the
// created jobs of the stage being decided are loaded, and every job only
// once the pipeline has finished (its duration and coverage). The rules
// are cistatus's: a composite status depends only on which (status,
// allow_failure) pairs are present, so one representative of each is
// enough, and a stage is decided from the composite of the stages before
// it, as cistatus.Process does.
//
// One call decides at most DecideChunkJobs jobs: each costs a row, a
// commit status and an event, and a stage of thousands decided at once
// held every other writer for a fifth of a second. The rest of the stage
// is decided after the commit, in transactions of the same size
// (continueDeciding; Deciding marks the pipeline meanwhile, and a crash
// in between is completed at the next start). Deciding part of a stage
// first is the same as deciding it whole: a job's decision depends only
// on the stages before it.
func (s *Service) process(tx *store.Tx, pipelineID int64) error {
	p, err := pipelines.Get(tx, pipelineID)
	if err != nil {
		return err
	}
	if p.YAMLErrors != nil {
		return nil // failed at creation, for good, with no jobs
	}
	if p.Creating {
		// Its jobs are still being stored: gating a stage now could
		// decide it without the jobs still to come. createJobs decides
		// once they are all in.
		return nil
	}
	present, err := stageStates(tx, p)
	if err != nil {
		return err
	}
	now := s.now()
	deciding := false
	// Stage gating, then the jobs with needs, again while the latter
	// decide any: a job they skip may complete a stage (and a stage job
	// they wait for, and so on), which no later call would otherwise
	// come to decide.
	for budget := DecideChunkJobs; ; {
		n, more, err := s.decideStages(tx, p, present, budget, now)
		if err != nil {
			return err
		}
		budget -= n
		if !more {
			var m int
			m, more, err = s.decideNeeds(tx, p, present, budget, now)
			if err != nil {
				return err
			}
			budget -= m
			if m > 0 && !more {
				continue
			}
		}
		// The rest is decided in transactions of their own
		// (continueDeciding): its created jobs still count, so the
		// pipeline is not finished and later stages wait.
		deciding = more
		break
	}
	if deciding && !p.Deciding {
		tx.OnCommit(s.wakeDecider)
	}
	p.Deciding = deciding
	status := string(cistatus.Composite(statesOf(present)))
	if status == "" {
		status = StatusSkipped
	}
	changed := status != p.Status
	p.Status = status
	if p.StartedAt == nil && status == StatusRunning {
		p.StartedAt = &now
	}
	if finished(status) {
		if p.FinishedAt == nil || changed {
			p.FinishedAt = &now
		}
		list, err := latestJobs(tx, pipelineID)
		if err != nil {
			return err
		}
		p.Duration = runDuration(list)
		p.Coverage = averageCoverage(list)
	} else {
		p.FinishedAt, p.Duration = nil, nil
	}
	p.UpdatedAt = now
	if err := pipelines.Update(tx, p); err != nil {
		return err
	}
	if changed {
		if err := s.publishPipeline(tx, p); err != nil {
			return err
		}
		return s.mirrorUpstream(tx, p) // a depend bridge follows it
	}
	return nil
}

// decideStages decides, by stage gating, the created jobs without needs
// whose earlier stages are complete, at most limit of them, and records
// their new states in present. It says how many it decided and whether a
// stage has more left (decided in later transactions).
func (s *Service) decideStages(tx *store.Tx, p *Pipeline, present []map[jobState]bool, limit int, now time.Time) (int, bool, error) {
	decided := 0
	for stage := firstCreated(present); stage >= 0; stage = firstCreated(present) {
		prior := cistatus.Composite(statesOf(present[:stage]))
		if cistatus.Gate(prior, cistatus.WhenAlways) == cistatus.DecisionWait {
			break // an earlier stage is still under way
		}
		created, more, err := jobsInState(tx, p.ID, stage, StatusCreated, limit-decided)
		if err != nil {
			return decided, false, err
		}
		for _, j := range created {
			if err := s.decide(tx, p, j, cistatus.Gate(prior, cistatus.When(j.When)), now); err != nil {
				return decided, false, err
			}
			present[stage][jobState{j.Status, j.AllowFailure}] = true
		}
		decided += len(created)
		if more {
			return decided, true, nil
		}
		delete(present[stage], jobState{StatusCreated, false})
		delete(present[stage], jobState{StatusCreated, true})
	}
	return decided, false, nil
}

// decide moves a created job to what gating decided for it.
func (s *Service) decide(tx *store.Tx, p *Pipeline, j *Job, d cistatus.Decision, now time.Time) error {
	j.Status = string(d.Status())
	if d == cistatus.DecisionPending {
		j.QueuedAt = &now
	}
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	return s.publishJob(tx, j, p)
}

// jobState is a (status, allow_failure) pair: all a composite status
// looks at.
type jobState struct {
	status       string
	allowFailure bool
}

// jobStatuses are every status a job can be in.
var jobStatuses = []string{StatusCreated, StatusPending, StatusRunning, StatusSuccess, StatusFailed, StatusCanceled,
	StatusSkipped, StatusManual, StatusWaitingForResource, StatusScheduled}

// statusWaitingNeeds is how the "state" index files a created job with
// needs (waitsForNeeds): apart from the created jobs stage gating decides,
// and counted as created in every composite status (statesOf), so that
// the stages after it wait for it as GitLab's do.
const statusWaitingNeeds = "created+needs"

// indexedStatuses are the statuses the "state" index files jobs under.
var indexedStatuses = append(slices.Clone(jobStatuses), statusWaitingNeeds)

// stateKey is a job's key in the "state" index.
func stateKey(pipelineID int64, stage int, status string, allowFailure bool) string {
	af := "0"
	if allowFailure {
		af = "1"
	}
	return store.IDString(pipelineID) + "/" + strconv.Itoa(stage) + "/" + status + "/" + af
}

// stageStates says, per stage of the pipeline, which states its latest
// jobs are in, from the index alone.
func stageStates(tx *store.Tx, p *Pipeline) ([]map[jobState]bool, error) {
	out := make([]map[jobState]bool, len(p.Stages))
	for stage := range p.Stages {
		out[stage] = map[jobState]bool{}
		for _, status := range indexedStatuses {
			for _, af := range []bool{false, true} {
				ids, err := jobs.IDsBy(tx, "state", stateKey(p.ID, stage, status, af))
				if err != nil {
					return nil, err
				}
				if len(ids) > 0 {
					out[stage][jobState{status, af}] = true
				}
			}
		}
	}
	return out, nil
}

// firstCreated is the first stage holding created jobs, -1 when none does.
func firstCreated(present []map[jobState]bool) int {
	for stage, states := range present {
		if states[jobState{StatusCreated, false}] || states[jobState{StatusCreated, true}] {
			return stage
		}
	}
	return -1
}

// statesOf is one representative job per state present in the stages.
func statesOf(stages []map[jobState]bool) []cistatus.JobState {
	var out []cistatus.JobState
	for _, states := range stages {
		for st := range states {
			status := st.status
			if status == statusWaitingNeeds {
				status = StatusCreated
			}
			out = append(out, cistatus.JobState{Status: cistatus.Status(status), AllowFailure: st.allowFailure})
		}
	}
	return out
}

// jobsInState loads the first limit latest jobs of a stage in a status, in
// id order, and says whether there are more.
func jobsInState(tx *store.Tx, pipelineID int64, stage int, status string, limit int) ([]*Job, bool, error) {
	ids, err := idsInState(tx, pipelineID, stage, status)
	if err != nil {
		return nil, false, err
	}
	more := len(ids) > limit
	if more {
		ids = ids[:limit]
	}
	out := make([]*Job, 0, len(ids))
	for _, id := range ids {
		j, err := jobs.Get(tx, id)
		if err != nil {
			return nil, false, err
		}
		out = append(out, j)
	}
	return out, more, nil
}

// idsInState lists the latest jobs of a stage in a status, in id order.
func idsInState(tx *store.Tx, pipelineID int64, stage int, status string) ([]int64, error) {
	var ids []int64
	for _, af := range []bool{false, true} {
		more, err := jobs.IDsBy(tx, "state", stateKey(pipelineID, stage, status, af))
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	slices.Sort(ids)
	return ids, nil
}

// runDuration is the seconds jobs ran, as GitLab sums them (overlapping
// jobs of one stage count once: the union of their intervals).
func runDuration(list []*Job) *int64 {
	type span struct{ from, to time.Time }
	var spans []span
	for _, j := range list {
		if j.StartedAt != nil && j.FinishedAt != nil {
			spans = append(spans, span{*j.StartedAt, *j.FinishedAt})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	for i := 1; i < len(spans); i++ {
		for k := i; k > 0 && spans[k].from.Before(spans[k-1].from); k-- {
			spans[k], spans[k-1] = spans[k-1], spans[k]
		}
	}
	var total time.Duration
	cur := spans[0]
	for _, sp := range spans[1:] {
		if sp.from.After(cur.to) {
			total += cur.to.Sub(cur.from)
			cur = sp
			continue
		}
		if sp.to.After(cur.to) {
			cur.to = sp.to
		}
	}
	total += cur.to.Sub(cur.from)
	secs := int64(total / time.Second)
	return &secs
}

// averageCoverage is the mean of the jobs' coverage figures, nil when none
// has one.
func averageCoverage(list []*Job) *float64 {
	var sum float64
	n := 0
	for _, j := range list {
		if j.Coverage != nil {
			sum += *j.Coverage
			n++
		}
	}
	if n == 0 {
		return nil
	}
	avg := sum / float64(n)
	return &avg
}

// cancel stops a job that has not finished: canceled at once in the store;
// a running job's executor is told after the commit.
func (s *Service) cancel(tx *store.Tx, j *Job) error {
	if err := s.cancelOne(tx, j); err != nil {
		return err
	}
	return s.process(tx, j.PipelineID)
}

// cancelOne is cancel without deciding the pipeline again, for callers
// that cancel many of its jobs and decide once.
func (s *Service) cancelOne(tx *store.Tx, j *Job) error {
	wasRunning := j.Status == StatusRunning
	now := s.now()
	j.Status, j.FinishedAt, j.TokenHash = StatusCanceled, &now, ""
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	if err := s.cancelDownstream(tx, j); err != nil {
		return err
	}
	if wasRunning && !j.Bridge {
		// After the commit, and not in its hook's goroutine: commit hooks
		// run in the group commit's leader, and stopping the job is a call
		// to the executor that may take seconds, which every writer would
		// wait for.
		id := j.ID
		tx.OnCommit(func() { go s.stopRunning(id) })
	}
	return s.publishJob(tx, j, nil)
}

// retry clones a finished job as a new pending one (the old one stays,
// marked retried) and returns the clone. The jobs its needs had skipped
// are decided again.
func (s *Service) retry(tx *store.Tx, j *Job, userID int64) (*Job, error) {
	j.Retried = true
	if err := jobs.Update(tx, j); err != nil {
		return nil, err
	}
	now := s.now()
	clone := &Job{ProjectID: j.ProjectID, PipelineID: j.PipelineID, Name: j.Name, Stage: j.Stage, StageIdx: j.StageIdx,
		Ref: j.Ref, SHA: j.SHA, Tag: j.Tag, Status: StatusPending, When: j.When, AllowFailure: j.AllowFailure,
		Tags: j.Tags, Spec: j.Spec, UserID: userID, CreatedAt: now, QueuedAt: &now, Attempt: j.Attempt, Needs: j.Needs,
		Needed: j.Needed, Bridge: j.Bridge, ResourceGroup: j.ResourceGroup, StartAfter: j.StartAfter}
	if userID == 0 {
		clone.UserID = j.UserID
	}
	if err := jobs.Insert(tx, clone); err != nil {
		return nil, err
	}
	if err := s.publishJob(tx, clone, nil); err != nil {
		return nil, err
	}
	if err := resetSkippedDependents(tx, j.PipelineID, j.Name); err != nil {
		return nil, err
	}
	return clone, s.process(tx, j.PipelineID)
}

// retryFailed retries a pipeline's failed and canceled jobs and lets the
// jobs they had skipped be decided again: those of later stages, and the
// jobs that need them.
func (s *Service) retryFailed(tx *store.Tx, p *Pipeline, userID int64) error {
	list, err := latestJobs(tx, p.ID)
	if err != nil {
		return err
	}
	first := -1
	for _, j := range list {
		if j.Status == StatusFailed || j.Status == StatusCanceled {
			if first < 0 || j.StageIdx < first {
				first = j.StageIdx
			}
		}
	}
	if first < 0 {
		return nil
	}
	now := s.now()
	var retried []string
	for _, j := range list {
		switch {
		case j.Status == StatusFailed || j.Status == StatusCanceled:
			j.Retried = true
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
			clone := &Job{ProjectID: j.ProjectID, PipelineID: j.PipelineID, Name: j.Name, Stage: j.Stage, StageIdx: j.StageIdx,
				Ref: j.Ref, SHA: j.SHA, Tag: j.Tag, Status: StatusCreated, When: j.When, AllowFailure: j.AllowFailure,
				Tags: j.Tags, Spec: j.Spec, UserID: userID, CreatedAt: now, Needs: j.Needs, Needed: j.Needed, Bridge: j.Bridge}
			if err := jobs.Insert(tx, clone); err != nil {
				return err
			}
			retried = append(retried, j.Name)
		case j.Status == StatusSkipped && j.StageIdx > first:
			j.Status, j.BlockedOn = StatusCreated, ""
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
		}
	}
	// Jobs with needs may have been skipped by a retried job of their own
	// stage or a later one.
	for _, name := range retried {
		if err := resetSkippedDependents(tx, p.ID, name); err != nil {
			return err
		}
	}
	return s.process(tx, p.ID)
}

// cancelAll cancels every unfinished job of a pipeline, and decides the
// pipeline once, not once per job: each decision looks at every stage.
func (s *Service) cancelAll(tx *store.Tx, p *Pipeline) error {
	list, err := latestJobs(tx, p.ID)
	if err != nil {
		return err
	}
	for _, j := range list {
		if active(j.Status) {
			if err := s.cancelOne(tx, j); err != nil {
				return err
			}
		}
	}
	return s.process(tx, p.ID)
}

// play queues a manual job, as the user who played it.
func (s *Service) play(tx *store.Tx, j *Job, userID int64) error {
	now := s.now()
	j.Status, j.QueuedAt, j.UserID = StatusPending, &now, userID
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	if err := s.publishJob(tx, j, nil); err != nil {
		return err
	}
	// An optional manual job nobody played had skipped the jobs that
	// need it: they may run once it has.
	if err := resetSkippedDependents(tx, j.PipelineID, j.Name); err != nil {
		return err
	}
	return s.process(tx, j.PipelineID)
}

// creationVariables are the variables a job's keywords expanded at
// creation (environment, resource_group) see: the predefined ones known
// then and the job's YAML variables.
func (s *Service) creationVariables(p *Pipeline, spec *pipeline.Job) []pipeline.Variable {
	facts := pipeline.JobFacts{ServerURL: s.server.ExternalURL(), JobName: spec.Name, JobStage: spec.Stage,
		CommitSHA: p.SHA, BeforeSHA: p.BeforeSHA, RefName: p.Ref, IsTag: p.Tag, PipelineID: p.ID,
		ProjectID: p.ProjectID, ProjectPath: p.ProjectPath, UserID: p.UserID}
	return pipeline.Layers{Predefined: pipeline.Predefined(facts), YAML: spec.Variables}.Resolve()
}

// pipelineExists says whether a push pipeline for this ref move exists.
func (s *Service) pipelineExists(ctx context.Context, projectID int64, ref, before, after string) (bool, error) {
	found := false
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := pipelines.IDsBy(tx, "commit", store.IDString(projectID)+"/"+after)
		if err != nil {
			return err
		}
		for _, id := range ids {
			p, err := pipelines.Get(tx, id)
			if err != nil {
				return err
			}
			if p.Source == SourcePush && p.Ref == ref && p.BeforeSHA == before {
				found = true
			}
		}
		return nil
	})
	return found, err
}

// expandEnvironment is a job's environment name and URL with the
// variables known when the pipeline is made ($CI_COMMIT_REF_SLUG and the
// like, and the job's own), as GitLab expands them.
func (s *Service) expandEnvironment(p *Pipeline, spec *pipeline.Job) (string, string) {
	vars := s.creationVariables(p, spec)
	name := strings.TrimSpace(pipeline.ExpandVariables(spec.Environment.Name, vars))
	if !pipeline.ValidEnvironmentName(name) {
		name = spec.Environment.Name // as written: GitLab keeps an unexpandable name
	}
	return name, pipeline.ExpandVariables(spec.Environment.URL, vars)
}
