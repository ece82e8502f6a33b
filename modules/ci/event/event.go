// Package event is the contract of the events the CI module publishes
// through the core/events outbox: a job's and a pipeline's status changes,
// which the webhooks module sends as "Job Hook" and "Pipeline Hook" and the
// merge requests module follows (merge when the pipeline succeeds). It is a
// package of its own so that the contract is not defined inside internal/.
//
// The payloads wait in the outbox across upgrades, so their JSON is frozen:
// rename nothing, add fields only with omitempty.
package event

import "time"

// JobEvent is published whenever a job's status changes (and when a job is
// created by a retry), with the fields of GitLab's build hook that the
// store knows; consumers add project and commit details.
type JobEvent struct {
	ObjectKind   string     `json:"object_kind"` // "build", as GitLab 9.x kept it
	ProjectID    int64      `json:"project_id"`
	PipelineID   int64      `json:"pipeline_id"`
	JobID        int64      `json:"build_id"`
	Name         string     `json:"build_name"`
	Stage        string     `json:"build_stage"`
	Status       string     `json:"build_status"`
	StartedAt    *time.Time `json:"build_started_at"`
	FinishedAt   *time.Time `json:"build_finished_at"`
	Duration     *float64   `json:"build_duration"`
	AllowFailure bool       `json:"build_allow_failure"`
	Ref          string     `json:"ref"`
	Tag          bool       `json:"tag"`
	SHA          string     `json:"sha"`
	BeforeSHA    string     `json:"before_sha"`
	UserID       int64      `json:"user_id"`
	// Runner is the GitLab Runner the job was handed to, as it was then;
	// nil for a job on an executor plugin or not yet assigned.
	Runner *JobRunner `json:"runner,omitempty"`
	// When is the job's when: (on_success, on_failure, always, manual);
	// empty in events published before it was added.
	When string `json:"when,omitempty"`
	// Artifacts is the job's stored archive; nil when it has none.
	Artifacts *JobArtifacts `json:"artifacts_file,omitempty"`
}

// JobArtifacts is a job's archive as hook payloads show it.
type JobArtifacts struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

// JobRunner is a runner as hook payloads show it.
type JobRunner struct {
	ID          int64  `json:"id"`
	Description string `json:"description"`
	Active      bool   `json:"active"`
	IsShared    bool   `json:"is_shared"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (JobEvent) EventTopic() string { return "ci.job" }

// PipelineEvent is published whenever a pipeline's status changes.
type PipelineEvent struct {
	ObjectKind string     `json:"object_kind"` // "pipeline"
	ProjectID  int64      `json:"project_id"`
	PipelineID int64      `json:"id"`
	Ref        string     `json:"ref"`
	Tag        bool       `json:"tag"`
	SHA        string     `json:"sha"`
	BeforeSHA  string     `json:"before_sha"`
	Status     string     `json:"status"`
	Stages     []string   `json:"stages"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Duration   *int64     `json:"duration"`
	UserID     int64      `json:"user_id"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (PipelineEvent) EventTopic() string { return "ci.pipeline" }
