package cistatus

// Status is a job's or a pipeline's status, spelled as the API shows it.
type Status string

// The statuses of GitLab 9.x (HasStatus). StatusNone is the composite status
// of an empty set of jobs, which GitLab stores as NULL.
const (
	StatusNone     Status = ""
	StatusCreated  Status = "created"
	StatusPending  Status = "pending"
	StatusRunning  Status = "running"
	StatusSuccess  Status = "success"
	StatusFailed   Status = "failed"
	StatusCanceled Status = "canceled"
	StatusSkipped  Status = "skipped"
	StatusManual   Status = "manual"
	// StatusWaitingForResource (GitLab 12.7) is a job that would be
	// pending but whose resource group another job holds.
	StatusWaitingForResource Status = "waiting_for_resource"
	// StatusScheduled (GitLab 11.4) is a delayed job (`when: delayed`)
	// waiting for its start_in to pass before it becomes pending.
	StatusScheduled Status = "scheduled"
)

// Statuses lists every status in the order GitLab declares them; API filters
// (for example the pipelines list's status parameter) validate against it.
var Statuses = []Status{
	StatusCreated, StatusPending, StatusRunning, StatusSuccess,
	StatusFailed, StatusCanceled, StatusSkipped, StatusManual, StatusWaitingForResource, StatusScheduled,
}

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	for _, known := range Statuses {
		if s == known {
			return true
		}
	}
	return false
}

// Completed reports whether s is final for the purpose of stage gating:
// success, failed, canceled or skipped. A stage whose composite status is
// completed lets the next stage be decided.
func (s Status) Completed() bool {
	switch s {
	case StatusSuccess, StatusFailed, StatusCanceled, StatusSkipped:
		return true
	}
	return false
}

// Active reports whether a job in status s holds, or is waiting for, an
// executor: pending or running.
func (s Status) Active() bool {
	return s == StatusPending || s == StatusRunning
}

// Cancelable reports whether a job in status s can be canceled: GitLab's
// cancel event moves created, pending, running and manual jobs to canceled.
func (s Status) Cancelable() bool {
	switch s {
	case StatusCreated, StatusPending, StatusRunning, StatusManual, StatusWaitingForResource, StatusScheduled:
		return true
	}
	return false
}

// Retryable reports whether a job in status s may be retried (cloned as a new
// job): only finished jobs that ran or were canceled.
func (s Status) Retryable() bool {
	switch s {
	case StatusSuccess, StatusFailed, StatusCanceled:
		return true
	}
	return false
}

// When is a job's `when` keyword: the condition on the earlier stages'
// composite status under which the job runs.
type When string

// The values of `when` in GitLab 9.x (`delayed` came in 11.4).
const (
	WhenOnSuccess When = "on_success"
	WhenOnFailure When = "on_failure"
	WhenAlways    When = "always"
	WhenManual    When = "manual"
)

// Valid reports whether w is one of the four values of `when`.
func (w When) Valid() bool {
	switch w {
	case WhenOnSuccess, WhenOnFailure, WhenAlways, WhenManual:
		return true
	}
	return false
}
