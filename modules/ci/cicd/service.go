package cicd

import (
	"context"
	"io"
	"time"
)

// Service is the CI module's pipelines and jobs, as a web page, an admin
// command or an embedder drives them; the HTTP API is one more caller.
// The caller is the principal in ctx (auth.FromContext). project is a
// project as the API's :id gives it, its id or its full path; a project
// the caller may not see, or may not act on, is the projects module's
// error (projects.ErrNotFound, projects.ErrForbidden). A pipeline or job
// of another project is not found. Lists are newest first unless said
// otherwise: limit of them from the offset-th on, and how many there are.
type Service interface {
	// Pipeline is one pipeline (Reporter, or anyone on a public project
	// with public builds).
	Pipeline(ctx context.Context, project string, id PipelineID) (Pipeline, error)
	// Pipelines are the project's pipelines that q selects, in q's order.
	Pipelines(ctx context.Context, project string, q PipelineQuery) ([]Pipeline, int, error)
	// CreatePipeline runs the CI file at the head of a branch or tag, as
	// the caller (Developer; on a protected branch, one who may push or
	// merge to it: ErrProtectedRef). A branch wins over a tag of the same
	// name. ErrRefRequired, ErrRefNotFound, ErrNoConfig and ErrNoJobs say
	// why there is none; a CI file with errors gives a failed pipeline
	// with YAMLErrors.
	CreatePipeline(ctx context.Context, in CreatePipelineInput) (Pipeline, error)
	// TriggerPipeline is CreatePipeline with a trigger's token in place of
	// the caller's rights: the pipeline is the trigger owner's, who must
	// still be allowed to run it (ErrTriggerOwnerMayNotRun,
	// ErrProtectedRef), with the given variables on top of every other.
	// A token that is no trigger of the project is ErrUnknownTriggerToken.
	TriggerPipeline(ctx context.Context, in TriggerPipelineInput) (Pipeline, error)
	// The project's pipeline triggers, for its Masters (projects'
	// AdminProject). A trigger's Token is whole to its owner only.
	Triggers(ctx context.Context, project string, offset, limit int) ([]Trigger, int, error)
	Trigger(ctx context.Context, project string, id TriggerID) (Trigger, error)
	// CreateTrigger makes a trigger owned by the caller, with a new token.
	CreateTrigger(ctx context.Context, project, description string) (Trigger, error)
	// UpdateTrigger changes the description: the owner only
	// (ErrNotTriggerOwner); nil changes nothing.
	UpdateTrigger(ctx context.Context, project string, id TriggerID, description *string) (Trigger, error)
	// TakeTriggerOwnership makes the caller the owner: the trigger's
	// pipelines run as them from now on.
	TakeTriggerOwnership(ctx context.Context, project string, id TriggerID) (Trigger, error)
	DeleteTrigger(ctx context.Context, project string, id TriggerID) error

	// RetryPipeline retries the pipeline's failed and canceled jobs, and
	// lets the jobs they had skipped be decided again. CancelPipeline
	// cancels its unfinished jobs. Both: Developer, and ErrProtectedRef
	// on a protected branch the caller may not push or merge to.
	RetryPipeline(ctx context.Context, project string, id PipelineID) (Pipeline, error)
	CancelPipeline(ctx context.Context, project string, id PipelineID) (Pipeline, error)

	// Job is one job; Jobs are the project's, or one pipeline's, that q
	// selects (the readers' access as for Pipeline).
	Job(ctx context.Context, project string, id JobID) (Job, error)
	Jobs(ctx context.Context, project string, q JobQuery) ([]Job, int, error)
	// The job commands need Developer, and ErrProtectedRef on a protected
	// branch the caller may not push or merge to; each returns the job as
	// it leaves it.
	// CancelJob stops an unfinished job (a finished one is returned as it
	// is).
	CancelJob(ctx context.Context, project string, id JobID) (Job, error)
	// RetryJob runs a finished job again as the caller: the new job is
	// returned, the old one is marked retried (ErrNotRetryable).
	RetryJob(ctx context.Context, project string, id JobID) (Job, error)
	// PlayJob queues a manual job as the caller (ErrNotPlayable).
	PlayJob(ctx context.Context, project string, id JobID) (Job, error)
	// UnscheduleJob makes a scheduled (delayed) job manual
	// (ErrNotScheduled).
	UnscheduleJob(ctx context.Context, project string, id JobID) (Job, error)
	// EraseJob removes a finished job's trace and artifacts: a Master or
	// the job's own user (ErrMayNotErase); ErrNotErasable when there is
	// nothing to erase.
	EraseJob(ctx context.Context, project string, id JobID) (Job, error)
	// KeepArtifacts keeps the job's archive past its expiry
	// (ErrNoArtifacts).
	KeepArtifacts(ctx context.Context, project string, id JobID) (Job, error)

	// The CI variables of a project, or of a group (every job of the
	// group's projects, and of its subgroups', gets them), for Masters
	// (of the project: projects' AdminProject; of the group: a Master,
	// Owner or administrator, projects.ErrForbidden for anyone else who
	// sees it). Values are whole. ErrVariableNotFound for a key that is
	// not there; a create needs Key and Value (a *MissingError names
	// those not given), a key of letters, digits and '_'
	// (ErrInvalidVariableKey) not taken (ErrVariableKeyTaken).
	ProjectVariables(ctx context.Context, project string, offset, limit int) ([]SecretVariable, int, error)
	ProjectVariable(ctx context.Context, project, key string) (SecretVariable, error)
	CreateProjectVariable(ctx context.Context, project string, in VariableFields) (SecretVariable, error)
	// UpdateProjectVariable changes the value and protection given; the
	// key is not changed.
	UpdateProjectVariable(ctx context.Context, project, key string, in VariableFields) (SecretVariable, error)
	// DeleteProjectVariable deletes the variable and returns it.
	DeleteProjectVariable(ctx context.Context, project, key string) (SecretVariable, error)
	GroupVariables(ctx context.Context, group string, offset, limit int) ([]SecretVariable, int, error)
	GroupVariable(ctx context.Context, group, key string) (SecretVariable, error)
	CreateGroupVariable(ctx context.Context, group string, in VariableFields) (SecretVariable, error)
	UpdateGroupVariable(ctx context.Context, group, key string, in VariableFields) (SecretVariable, error)
	DeleteGroupVariable(ctx context.Context, group, key string) (SecretVariable, error)

	// The project's environments (readers as for Pipeline; changes:
	// Developer, a delete: Master). A deploying job makes its environment
	// too. ErrEnvironmentNotFound for none of that id in the project.
	Environments(ctx context.Context, project string, offset, limit int) ([]Environment, int, error)
	// Environment is one of the project's environments (ReadJobs);
	// ErrEnvironmentNotFound for another project's or none.
	Environment(ctx context.Context, project string, id EnvironmentID) (Environment, error)
	// CreateEnvironment needs a Name (a *MissingError); names are
	// checked as GitLab does (ErrInvalidEnvironmentName,
	// ErrEnvironmentNameTooLong, ErrEnvironmentNameTaken) and so are
	// external URLs (ErrExternalURLTooLong, ErrExternalURLBlocked).
	CreateEnvironment(ctx context.Context, project string, in EnvironmentFields) (Environment, error)
	// UpdateEnvironment changes what is given (ErrNoEnvironmentChange
	// for nothing); an empty ExternalURL removes it.
	UpdateEnvironment(ctx context.Context, project string, id EnvironmentID, in EnvironmentFields) (Environment, error)
	DeleteEnvironment(ctx context.Context, project string, id EnvironmentID) error
	StopEnvironment(ctx context.Context, project string, id EnvironmentID) (Environment, error)
	// Deployments are the project's deployments in q's order;
	// Deployment is one (ErrDeploymentNotFound).
	Deployments(ctx context.Context, project string, q DeploymentQuery) ([]Deployment, int, error)
	Deployment(ctx context.Context, project string, id DeploymentID) (Deployment, error)

	// Lint checks a CI file as a pipeline's creation would, for a push
	// of a branch that no only/except names: its problems (the first, as
	// GitLab reports them), none for a valid file. Anyone may.
	Lint(ctx context.Context, content string) []string
	// LintProject checks the project's CI file at a branch or tag (the
	// default branch for ""), for a push pipeline of that ref: Reporter
	// (projects' ReadCode); ErrRefNotFound, ErrNoConfig.
	LintProject(ctx context.Context, project, ref string) ([]string, error)

	// The files a job leaves, open for reading (the caller closes them).
	// Trace is the job's log as far as it is written now (ErrNoTrace once
	// erased, or before it has begun).
	Trace(ctx context.Context, project string, id JobID) (File, error)
	// Artifacts is the job's archive (ErrNoArtifacts); LatestArtifacts
	// the archive of the newest successful job of that name on a ref
	// (ErrJobNameRequired, ErrNoArtifacts).
	Artifacts(ctx context.Context, project string, id JobID) (File, error)
	LatestArtifacts(ctx context.Context, project, ref, job string) (File, error)
	// ArtifactFile is the regular file of that exact path in the job's
	// archive, inflated as it is read (ErrInvalidArtifactPath,
	// ErrNoArtifacts, ErrArtifactFileNotFound); LatestArtifactFile takes
	// it from the job LatestArtifacts finds.
	ArtifactFile(ctx context.Context, project string, id JobID, path string) (File, error)
	LatestArtifactFile(ctx context.Context, project, ref, job, path string) (File, error)

	// The GitLab Runners. Runners are those q selects. Runner is one, with
	// the projects of it the caller sees: an administrator sees any, the
	// others a shared runner or one of a project they administer
	// (ErrNoRunnerAccess); ErrRunnerNotFound.
	Runners(ctx context.Context, q RunnerQuery) ([]Runner, int, error)
	Runner(ctx context.Context, id RunnerID) (Runner, error)
	// UpdateRunner changes what is given (ErrNoRunnerChange for nothing):
	// an administrator, or a Master of one of its projects
	// (ErrRunnerIsShared for a shared runner, ErrNoRunnerAccess).
	// Tags are checked (an *InvalidTagsError; ErrRunnerTagsNeeded when it
	// would take no job), so is the description
	// (ErrRunnerDescriptionTooLong).
	UpdateRunner(ctx context.Context, id RunnerID, in RunnerFields) (Runner, error)
	// DeleteRunner removes it, as UpdateRunner changes it; only an
	// administrator removes one of several projects
	// (ErrRunnerHasProjects). Its running jobs are left to the watch over
	// stuck jobs.
	DeleteRunner(ctx context.Context, id RunnerID) error
	// RunnerJobs are the jobs it took that the caller may read (access to
	// the runner as for UpdateRunner).
	RunnerJobs(ctx context.Context, id RunnerID, q RunnerJobQuery) ([]RunnerJob, int, error)
	// ProjectRunners are the runners the project's jobs may run on, the
	// shared ones included, oldest first (Master; scope as RunnerQuery's
	// with All).
	ProjectRunners(ctx context.Context, project, scope string, offset, limit int) ([]Runner, int, error)
	// EnableProjectRunner lets a runner the caller administers take the
	// project's jobs too (Master of the project; nil is a *MissingError;
	// ErrRunnerIsShared, ErrRunnerLocked, ErrRunnerAlreadyEnabled).
	EnableProjectRunner(ctx context.Context, project string, runner *RunnerID) (Runner, error)
	// DisableProjectRunner stops it taking the project's jobs (Master;
	// ErrRunnerNotFound when it is not enabled there,
	// ErrRunnerLastProject).
	DisableProjectRunner(ctx context.Context, project string, runner RunnerID) error
	// RegistrationToken is the instance's shared runners registration
	// token (made on first use); ResetRegistrationToken makes a new one,
	// and the old one registers no more runners (registered runners keep
	// theirs; ErrRegistrationTokenConfigured). Both: administrators
	// (ErrAdminOnly).
	RegistrationToken(ctx context.Context) (string, error)
	ResetRegistrationToken(ctx context.Context) (string, error)
}

// The statuses of jobs and pipelines (GitLab 9.x's).
const (
	StatusCreated  = "created"
	StatusPending  = "pending"
	StatusRunning  = "running"
	StatusSuccess  = "success"
	StatusFailed   = "failed"
	StatusCanceled = "canceled"
	StatusSkipped  = "skipped"
	StatusManual   = "manual"
	// StatusWaitingForResource is a job whose resource group is held.
	StatusWaitingForResource = "waiting_for_resource"
)

// Commit is the commit a pipeline runs, as it was read when the pipeline
// was made.
type Commit struct {
	ID          string
	ShortID     string
	Title       string
	Message     string
	AuthorName  string
	AuthorEmail string
	CreatedAt   time.Time
}

// Pipeline is one run of a project's CI file at a commit.
type Pipeline struct {
	ID        PipelineID
	ProjectID int64
	Ref       string
	Tag       bool
	SHA       string
	BeforeSHA string
	// Source is what made it: push, web, api, trigger.
	Source string
	// MergeRequestIID and MergeRequestProject name the merge request a
	// merge request pipeline (source merge_request_event) runs for: its
	// number in the target project, of that full path; 0 for any other.
	MergeRequestIID     int64
	MergeRequestProject string
	// Name is the file's `workflow: name` with its variables expanded;
	// empty when it has none.
	Name   string
	Status string
	// YAMLErrors says why a pipeline failed at its creation (a CI file
	// with errors); nil otherwise.
	YAMLErrors *string
	Stages     []string
	UserID     int64
	// Coverage is the mean of its jobs' coverage; Duration the seconds
	// they ran, once it finished.
	Coverage    *float64
	Duration    *int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
	StartedAt   *time.Time
	FinishedAt  *time.Time
	CommittedAt *time.Time
	Commit      Commit
}

// Job is one job of a pipeline.
type Job struct {
	ID           JobID
	ProjectID    int64
	PipelineID   PipelineID
	Name         string
	Stage        string
	Ref          string
	Tag          bool
	SHA          string
	Status       string
	When         string // on_success, on_failure, always, manual
	AllowFailure bool
	// UserID is who pushed, played or retried it.
	UserID int64
	// RunnerID is the GitLab Runner it was handed to; 0 for an executor
	// plugin, or none yet.
	RunnerID   int64
	Coverage   *float64
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	ErasedAt   *time.Time
	// Artifacts is its archive, nil when it has none (never, erased,
	// expired).
	Artifacts *Artifacts
	// Retried marks a job a retry replaced.
	Retried bool
	// PipelineStatus and Commit are its pipeline's, as read with the job.
	PipelineStatus string
	Commit         Commit
	// Downstream is the pipeline a trigger job made, in the lists of
	// trigger jobs (JobQuery.Bridges); nil before it is made.
	Downstream *DownstreamPipeline
	// FailureReason says why a failed job failed other than by its
	// script (a trigger job's: downstream_pipeline_creation_failed...).
	FailureReason string
}

// DownstreamPipeline is the pipeline a trigger job made: a child of the
// same project (source parent_pipeline) or another project's (source
// pipeline).
type DownstreamPipeline struct {
	ID        PipelineID
	ProjectID int64
	SHA       string
	Ref       string
	Status    string
	Source    string
	WebURL    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Artifacts is a job's stored archive.
type Artifacts struct {
	Filename string
	Size     int64
	ExpireAt *time.Time
	Kept     bool
}

// File is a file a job left, open: Size bytes of Content, which the
// caller closes. Name is the name to save it as.
type File struct {
	Name    string
	Size    int64
	Content io.ReadCloser
}

// TriggerID is a pipeline trigger's id.
type TriggerID int64

// Trigger is a project's pipeline trigger: a token that runs pipelines as
// its owner (TriggerPipeline).
type Trigger struct {
	ID          TriggerID
	ProjectID   int64
	Description string
	// Token is whole to the trigger's owner only; anyone else sees its
	// first 4 characters. It runs pipelines as its owner, with the
	// owner's right to protected branches and their protected variables,
	// so another Master who read it could act as the owner.
	Token     string
	OwnerID   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	LastUsed  *time.Time
}

// CreatePipelineInput is what CreatePipeline runs.
type CreatePipelineInput struct {
	Project string
	// Ref is a branch or a tag; the branch when both have the name.
	Ref string
	// Variables go to every job of the pipeline, over every other
	// variable, as a trigger's do; keys are letters, digits and '_'
	// (ErrInvalidVariableKey).
	Variables []Variable
	// Web marks a pipeline run from the web form (source web, as GitLab
	// records it) rather than the API (source api). As GitLab's form, it
	// stores no pipeline for a CI file with errors: a *ConfigError says
	// what they are.
	Web bool
}

// TriggerPipelineInput is what TriggerPipeline runs.
type TriggerPipelineInput struct {
	Project string
	Ref     string
	// Token is the trigger's token.
	Token string
	// Variables go to every job of the pipeline, over every other
	// variable; keys are letters, digits and '_' (the API checks them).
	Variables []Variable
}

// Variable is a variable a caller gives a pipeline's jobs.
type Variable struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SecretVariable is a project's or a group's CI variable: every job of
// the project (of the group's projects) gets it; a protected one only the
// jobs of protected branches.
type SecretVariable struct {
	Key       string
	Value     string
	Protected bool
}

// VariableFields are what a create or an update of a SecretVariable
// gives; nil is "not given".
type VariableFields struct {
	Key       *string
	Value     *string
	Protected *bool
}

// EnvironmentID and DeploymentID name environments and deployments.
type (
	EnvironmentID int64
	DeploymentID  int64
)

// Environment is a deployment target of a project.
type Environment struct {
	ID          EnvironmentID
	ProjectID   int64
	Name        string
	Slug        string
	ExternalURL *string
	State       string // available, stopped
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// AutoStopAt is when it stops by itself (`auto_stop_in`); nil: never.
	AutoStopAt *time.Time
}

// EnvironmentFields are what a create or an update of an environment
// gives; nil is "not given".
type EnvironmentFields struct {
	Name        *string
	ExternalURL *string
}

// Deployment records a job that deployed to an environment.
type Deployment struct {
	ID        DeploymentID
	IID       int64
	ProjectID int64
	Ref       string
	SHA       string
	Tag       bool
	UserID    int64
	CreatedAt time.Time
	// Environment is where it deployed; only its ID is known once the
	// environment is deleted.
	Environment Environment
	// Job is the job that deployed, nil once it is gone.
	Job *Job
}

// DeploymentQuery orders a project's deployments: by id (""), iid,
// created_at or ref, ties by id; ascending unless Descending.
// Environment, when not 0, keeps those to that environment.
type DeploymentQuery struct {
	Environment EnvironmentID
	OrderBy     string
	Descending  bool
	Offset      int
	Limit       int
}

// PipelineQuery selects and orders a project's pipelines; the zero value
// is all of them, newest first.
type PipelineQuery struct {
	// Scope is "", running, pending, finished, branches or tags.
	Scope string
	// Status, Ref: only pipelines with that status, of that ref.
	Status string
	Ref    string
	// YAMLErrors: only those with (true) or without (false) YAML errors.
	YAMLErrors *bool
	// Username: only those of that user (none when there is no such
	// user).
	Username string
	// OrderBy is id (""), status, ref or user_id, ties by id; Ascending
	// reverses the default, descending, order.
	OrderBy   string
	Ascending bool
	Offset    int
	Limit     int
}

// JobQuery selects a project's jobs, or one pipeline's.
type JobQuery struct {
	// Pipeline, when not 0, is the pipeline whose jobs are listed
	// (ErrPipelineNotFound when the project has none such).
	Pipeline PipelineID
	// Scope, when not empty, keeps the jobs in these statuses
	// (ErrInvalidScope for what is not a job status).
	Scope []string
	// Bridges lists the pipeline's trigger jobs instead of its jobs
	// (GitLab lists them apart: GET .../pipelines/:id/bridges).
	Bridges bool
	Offset  int
	Limit   int
}
