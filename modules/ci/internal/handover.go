package internal

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// executorJob builds what an executor receives for a job: its steps, every
// variable in precedence order, the clone and its dependencies' archives,
// all authorized by the job's token.
func (s *Service) executorJob(ctx context.Context, j *Job, p *Pipeline, spec *pipeline.Job, token string) (executor.Job, error) {
	return s.handover(ctx, j, p, spec, token, nil)
}

// handover is executorJob for an executor (r nil) or a runner (whose id,
// description and tags become CI_RUNNER_*).
func (s *Service) handover(ctx context.Context, j *Job, p *Pipeline, spec *pipeline.Job, token string, r *Runner) (executor.Job, error) {
	s.resolveCacheKeys(ctx, p.ProjectID, p.SHA, spec) // cachekey.go
	server := s.server.ExternalURL()
	env := j.Environment
	facts := pipeline.JobFacts{
		ServerURL: server, ServerVersion: s.version,
		JobID: j.ID, JobName: j.Name, JobStage: j.Stage, JobToken: token, JobManual: j.When == StatusManual,
		CommitSHA: j.SHA, BeforeSHA: p.BeforeSHA, RefName: j.Ref, IsTag: j.Tag,
		PipelineID: p.ID, ProjectID: p.ProjectID, ProjectPath: p.ProjectPath,
		EnvironmentName: env, EnvironmentURL: j.EnvironmentURL, RunnerDescription: j.Executor,
		UserID: j.UserID, Triggered: p.Source == SourceTrigger, PipelineSource: pipeline.Source(p.Source),
	}
	if env != "" {
		facts.EnvironmentSlug = pipeline.EnvironmentSlug(env)
	}
	if r != nil {
		facts.RunnerID, facts.RunnerDescription, facts.RunnerTags = r.ID, r.Description, r.Tags
	}
	if u, err := s.users.UserByID(ctx, j.UserID); err == nil {
		facts.UserEmail = u.Email
	}
	protected := false
	if !j.Tag {
		var err error
		if protected, err = s.protection.IsProtected(ctx, p.ProjectID, j.Ref); err != nil {
			return executor.Job{}, err
		}
	}
	projectVars, err := s.secretVariables(ctx, p.ProjectID, protected)
	if err != nil {
		return executor.Job{}, err
	}
	triggerVars, err := s.pipelineRunVariables(ctx, p) // a trigger's or a schedule's
	if err != nil {
		return executor.Job{}, err
	}
	today := append(s.todayVariables(ctx, p, j, protected), pipeline.NodeVariables(spec)...)
	predefined := pipeline.AddMissing(pipeline.Predefined(facts), today)
	dotenv, err := s.dotenvVariables(ctx, j, spec)
	if err != nil {
		return executor.Job{}, err
	}
	layers := pipeline.Layers{Predefined: predefined, YAML: spec.Variables, Dotenv: dotenv, Project: projectVars, Trigger: triggerVars}
	var vars []executor.Variable
	for i, v := range layers.Ordered() {
		// The predefined ones come first: their secrets carry the job's
		// token and are always masked; a user's secret only when it is
		// long enough to be masked.
		masked := !v.Public && (i < len(predefined) || maskable(v.Value))
		vars = append(vars, executor.Variable{Key: v.Key, Value: v.Value, Public: v.Public, Masked: masked})
	}
	job := executor.Job{
		ID: j.ID, Token: token, Name: j.Name, Stage: j.Stage,
		ProjectID: p.ProjectID, ProjectPath: p.ProjectPath,
		Git: executor.Git{RepoURL: pipeline.RepositoryURL(server, p.ProjectPath, token), Ref: j.Ref, Tag: j.Tag,
			SHA: j.SHA, BeforeSHA: p.BeforeSHA},
		Variables:         vars,
		Steps:             executor.ScriptSteps(spec.BeforeScript, spec.Script, spec.AfterScript),
		Tags:              spec.Tags,
		Timeout:           jobTimeout(spec, s.cfg.JobTimeout),
		MaxTraceBytes:     s.cfg.MaxTraceBytes,
		MaxArtifactsBytes: s.cfg.MaxArtifactsBytes,
	}
	if a := spec.Artifacts; a != nil {
		// The report files go into the archive; the host takes them out
		// (collectReports).
		// (collectReports), whatever the job's result: the archive is
		// built always and dropped after when its own when says so.
		when := a.When
		if hasKeptReports(a) {
			when = pipeline.ArtifactsAlways
		}
		job.Artifacts = &executor.ArtifactsSpec{Name: a.Name, Paths: withReportPaths(a), Untracked: a.Untracked,
			When: executor.When(when), ExpireIn: a.ExpireIn}
	}
	for _, raw := range []struct {
		v   any
		dst *json.RawMessage
	}{{spec.Image, &job.Image}, {spec.Services, &job.Services}, {spec.Cache, &job.Cache}} {
		if b, err := json.Marshal(raw.v); err == nil && string(b) != "null" {
			*raw.dst = b
		}
	}
	if r != nil {
		return job, nil // a runner's dependencies are dependencyJobs, with their archives' names
	}
	deps, err := s.dependencies(ctx, j, spec, s.server.APIURL(), token)
	if err != nil {
		return executor.Job{}, err
	}
	job.Dependencies = deps
	return job, nil
}

// minMaskedLength is the shortest value of a user's variable that is
// masked in traces, GitLab's minimum for a masked variable: a runner
// masks every occurrence of a masked value, and a short one ("1", "yes")
// would blot out much of the trace while hiding nothing.
const minMaskedLength = 8

func maskable(value string) bool { return utf8.RuneCountInString(value) >= minMaskedLength }

// secretVariables are the CI variables of the project's group and of the
// project, opened (a project's overrides its group's of the same key);
// protected ones only for a protected ref.
func (s *Service) secretVariables(ctx context.Context, projectID int64, protectedRef bool) ([]pipeline.Variable, error) {
	groupIDs, err := s.groupVariableIDs(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []pipeline.Variable
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := variables.IDsBy(tx, "project", store.IDString(projectID))
		if err != nil {
			return err
		}
		ids, err = withGroupVariables(tx, groupIDs, ids)
		if err != nil {
			return err
		}
		seen := map[string]int{}
		for _, id := range ids {
			v, err := variables.Get(tx, id)
			if err != nil {
				return err
			}
			if v.Protected && !protectedRef {
				continue
			}
			plain, err := s.box.Unseal(v.Value, purposeVariable)
			if err != nil {
				return err
			}
			// Group variables come first: a project's of the same key
			// takes its place.
			if at, ok := seen[v.Key]; ok {
				out[at].Value = plain
				continue
			}
			seen[v.Key] = len(out)
			out = append(out, pipeline.Variable{Key: v.Key, Value: plain})
		}
		return nil
	})
	return out, err
}

// dependencies are the archives of the earlier jobs the job depends on:
// the latest job of each name, if it has artifacts.
func (s *Service) dependencies(ctx context.Context, j *Job, spec *pipeline.Job, apiURL, token string) ([]executor.Dependency, error) {
	list, err := s.dependencyJobs(ctx, j, spec)
	out := make([]executor.Dependency, 0, len(list))
	for _, d := range list {
		out = append(out, executor.Dependency{ID: d.ID, Name: d.Name, Token: token,
			URL: apiURL + "/jobs/" + strconv.FormatInt(d.ID, 10) + "/artifacts"})
	}
	return out, err
}

// dependencyJobs are the jobs of the pipeline whose archives the job
// depends on (pipeline.Job.FetchesFrom): of earlier stages, or the needed
// ones for a job with needs.
func (s *Service) dependencyJobs(ctx context.Context, j *Job, spec *pipeline.Job) ([]*Job, error) {
	if len(spec.Dependencies) == 0 && !spec.DependsOnAllEarlier {
		return nil, nil
	}
	// The row's stage index is the one among the pipeline's stages, as the
	// other jobs' are.
	fetcher := *spec
	fetcher.StageIndex = j.StageIdx
	var out []*Job
	err := s.db.View(ctx, func(tx *store.Tx) error {
		// Only jobs with an archive can be a dependency: read those, not
		// the whole pipeline (once per job started).
		ids, err := jobs.IDsBy(tx, "with_artifacts", store.IDString(j.PipelineID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			d, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			if d.Artifacts != nil && fetcher.FetchesFrom(d.Name, d.StageIdx) {
				out = append(out, d)
			}
		}
		return nil
	})
	return out, err
}

// runningJobByToken finds the running job a CI_JOB_TOKEN belongs to.
func (s *Service) runningJobByToken(ctx context.Context, token string) (*Job, error) {
	return runningJobByToken(ctx, s.db, token)
}

func runningJobByToken(ctx context.Context, db *store.DB, token string) (*Job, error) {
	if token == "" {
		return nil, cicd.ErrJobNotFound
	}
	var j *Job
	err := db.View(ctx, func(tx *store.Tx) error {
		var err error
		j, err = jobs.GetBy(tx, "token", hashToken(token))
		if errors.Is(err, store.ErrNotFound) {
			return cicd.ErrJobNotFound
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if j.Status != StatusRunning {
		return nil, cicd.ErrJobNotFound
	}
	return j, nil
}

// errJobTokenRefused: no running job has the token a dependency's
// archive was asked with.
var errJobTokenRefused = errors.New("ci: no running job has that token")

// dependencyArchive is the archive of job id for the running job whose
// token is given (its dependencies' archives): a job of the same project.
func (s *Service) dependencyArchive(ctx context.Context, token string, id int64) (cicd.File, error) {
	caller, err := s.runningJobByToken(ctx, token)
	if err != nil {
		// Not wrapped: a job that is not found is not this job's 404.
		return cicd.File{}, errJobTokenRefused
	}
	var j *Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		j, err = jobIn(tx, caller.ProjectID, id)
		return err
	})
	if err != nil {
		return cicd.File{}, err
	}
	return s.archive(ctx, j)
}

// jobTimeout is the job's own `timeout` when it sets one within the
// server's job timeout, which stays the ceiling: an administrator's bound
// holds whatever a CI file asks.
func jobTimeout(spec *pipeline.Job, server time.Duration) time.Duration {
	if spec.TimeoutAfter > 0 && spec.TimeoutAfter < server {
		return spec.TimeoutAfter
	}
	return server
}

// todayVariables are the predefined variables of current GitLab for the
// job of p (CI_DEFAULT_BRANCH, CI_COMMIT_BRANCH, CI_PROJECT_TITLE...). The
// project is read as the system: the job's token already proved access,
// and a project that cannot be read leaves its names out.
func (s *Service) todayVariables(ctx context.Context, p *Pipeline, j *Job, protected bool) []pipeline.Variable {
	f := pipeline.TodayFacts{
		ServerURL: s.server.ExternalURL(), Source: pipeline.Source(p.Source),
		Ref: j.Ref, IsTag: j.Tag, Protected: protected,
		SHA: j.SHA, BeforeSHA: p.BeforeSHA, CommitMessage: p.Commit.Message, CommitTimestamp: p.Commit.CreatedAt,
		PipelineID: p.ID, PipelineCreatedAt: p.CreatedAt, ProjectPath: p.ProjectPath,
		MergeRequest: p.MergeRequest,
	}
	if p.Commit.AuthorName != "" {
		f.CommitAuthor = p.Commit.AuthorName + " <" + p.Commit.AuthorEmail + ">"
	}
	if info, err := s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), p.ProjectID); err == nil {
		f.ProjectTitle, f.DefaultBranch, f.ProjectVisibility = info.Name, info.DefaultBranch, info.Visibility
	}
	return pipeline.TodayVariables(f)
}
