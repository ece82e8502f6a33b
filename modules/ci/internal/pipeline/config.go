package pipeline

import (
	"time"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// DefaultStages are the stages of a configuration that declares none.
var DefaultStages = []string{"build", "test", "deploy"}

// DefaultStage is the stage of a job that names none.
const DefaultStage = "test"

// DefaultCacheKey is the cache key of a cache that names none: since 9.0
// GitLab shares one cache across the project's pipelines and jobs.
const DefaultCacheKey = "default"

// DefaultArtifactsName is the name of an artifacts archive that names none
// (the executor uploads artifacts.zip).
const DefaultArtifactsName = "artifacts"

// Config is a parsed, valid `.gitlab-ci.yml` with every global default
// applied to its jobs. Jobs share the slices and pointers they inherit from
// the global keywords, so treat a Config and its jobs as read-only.
type Config struct {
	// Stages in pipeline order.
	Stages []string `json:"stages"`
	// Jobs in file order; hidden jobs (names starting with '.') are not here.
	Jobs []Job `json:"jobs"`
	// Workflow is the `workflow:` keyword, nil when not written
	// (WorkflowFor applies it); Variables are the file's global ones.
	Workflow  *Workflow  `json:"-"`
	Variables []Variable `json:"-"`
}

// Job is one job with the global keywords it inherits already applied.
type Job struct {
	Name string `json:"name"`
	// Stage and its index in Config.Stages.
	Stage      string `json:"stage"`
	StageIndex int    `json:"stage_index"`
	// Script is the job's own commands; BeforeScript and AfterScript are
	// the job's or, when it sets none, the global ones. AfterScript runs in
	// a separate shell even when the script failed.
	Script       []string `json:"script"`
	BeforeScript []string `json:"before_script,omitempty"`
	AfterScript  []string `json:"after_script,omitempty"`
	// Variables are the YAML variables: the global ones with the job's on
	// top (a job key replaces a global key of the same name in place), in
	// file order. See Layers for where they sit among all variables.
	Variables []Variable `json:"variables,omitempty"`
	// Only and Except are ref policies (see JobsFor); empty means none.
	// Written as maps, their `refs` land here and their other keys below.
	Only   []string `json:"only,omitempty"`
	Except []string `json:"except,omitempty"`
	// OnlyVariables and ExceptVariables are the `variables` expressions of
	// only/except written as maps, and OnlyChanges/ExceptChanges their
	// `changes` paths. The expressions are evaluated when JobsFor is given
	// the pipeline's variables (RefInfo.Variables); without them, and for
	// changes always, only's count as matching and except's as not.
	// OnlyKubernetes/ExceptKubernetes are set by
	// `kubernetes: active`: no cluster integration is ever active here.
	OnlyVariables    []string      `json:"only_variables,omitempty"`
	ExceptVariables  []string      `json:"except_variables,omitempty"`
	OnlyChanges      []string      `json:"only_changes,omitempty"`
	ExceptChanges    []string      `json:"except_changes,omitempty"`
	OnlyKubernetes   bool          `json:"only_kubernetes,omitempty"`
	ExceptKubernetes bool          `json:"except_kubernetes,omitempty"`
	When             cistatus.When `json:"when"`
	// StartIn is a delayed job's `start_in` as written and StartAfter its
	// duration. A delayed job is stored as on_success (its gating) with
	// StartAfter: the service then schedules it (status scheduled) for
	// that long instead of queueing it.
	StartIn string `json:"start_in,omitempty"`
	// ResourceGroup is the job's `resource_group` as written: jobs of a
	// project whose expanded groups are equal never run at once.
	ResourceGroup string        `json:"resource_group,omitempty"`
	StartAfter    time.Duration `json:"start_after,omitempty"`
	// AllowFailure defaults to true for manual jobs, false otherwise.
	// AllowFailureExitCodes, from `allow_failure: {exit_codes}`, are the
	// exit codes for which a failure is allowed (AllowFailure is then false).
	AllowFailure          bool         `json:"allow_failure"`
	AllowFailureExitCodes []int        `json:"allow_failure_exit_codes,omitempty"`
	Artifacts             *Artifacts   `json:"artifacts,omitempty"`
	Environment           *Environment `json:"environment,omitempty"`
	// Release is the release the server makes when the job succeeds.
	Release *Release `json:"release,omitempty"`
	// Coverage is the regular expression (without its slashes) that finds
	// the coverage figure in the trace; empty means none.
	Coverage string `json:"coverage,omitempty"`
	// Dependencies names the jobs of earlier stages whose artifacts this
	// job fetches, as the job wrote them (`dependencies: []` is none).
	// DependsOnAllEarlier is set instead when the job does not use the
	// keyword: it then fetches from every job of every earlier stage (of
	// every needed job with artifacts, for a job with Needs).
	// DependenciesIn resolves both against a pipeline's jobs. (The default is
	// not spelled out here because n jobs would hold n² names.)
	Dependencies        []string `json:"dependencies,omitempty"`
	DependsOnAllEarlier bool     `json:"depends_on_all_earlier,omitempty"`
	// Needs are the jobs this one waits for instead of the earlier stages
	// (`needs:`): nil when the job does not use the keyword, empty for
	// `needs: []` (it starts at once). omitzero keeps that difference in
	// the stored spec. `default:` never gives needs.
	Needs []Need `json:"needs,omitzero"`
	// Retry is how many times a failed job is retried automatically, 0..2,
	// when its failure reason is one RetryWhen lists (`retry: {when}`;
	// empty means always).
	Retry     int      `json:"retry,omitempty"`
	RetryWhen []string `json:"retry_when,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Image     *Image   `json:"image,omitempty"`
	// Services and Cache: Cache is the first of Caches when `cache` is a
	// list, and the only cache otherwise (Caches is then nil).
	Services []Service `json:"services,omitempty"`
	Cache    *Cache    `json:"cache,omitempty"`
	Caches   []Cache   `json:"caches,omitempty"`
	// Timeout is the job's `timeout` as written and TimeoutAfter its
	// duration; zero means the server's job timeout.
	Timeout      string        `json:"timeout,omitempty"`
	TimeoutAfter time.Duration `json:"timeout_after,omitempty"`
	// NodeIndex and NodeTotal place an instance of a `parallel:` job among
	// its job's instances (CI_NODE_INDEX, CI_NODE_TOTAL): NodeIndex counts
	// from 1 and is zero for a job that is not parallel. A matrix
	// instance's variables are in Variables, over the job's own.
	NodeIndex int `json:"node_index,omitempty"`
	NodeTotal int `json:"node_total,omitempty"`
	// Interruptible: a newer pipeline of the ref may cancel the job
	// (the service's autoCancel).
	Interruptible bool `json:"interruptible,omitempty"`
	// Rules are the job's `rules:` (HasRules: the keyword was written,
	// even as an empty list, which leaves the job out of every pipeline).
	// JobsFor evaluates them and writes their outcome (when,
	// allow_failure, variables, start_in) into the job it returns; they
	// are not stored with the job.
	Rules    []ciexpr.Rule `json:"-"`
	HasRules bool          `json:"-"`
	// ownVariables are the keys of the job's own `variables:`, which
	// workflow rules' variables do not replace.
	ownVariables []string
	// Trigger is set on a trigger job (a bridge, see trigger.go), which
	// has no script and runs no command.
	Trigger *Trigger `json:"trigger,omitempty"`
}

// Manual reports whether the job waits for a user to play it.
func (j *Job) Manual() bool { return j.When == cistatus.WhenManual }

// DependenciesIn returns the names of the jobs among pipelineJobs (the
// pipeline's jobs, from JobsFor) whose artifacts the job fetches
// (FetchesFrom): those of earlier stages it names, or all of earlier
// stages when it names none; for a job with needs, the needed jobs whose
// artifacts it keeps. Jobs that only/except left out of the pipeline are
// dropped.
func (j *Job) DependenciesIn(pipelineJobs []Job) []string {
	out := []string{}
	for _, other := range pipelineJobs {
		if j.FetchesFrom(other.Name, other.StageIndex) {
			out = append(out, other.Name)
		}
	}
	return out
}

// Artifacts is a job's `artifacts` keyword.
type Artifacts struct {
	// Name of the archive without .zip; DefaultArtifactsName when unset.
	Name      string   `json:"name"`
	Paths     []string `json:"paths,omitempty"`
	Untracked bool     `json:"untracked,omitempty"`
	// When: on_success (default), on_failure or always.
	When string `json:"when"`
	// ExpireIn is the keyword as written ("1 week"); empty means the
	// artifacts do not expire. ExpireAfter is its parsed duration and
	// ExpireNever is set for "never".
	ExpireIn    string        `json:"expire_in,omitempty"`
	ExpireAfter time.Duration `json:"expire_after,omitempty"`
	ExpireNever bool          `json:"expire_never,omitempty"`
	// Exclude are paths kept out of the archive; ExposeAs the name under
	// which a merge request would link the artifacts; Reports maps a report
	// type (junit, dotenv, ...) to its paths. Exclude and ExposeAs are
	// stored, not used yet; junit and dotenv reports are collected
	// (internal/reports.go), other types are not.
	Exclude  []string            `json:"exclude,omitempty"`
	ExposeAs string              `json:"expose_as,omitempty"`
	Reports  map[string][]string `json:"reports,omitempty"`
}

// Artifacts' `when` values.
const (
	ArtifactsOnSuccess = "on_success"
	ArtifactsOnFailure = "on_failure"
	ArtifactsAlways    = "always"
)

// Expires reports whether the artifacts have an expiry, and after how long.
func (a *Artifacts) Expires() (time.Duration, bool) {
	if a == nil || a.ExpireIn == "" || a.ExpireNever {
		return 0, false
	}
	return a.ExpireAfter, true
}

// Environment is a job's `environment` keyword. Name and URL may hold
// variables ($CI_COMMIT_REF_SLUG...); expand them with ExpandVariables when
// the job is created.
type Environment struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
	// Action is "start" (the default) or "stop".
	Action string `json:"action"`
	// OnStop names the job that stops this environment.
	OnStop string `json:"on_stop,omitempty"`
	// AutoStopIn, the Kubernetes namespace and the deployment tier are
	// stored as written; nothing stops environments by time yet.
	AutoStopIn          string `json:"auto_stop_in,omitempty"`
	KubernetesNamespace string `json:"kubernetes_namespace,omitempty"`
	DeploymentTier      string `json:"deployment_tier,omitempty"`
}

// Environment actions. Prepare, verify and access touch no deployment.
const (
	EnvironmentStart   = "start"
	EnvironmentStop    = "stop"
	EnvironmentPrepare = "prepare"
	EnvironmentVerify  = "verify"
	EnvironmentAccess  = "access"
)

// Image is the `image` keyword (a string is the name alone). PullPolicy
// is current GitLab's `pull_policy` (always, if-not-present, never);
// its `docker` and `kubernetes` options are accepted and not kept.
type Image struct {
	Name       string   `json:"name"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	PullPolicy []string `json:"pull_policy,omitempty"`
}

// Service is one entry of `services` (a string is the name alone).
type Service struct {
	Name       string   `json:"name"`
	Alias      string   `json:"alias,omitempty"`
	Command    []string `json:"command,omitempty"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	// Variables are the service's own (current GitLab), and PullPolicy
	// as the image's.
	Variables  []Variable `json:"variables,omitempty"`
	PullPolicy []string   `json:"pull_policy,omitempty"`
}

// Cache is the `cache` keyword.
type Cache struct {
	// Key is DefaultCacheKey when unset.
	Key       string   `json:"key"`
	Paths     []string `json:"paths,omitempty"`
	Untracked bool     `json:"untracked,omitempty"`
	// Policy is pull-push (the default), pull or push.
	Policy string `json:"policy"`
	// KeyFiles and KeyPrefix are `key: {files, prefix}`: the key is then
	// derived from those files' last commits when the job is handed over
	// (the service's cachekey.go); until then Key holds the prefix, or
	// DefaultCacheKey. When is on_success (the default), on_failure or
	// always; FallbackKeys are tried in order when Key has no cache.
	KeyFiles     []string `json:"key_files,omitempty"`
	KeyPrefix    string   `json:"key_prefix,omitempty"`
	When         string   `json:"when,omitempty"`
	FallbackKeys []string `json:"fallback_keys,omitempty"`
}

// Variable is one CI variable. Public is false for secrets (tokens, secret
// project variables), which executors must mask and never log.
type Variable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`
}
