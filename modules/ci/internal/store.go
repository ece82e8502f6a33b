package internal

import (
	"encoding/json"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// The job and pipeline statuses of GitLab 9.x.
const (
	StatusCreated  = "created"
	StatusPending  = "pending"
	StatusRunning  = "running"
	StatusSuccess  = "success"
	StatusFailed   = "failed"
	StatusCanceled = "canceled"
	StatusSkipped  = "skipped"
	StatusManual   = "manual"
)

// finished says whether a status is final: a job in it never runs again
// (a retry is a new job).
func finished(status string) bool {
	switch status {
	case StatusSuccess, StatusFailed, StatusCanceled, StatusSkipped:
		return true
	}
	return false
}

// active says whether a job in this status may still be canceled.
func active(status string) bool {
	switch status {
	case StatusCreated, StatusPending, StatusRunning, StatusManual, StatusWaitingForResource, StatusScheduled:
		return true
	}
	return false
}

// Pipeline is one run of a project's .gitlab-ci.yml at a commit.
type Pipeline struct {
	ID          int64      `json:"id"`
	ProjectID   int64      `json:"project_id"`
	Ref         string     `json:"ref"`
	SHA         string     `json:"sha"`
	BeforeSHA   string     `json:"before_sha"`
	Tag         bool       `json:"tag"`
	Source      string     `json:"source"` // push, api, web
	Status      string     `json:"status"`
	YAMLErrors  *string    `json:"yaml_errors"`
	Stages      []string   `json:"stages"`
	UserID      int64      `json:"user_id"`
	Coverage    *float64   `json:"coverage"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	CommittedAt *time.Time `json:"committed_at"`
	// Commit is the summary of the commit at SHA, read once at creation
	// (every job view embeds it).
	Commit CommitSummary `json:"commit"`
	// ProjectWebURL is the project's web_url when the pipeline was made
	// (its jobs' target_url as commit statuses).
	ProjectWebURL string `json:"project_web_url"`
	// ProjectPath is the project's full path when the pipeline was made.
	ProjectPath string `json:"project_path"`
	// Duration is the seconds its jobs ran, once it finished.
	Duration *int64 `json:"duration"`
	// Creating is set while the pipeline's jobs are still being stored,
	// a bounded number per transaction (createJobs); JobsCreated counts
	// those stored so far, in the order of the CI file, so that a creation
	// a crash cut short is completed at the next start from where it
	// stopped (resumeCreations). Stage gating waits until it is clear.
	Creating    bool `json:"creating,omitempty"`
	JobsCreated int  `json:"jobs_created,omitempty"`
	// Deciding is set while a stage's created jobs are being decided in
	// transactions after the one that started (process).
	Deciding bool `json:"deciding,omitempty"`
	// MergeRequest is set on a merge request pipeline (Source
	// merge_request_event): the merge request it runs for, as its
	// CI_MERGE_REQUEST_* variables give it. Ref is then its source branch
	// (what runners fetch), as CI_COMMIT_REF_NAME is in GitLab.
	MergeRequest *pipeline.MergeRequestFacts `json:"merge_request,omitempty"`
	// AutoCancel is the file's `workflow: auto_cancel: on_new_commit`
	// (empty when not written): how a newer pipeline of the ref cancels
	// this one (autoCancel).
	AutoCancel string `json:"auto_cancel,omitempty"`
	// Name is the file's `workflow: name`, expanded at creation.
	Name string `json:"name,omitempty"`
	// requestVariables are the variables the pipeline was asked with (a
	// trigger's, a schedule's, an upstream bridge's), for choosing its
	// jobs; never stored here (they are kept sealed with the trigger
	// request or schedule run, or in Upstream).
	requestVariables []pipeline.Variable
	// Upstream is set on a downstream pipeline: the trigger job that made
	// it (bridge.go).
	Upstream *Upstream `json:"upstream,omitempty"`
}

func (p *Pipeline) RecordID() int64      { return p.ID }
func (p *Pipeline) SetRecordID(id int64) { p.ID = id }

// CommitSummary is the commit a pipeline runs, as job views embed it.
type CommitSummary struct {
	ID          string    `json:"id"`
	ShortID     string    `json:"short_id"`
	Title       string    `json:"title"`
	Message     string    `json:"message"`
	AuthorName  string    `json:"author_name"`
	AuthorEmail string    `json:"author_email"`
	CreatedAt   time.Time `json:"created_at"`
}

// Job is one job of a pipeline. Spec is the job's resolved definition from
// the CI file (script, variables, artifacts rules...), kept as it was when
// the pipeline was created so that a retry runs the same thing.
type Job struct {
	ID           int64           `json:"id"`
	ProjectID    int64           `json:"project_id"`
	PipelineID   int64           `json:"pipeline_id"`
	Name         string          `json:"name"`
	Stage        string          `json:"stage"`
	StageIdx     int             `json:"stage_idx"`
	Ref          string          `json:"ref"`
	SHA          string          `json:"sha"`
	Tag          bool            `json:"tag"`
	Status       string          `json:"status"`
	When         string          `json:"when"`
	AllowFailure bool            `json:"allow_failure"`
	Tags         []string        `json:"tags"`
	Spec         json.RawMessage `json:"spec"`
	UserID       int64           `json:"user_id"`
	Coverage     *float64        `json:"coverage"`
	// TokenHash is the hash of the job's CI_JOB_TOKEN, valid while it runs.
	TokenHash      string `json:"token_hash,omitempty"`
	Environment    string `json:"environment,omitempty"`
	EnvironmentURL string `json:"environment_url,omitempty"`
	// ResourceGroup is the job's expanded `resource_group` (resourcegroup.go).
	ResourceGroup string `json:"resource_group,omitempty"`
	// StartAfter is a delayed job's start_in: the job is scheduled that
	// long once gating makes it pending; ScheduledAt is when it runs (or
	// ran), set once (delayed.go).
	StartAfter  time.Duration `json:"start_after,omitempty"`
	ScheduledAt *time.Time    `json:"scheduled_at,omitempty"`
	CreatedAt   time.Time     `json:"created_at"`
	QueuedAt    *time.Time    `json:"queued_at"`
	StartedAt   *time.Time    `json:"started_at"`
	FinishedAt  *time.Time    `json:"finished_at"`
	ErasedAt    *time.Time    `json:"erased_at"`
	ErasedBy    int64         `json:"erased_by,omitempty"`
	// Artifacts is the job's archive, nil when it has none.
	Artifacts *Artifacts `json:"artifacts"`
	// TraceBytes is the size of the trace written so far.
	TraceBytes int64 `json:"trace_bytes"`
	// Retried marks a job replaced by a retry (hidden from the pipeline's
	// status, listed still).
	Retried bool `json:"retried"`
	// Attempt counts automatic retries (the CI file's retry).
	Attempt int `json:"attempt"`
	// Executor names the executor that ran it; FailureReason says why a
	// job failed for reasons other than its script.
	Executor      string `json:"executor,omitempty"`
	FailureReason string `json:"failure_reason,omitempty"`
	// RunnerID is the GitLab Runner the job was handed to (0: an executor
	// plugin, or none yet). RunnerTokenHash authenticates that runner's
	// reports on the job (trace, state, artifacts): the job token's hash,
	// kept past a cancel so the runner can send its last trace and final
	// state, dropped by that final state (or once the runner has been
	// silent past the silence timeout). RunnerStartedAt is the runner's
	// first report: until then the job was assigned but not started, and
	// is queued again if the runner never reports.
	RunnerID int64 `json:"runner_id,omitempty"`
	// Node is the node whose executor runs the job (fennec.Node), so that
	// a job of a node that died is failed by another.
	Node            string     `json:"node,omitempty"`
	RunnerTokenHash string     `json:"runner_token_hash,omitempty"`
	RunnerStartedAt *time.Time `json:"runner_started_at,omitempty"`
	// ExitCode is the script's exit code as the runner reported it.
	ExitCode *int `json:"exit_code,omitempty"`
	// Needs are the spec's `needs:`, kept on the row because the
	// scheduler reads them each time it looks at the job: nil for a job
	// gated by stages (every job stored before needs existed), empty for
	// `needs: []`.
	Needs []pipeline.Need `json:"needs,omitzero"`
	// Needed: a job of the pipeline needs this one. SeenAs is the settled
	// status in which the DAG pass last saw it: until the pass has seen
	// its latest one, the job is listed as "unsettled" (see dag.go).
	Needed bool   `json:"needed,omitempty"`
	SeenAs string `json:"seen_as,omitempty"`
	// BlockedOn is, while the job waits for its needs, the need the DAG
	// pass last found unfinished ("" until it has looked: it looks at the
	// job on its next pass).
	BlockedOn string `json:"blocked_on,omitempty"`
	// Bridge marks a trigger job, which no executor or runner runs;
	// DownstreamID is the pipeline it made, once made (bridge.go).
	Bridge       bool  `json:"bridge,omitempty"`
	DownstreamID int64 `json:"downstream_id,omitempty"`
}

// waitsForNeeds reports whether the job is created and decided by its
// needs (the scheduler's DAG pass), not by stage gating.
func (j *Job) waitsForNeeds() bool { return j.Status == StatusCreated && j.Needs != nil }

func (j *Job) RecordID() int64      { return j.ID }
func (j *Job) SetRecordID(id int64) { j.ID = id }

// Artifacts describes a job's stored archive.
type Artifacts struct {
	Filename string     `json:"filename"`
	Size     int64      `json:"size"`
	ExpireAt *time.Time `json:"expire_at"`
	Kept     bool       `json:"kept"`
}

// Environment is a deployment target of a project.
type Environment struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	ExternalURL *string   `json:"external_url"`
	State       string    `json:"state"` // available, stopped
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// StopJobID is the job its last deployment's `on_stop` names (0:
	// none), which stopping it plays; AutoStopAt is when it stops by
	// itself (`auto_stop_in`; nil: never). See envlifecycle.go.
	StopJobID  int64      `json:"stop_job_id,omitempty"`
	AutoStopAt *time.Time `json:"auto_stop_at,omitempty"`
}

func (e *Environment) RecordID() int64      { return e.ID }
func (e *Environment) SetRecordID(id int64) { e.ID = id }

// Deployment records a job that deployed to an environment.
type Deployment struct {
	ID            int64     `json:"id"`
	IID           int64     `json:"iid"`
	ProjectID     int64     `json:"project_id"`
	EnvironmentID int64     `json:"environment_id"`
	JobID         int64     `json:"job_id"`
	Ref           string    `json:"ref"`
	SHA           string    `json:"sha"`
	Tag           bool      `json:"tag"`
	UserID        int64     `json:"user_id"`
	CreatedAt     time.Time `json:"created_at"`
}

func (d *Deployment) RecordID() int64      { return d.ID }
func (d *Deployment) SetRecordID(id int64) { d.ID = id }

// Variable is a project's secret CI variable, or a group's (GroupID set,
// ProjectID 0) that every project of the group receives.
type Variable struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	GroupID   int64  `json:"group_id,omitempty"`
	Key       string `json:"key"`
	// Value is sealed (core/sealed): variables hold secrets.
	Value     string `json:"value"`
	Protected bool   `json:"protected"`
}

func (v *Variable) RecordID() int64      { return v.ID }
func (v *Variable) SetRecordID(id int64) { v.ID = id }

// counter allocates per-project numbers (deployment iids) without gaps.
type counter struct {
	ID    int64  `json:"id"`
	Key   string `json:"key"`
	Value int64  `json:"value"`
}

func (c *counter) RecordID() int64      { return c.ID }
func (c *counter) SetRecordID(id int64) { c.ID = id }

var (
	pipelines = store.NewTable[int64, Pipeline]("ci.pipelines",
		store.Index[Pipeline]{Name: "project", Keys: func(p *Pipeline) []string { return []string{store.IDString(p.ProjectID)} }},
		store.Index[Pipeline]{Name: "commit", Keys: func(p *Pipeline) []string { return []string{store.IDString(p.ProjectID) + "/" + p.SHA} }},
		// Unfinished pipelines, for recovery at start.
		store.Index[Pipeline]{Name: "open", Keys: func(p *Pipeline) []string {
			if finished(p.Status) {
				return nil
			}
			return []string{"open"}
		}},
		// Pipelines whose jobs are still being stored or decided: work a
		// crash may have cut short, completed at start.
		store.Index[Pipeline]{Name: "unsettled", Keys: func(p *Pipeline) []string {
			switch {
			case p.Creating:
				return []string{"creating"}
			case p.Deciding:
				return []string{"deciding"}
			}
			return nil
		}},
		// The downstream pipelines of a hierarchy, by its first pipeline:
		// how large it has grown (bridge.go).
		store.Index[Pipeline]{Name: "root", Keys: func(p *Pipeline) []string {
			if p.Upstream == nil {
				return nil
			}
			return []string{store.IDString(p.Upstream.RootID)}
		}})
	jobs = store.NewTable[int64, Job]("ci.jobs",
		store.Index[Job]{Name: "project", Keys: func(j *Job) []string { return []string{store.IDString(j.ProjectID)} }},
		store.Index[Job]{Name: "pipeline", Keys: func(j *Job) []string { return []string{store.IDString(j.PipelineID)} }},
		// The latest tries by pipeline, stage, status and allow_failure:
		// what stage gating and composite statuses read (process), without
		// decoding every job of the pipeline on every change. A created
		// job with needs is filed apart (statusWaitingNeeds).
		store.Index[Job]{Name: "state", Keys: func(j *Job) []string {
			if j.Retried {
				return nil
			}
			status := j.Status
			if j.waitsForNeeds() {
				status = statusWaitingNeeds
			}
			return []string{stateKey(j.PipelineID, j.StageIdx, status, j.AllowFailure)}
		}},
		// The latest try of each name, by pipeline: the needed jobs a job
		// with needs waits for.
		store.Index[Job]{Name: "name", Keys: func(j *Job) []string {
			if j.Retried {
				return nil
			}
			return []string{nameKey(j.PipelineID, j.Name)}
		}},
		// Jobs waiting for their needs, by the need that holds them ("" for
		// those the DAG pass has not looked at since they started to wait).
		store.Index[Job]{Name: "blocked", Keys: func(j *Job) []string {
			if j.Retried || !j.waitsForNeeds() {
				return nil
			}
			return []string{nameKey(j.PipelineID, j.BlockedOn)}
		}},
		// Needed jobs settled in a status the DAG pass has not seen yet:
		// what it looks at (their dependents), instead of every waiting
		// job.
		store.Index[Job]{Name: "unsettled", Keys: func(j *Job) []string {
			if j.Retried || !j.Needed || !settled(j.Status) || j.SeenAs == j.Status {
				return nil
			}
			return []string{store.IDString(j.PipelineID)}
		}},
		// The latest tries of jobs with needs, under each job they need:
		// the dependents a retried or played job lets be decided again.
		store.Index[Job]{Name: "needed_by", Keys: func(j *Job) []string {
			if j.Retried || len(j.Needs) == 0 {
				return nil
			}
			keys := make([]string, len(j.Needs))
			for i, n := range j.Needs {
				keys[i] = nameKey(j.PipelineID, n.Job)
			}
			return keys
		}},
		// The latest tries that have artifacts, by pipeline: the archives
		// later jobs may depend on.
		store.Index[Job]{Name: "with_artifacts", Keys: func(j *Job) []string {
			if j.Retried || j.Artifacts == nil {
				return nil
			}
			return []string{store.IDString(j.PipelineID)}
		}},
		// The queue: pending jobs, oldest first (ids ascend). A trigger
		// job is made by the server, never run: it waits in "bridges".
		// Jobs of a resource group, holders and waiters by project and
		// group (resourcegroup.go).
		store.Index[Job]{Name: "resource", Keys: resourceKeys},
		store.Index[Job]{Name: "queue", Keys: func(j *Job) []string {
			if j.Bridge {
				return nil
			}
			if j.Status == StatusPending {
				return []string{"pending"}
			}
			if j.Status == StatusRunning {
				return []string{"running"}
			}
			return nil
		}},
		// Pending trigger jobs whose downstream pipeline is still to be
		// made (bridgeLoop).
		store.Index[Job]{Name: "bridges", Keys: func(j *Job) []string {
			if !j.Bridge || j.Retried || j.Status != StatusPending || j.DownstreamID != 0 {
				return nil
			}
			return []string{"waiting"}
		}},
		// The jobs each runner took, for GET /runners/:id/jobs.
		store.Index[Job]{Name: "runner", Keys: func(j *Job) []string {
			if j.RunnerID == 0 {
				return nil
			}
			return []string{store.IDString(j.RunnerID)}
		}},
		// The latest successful job of a name on a ref, for artifacts by ref.
		store.Index[Job]{Name: "ref_name", Keys: func(j *Job) []string {
			if j.Status != StatusSuccess {
				return nil
			}
			return []string{store.IDString(j.ProjectID) + "/" + j.Ref + "\x00" + j.Name}
		}},
		store.Index[Job]{Name: "token", Unique: true, Keys: func(j *Job) []string {
			if j.TokenHash == "" {
				return nil
			}
			return []string{j.TokenHash}
		}},
		// Artifacts that will expire, for the reaper.
		store.Index[Job]{Name: "expiring", Keys: func(j *Job) []string {
			if j.Artifacts == nil || j.Artifacts.Kept || j.Artifacts.ExpireAt == nil {
				return nil
			}
			return []string{"expiring"}
		}},
		// Runners' jobs canceled here whose runner has not sent its last
		// word (its runner token still reports): the runners' watch ends
		// those whose runner went silent.
		store.Index[Job]{Name: "canceling", Keys: func(j *Job) []string {
			if j.Status != StatusCanceled || j.RunnerTokenHash == "" {
				return nil
			}
			return []string{"canceling"}
		}})
	environments = store.NewTable[int64, Environment]("ci.environments",
		store.Index[Environment]{Name: "project", Keys: func(e *Environment) []string { return []string{store.IDString(e.ProjectID)} }},
		store.Index[Environment]{Name: "name", Unique: true, Keys: func(e *Environment) []string { return []string{store.IDString(e.ProjectID) + "/" + e.Name} }},
		store.Index[Environment]{Name: "slug", Unique: true, Keys: func(e *Environment) []string { return []string{store.IDString(e.ProjectID) + "/" + e.Slug} }})
	deployments = store.NewTable[int64, Deployment]("ci.deployments",
		store.Index[Deployment]{Name: "project", Keys: func(d *Deployment) []string { return []string{store.IDString(d.ProjectID)} }},
		store.Index[Deployment]{Name: "iid", Unique: true, Keys: func(d *Deployment) []string {
			return []string{store.IDString(d.ProjectID) + "/" + store.IDString(d.IID)}
		}})
	variables = store.NewTable[int64, Variable]("ci.variables",
		store.Index[Variable]{Name: "project", Keys: func(v *Variable) []string {
			if v.GroupID != 0 {
				return nil
			}
			return []string{store.IDString(v.ProjectID)}
		}},
		store.Index[Variable]{Name: "key", Unique: true, Keys: func(v *Variable) []string { return []string{variableOwnerKey(v) + "/" + v.Key} }},
		store.Index[Variable]{Name: "group", Keys: func(v *Variable) []string {
			if v.GroupID == 0 {
				return nil
			}
			return []string{store.IDString(v.GroupID)}
		}})
	counters = store.NewTable[int64, counter]("ci.counters",
		store.Index[counter]{Name: "key", Unique: true, Keys: func(c *counter) []string { return []string{c.Key} }})
)

// Tables are the module's tables.
func Tables() []interface{ Buckets() []string } {
	return append([]interface{ Buckets() []string }{pipelines, jobs, environments, deployments, variables, counters, runners, runnerSettings,
		triggers, triggerRequests, scheduleBuckets{string(environmentsToStop), string(jobsScheduled)}}, scheduleTables()...)
}

// Migrations are the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{{
		Module: "ci", Version: 1, Name: "index jobs by state and by archive",
		Up: func(tx *store.Tx) error {
			if err := jobs.Reindex(tx, "state"); err != nil {
				return err
			}
			return jobs.Reindex(tx, "with_artifacts")
		},
	}, {
		Module: "ci", Version: 2, Name: "index canceled runner jobs awaiting their runner",
		Up: func(tx *store.Tx) error { return jobs.Reindex(tx, "canceling") },
	}}
}

// nextIID allocates the next number of a per-project sequence inside tx, so
// concurrent creators get distinct numbers with no gaps (a rolled-back
// transaction takes its number back with it).
func nextIID(tx *store.Tx, key string) (int64, error) {
	c, err := counters.GetBy(tx, "key", key)
	if err == store.ErrNotFound {
		c = &counter{Key: key, Value: 1}
		return 1, counters.Insert(tx, c)
	}
	if err != nil {
		return 0, err
	}
	c.Value++
	return c.Value, counters.Update(tx, c)
}
