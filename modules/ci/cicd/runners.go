package cicd

import (
	"errors"
	"time"
)

// RunnerID is a GitLab Runner's id.
type RunnerID int64

// Runner is a registered GitLab Runner, as the runners' commands show it
// (its token is stored hashed only, so it is never shown).
type Runner struct {
	ID          RunnerID
	Description string
	// Active: it takes jobs (false: paused).
	Active bool
	// IsShared: registered with the instance's token, it takes the jobs of
	// every project whose shared runners are on; otherwise those of the
	// projects it is enabled on.
	IsShared bool
	// Locked: it may not be enabled on other projects.
	Locked bool
	// RunUntagged: it takes jobs without tags too.
	RunUntagged bool
	Tags        []string
	// What the runner says of itself ("" when it said nothing).
	Name, Version, Revision, Platform, Architecture string
	// ContactedAt is its last request (recorded at most once a minute).
	ContactedAt *time.Time
	// Projects are the projects it is enabled on that the caller sees;
	// only Service.Runner and UpdateRunner fill it.
	Projects []RunnerProject
}

// RunnerProject is a project in a runner's details or beside a runner's
// job.
type RunnerProject struct {
	ID                int64
	Name              string
	NameWithNamespace string
	Path              string
	PathWithNamespace string
}

// RunnerQuery selects runners, oldest first.
type RunnerQuery struct {
	// All: every runner, for administrators (ErrAdminOnly for anyone
	// else); otherwise the specific runners of the projects the caller
	// administers.
	All bool
	// Scope is "", active, paused or online; with All also specific or
	// shared (an *InvalidValueError for anything else).
	Scope  string
	Offset int
	Limit  int
}

// RunnerFields are what an update of a runner gives; nil is "not given".
type RunnerFields struct {
	Description *string
	Active      *bool
	Tags        *[]string
	RunUntagged *bool
	Locked      *bool
}

// RunnerJobQuery selects a runner's jobs, newest first.
type RunnerJobQuery struct {
	// Status is "", running, success, failed or canceled (an
	// *InvalidValueError for anything else).
	Status string
	Offset int
	Limit  int
}

// RunnerJob is a job a runner took, with its project.
type RunnerJob struct {
	Job
	Project RunnerProject
}

// The runners' errors.
var (
	// ErrRunnerNotFound: no runner of that id (or, on a project, none
	// enabled there).
	ErrRunnerNotFound = errors.New("ci: runner not found")
	// ErrNoRunnerAccess: the caller administers none of the runner's
	// projects.
	ErrNoRunnerAccess = errors.New("ci: no access to the runner")
	// ErrRunnerIsShared: a shared runner is the administrators' to change,
	// and is on every project already.
	ErrRunnerIsShared = errors.New("ci: the runner is shared")
	// ErrAdminOnly: for administrators only.
	ErrAdminOnly = errors.New("ci: for administrators only")
	// ErrNoRunnerChange: an update gives no field.
	ErrNoRunnerChange = errors.New("ci: a runner's update gives no field")
	// ErrRunnerDescriptionTooLong: a description is at most 1024 bytes.
	ErrRunnerDescriptionTooLong = errors.New("ci: a runner's description is too long (maximum is 1024 characters)")
	// ErrInvalidRunnerTags: an *InvalidTagsError says why.
	ErrInvalidRunnerTags = errors.New("ci: invalid runner tags")
	// ErrRunnerTagsNeeded: a runner that takes no untagged jobs needs
	// tags.
	ErrRunnerTagsNeeded = errors.New("ci: a runner that takes no untagged jobs needs tags")
	// ErrRunnerHasProjects: only an administrator removes a runner of
	// several projects.
	ErrRunnerHasProjects = errors.New("ci: the runner is associated with more than one project")
	// ErrRunnerLocked: a locked runner is enabled on no other project.
	ErrRunnerLocked = errors.New("ci: the runner is locked")
	// ErrRunnerAlreadyEnabled: the runner is enabled on the project
	// already.
	ErrRunnerAlreadyEnabled = errors.New("ci: the runner is enabled for the project already")
	// ErrRunnerLastProject: a runner is not disabled on its only project
	// (remove it instead).
	ErrRunnerLastProject = errors.New("ci: the runner's only project")
	// ErrRegistrationTokenConfigured: the shared registration token is
	// set in the configuration, and is changed there. Its text is what
	// the admin command and the API say.
	ErrRegistrationTokenConfigured = errors.New("the registration token is set in the configuration (ci.runners_registration_token): change it there")
	// ErrInvalidValue: a parameter is not one of the values it may take;
	// an *InvalidValueError names it.
	ErrInvalidValue = errors.New("ci: a parameter does not have a valid value")
)

// InvalidTagsError is a tag list refused: Reason says why (a tag too long
// or with a comma, a control character, too many tags).
type InvalidTagsError struct {
	Reason string
}

func (e *InvalidTagsError) Error() string { return "ci: invalid runner tags: " + e.Reason }

// Unwrap makes an InvalidTagsError an ErrInvalidRunnerTags.
func (e *InvalidTagsError) Unwrap() error { return ErrInvalidRunnerTags }

// InvalidValueError names the parameter whose value is not one it may
// take.
type InvalidValueError struct {
	Field string
}

func (e *InvalidValueError) Error() string { return "ci: " + e.Field + " does not have a valid value" }

// Unwrap makes an InvalidValueError an ErrInvalidValue.
func (e *InvalidValueError) Unwrap() error { return ErrInvalidValue }
