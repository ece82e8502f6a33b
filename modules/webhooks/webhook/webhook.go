package webhook

import (
	"context"
	"errors"
	"time"
)

// Outcome is how an attempt at a delivery ended.
type Outcome string

const (
	Delivered Outcome = "delivered" // the receiver answered 2xx
	Retrying  Outcome = "retrying"  // failed; the queue tries again later
	Failed    Outcome = "failed"    // failed and given up (or a manual attempt)
	Refused   Outcome = "refused"   // the destination is not allowed; never retried
)

// Attempt is one attempt of a hook's delivery log: what was sent, what
// came back and how it ended.
type Attempt struct {
	ID        int64
	HookID    int64
	System    bool  // a system hook's; else a project hook's
	ProjectID int64 // 0 for a system hook
	// Trigger is what the payload is for (push_events, issues_events...,
	// or system_hook_test); Event is its X-Gitlab-Event header.
	Trigger        string
	Event          string
	URL            string // without credentials
	RequestHeaders map[string]string
	RequestBody    []byte // the JSON payload
	// ResponseStatus is 0 when no answer came (a refused destination, a
	// connection error; Error says which).
	ResponseStatus  int
	ResponseHeaders map[string]string
	ResponseBody    string // at most 16 KiB
	Duration        time.Duration
	Number          int // 1 for the first try of a delivery
	Error           string
	Outcome         Outcome
	CreatedAt       time.Time
}

// Answered says whether the receiver answered, whatever its status.
func (a Attempt) Answered() bool { return a.ResponseStatus != 0 }

// SystemHook is a hook an administrator added. Its token is never given
// back.
type SystemHook struct {
	ID                    int64
	URL                   string
	PushEvents            bool
	TagPushEvents         bool
	EnableSSLVerification bool
	CreatedAt             time.Time
}

// SystemHookFields are what adding a system hook gives; nil is "not given"
// (push events and SSL verification default to on, tag pushes to off).
type SystemHookFields struct {
	URL                   string // http or https; required
	Token                 *string
	PushEvents            *bool
	TagPushEvents         *bool
	EnableSSLVerification *bool
}

// Service is the webhooks module: the delivery logs of project and system
// hooks, sending a payload on demand, and the system hooks themselves. The
// caller is the principal in ctx. A project hook's log is for those who
// administer its project (Master; projects.ErrForbidden or the projects
// module's not-found otherwise); system hooks are for administrators
// (ErrAdminOnly). Lists are newest first: limit of them from the
// offset-th on, and how many there are in all.
type Service interface {
	// ProjectHookAttempts is the delivery log of the project's hook
	// (projects.ErrHookNotFound when it has no such hook). project is the
	// API's :id (an id or a full path).
	ProjectHookAttempts(ctx context.Context, project string, hookID int64, offset, limit int) ([]Attempt, int, error)
	// ProjectHookAttempt is one entry of it (ErrAttemptNotFound).
	ProjectHookAttempt(ctx context.Context, project string, hookID, attemptID int64) (Attempt, error)
	// Resend sends a logged payload again, now, once, and logs the new
	// attempt; a *NoAnswerError (ErrNoAnswer) when no answer came.
	Resend(ctx context.Context, project string, hookID, attemptID int64) (Attempt, error)
	// TestProjectHook sends a sample payload of trigger built from the
	// project's latest object of its kind (ErrUnknownTrigger; a
	// NoSampleError when the project has none), as Resend does.
	TestProjectHook(ctx context.Context, project string, hookID int64, trigger string) (Attempt, error)

	// SystemHooks are the system hooks, oldest first.
	SystemHooks(ctx context.Context, offset, limit int) ([]SystemHook, int, error)
	// AddSystemHook adds one (ErrURLMissing, or an *InvalidURLError).
	AddSystemHook(ctx context.Context, in SystemHookFields) (SystemHook, error)
	// TestSystemHook sends GitLab's sample project_create to the hook and
	// returns the sample, whatever the receiver said (the attempt is in
	// the hook's log).
	TestSystemHook(ctx context.Context, id int64) (map[string]any, error)
	// DeleteSystemHook removes the hook with its queued deliveries.
	DeleteSystemHook(ctx context.Context, id int64) error
	// SystemHookAttempts is the hook's delivery log.
	SystemHookAttempts(ctx context.Context, id int64, offset, limit int) ([]Attempt, int, error)
}

var (
	// ErrAdminOnly: system hooks are for administrators.
	ErrAdminOnly = errors.New("webhooks: for administrators only")
	// ErrAttemptNotFound: no such entry in the hook's delivery log.
	ErrAttemptNotFound = errors.New("webhooks: delivery log entry not found")
	// ErrSystemHookNotFound: no system hook of that id.
	ErrSystemHookNotFound = errors.New("webhooks: system hook not found")
	// ErrUnknownTrigger: a trigger name that is none of the seven.
	ErrUnknownTrigger = errors.New("webhooks: unknown trigger")
	// ErrURLMissing: a system hook without a URL.
	ErrURLMissing = errors.New("webhooks: url missing")
	// ErrInvalidURL is what every *InvalidURLError is.
	ErrInvalidURL = errors.New("webhooks: invalid url")
	// ErrNoSample is what every NoSampleError is.
	ErrNoSample = errors.New("webhooks: nothing to build the sample from")
	// ErrNoAnswer is what every *NoAnswerError is.
	ErrNoAnswer = errors.New("webhooks: the hook did not answer")
)

// InvalidURLError says why a URL is not a hook's (in the projects
// module's words).
type InvalidURLError struct{ Problem string }

func (e *InvalidURLError) Error() string        { return "webhooks: url " + e.Problem }
func (e *InvalidURLError) Is(target error) bool { return target == ErrInvalidURL }

// NoSampleError says what the project lacks to build a trigger's sample
// ("Ensure the project has at least one commit.").
type NoSampleError string

func (e NoSampleError) Error() string        { return string(e) }
func (e NoSampleError) Is(target error) bool { return target == ErrNoSample }

// NoAnswerError is a manual attempt that got no answer; the attempt is
// logged all the same.
type NoAnswerError struct{ Attempt Attempt }

func (e *NoAnswerError) Error() string        { return "Hook execution failed: " + e.Attempt.Error }
func (e *NoAnswerError) Is(target error) bool { return target == ErrNoAnswer }
