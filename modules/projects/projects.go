package projects

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/internal"
)

// The events the module publishes; their contract (and its documentation)
// is package event, public so that it is not defined inside internal/.
type (
	// ProjectEvent is published when a project is created, updated, forked,
	// archived, unarchived or deleted; Action says which.
	ProjectEvent  = event.ProjectEvent
	ProjectAction = event.ProjectAction
	// MemberEvent is published when a user joins or leaves a project or group.
	MemberEvent  = event.MemberEvent
	MemberAction = event.MemberAction
	// GroupEvent is published when a group is deleted (one per subgroup).
	GroupEvent  = event.GroupEvent
	GroupAction = event.GroupAction
)

// The actions of ProjectEvent and MemberEvent.
const (
	ProjectCreated    = event.ProjectCreated
	ProjectUpdated    = event.ProjectUpdated
	ProjectForked     = event.ProjectForked
	ProjectDeleted    = event.ProjectDeleted
	ProjectArchived   = event.ProjectArchived
	ProjectUnarchived = event.ProjectUnarchived
	MemberJoined      = event.MemberJoined
	MemberLeft        = event.MemberLeft
	GroupDeleted      = event.GroupDeleted
)

// ProjectInfo is what other modules may know of a project.
type ProjectInfo = internal.ProjectInfo

// Action is something a caller may want to do on a project.
type Action = internal.Action

// The actions of the permission table in API-CONVENTIONS.md.
const (
	ReadProject      = internal.ReadProject
	ReadCode         = internal.ReadCode
	CreateIssue      = internal.CreateIssue
	CreateSnippet    = internal.CreateSnippet
	PushCode         = internal.PushCode
	PushProtected    = internal.PushProtected
	AdminProject     = internal.AdminProject
	ChangeVisibility = internal.ChangeVisibility
	RemoveProject    = internal.RemoveProject

	ReadIssues        = internal.ReadIssues
	ReadMergeRequests = internal.ReadMergeRequests
	ReadSnippets      = internal.ReadSnippets
	ReadJobs          = internal.ReadJobs
)

// Access levels.
const (
	Guest     = internal.Guest
	Reporter  = internal.Reporter
	Developer = internal.Developer
	Master    = internal.Master
	Owner     = internal.Owner
)

// The module's domain errors, for callers to test with errors.Is. The
// module maps each to its GitLab answer at the API edge, so a handler of any
// module may return them (wrapped or not) as they come.
var (
	// ErrNotFound: no such project, or one the caller may not see (the two
	// are never told apart); answered 404 Project Not Found.
	ErrNotFound = internal.ErrProjectNotFound
	// ErrForbidden: the caller sees the project (or group) but may not do
	// what was asked; answered 403 Forbidden.
	ErrForbidden = internal.ErrForbidden
	// ErrGroupNotFound: no such group, or one the caller may not see;
	// answered 404 Group Not Found.
	ErrGroupNotFound = internal.ErrGroupNotFound
)

// Access is the one place every module asks what a caller may do on a
// project. The caller is the principal in ctx: the request's, or for
// background work auth.System() (may do everything) or auth.ForUser(u)
// (u's rights) put there with auth.WithPrincipal; a context without one is
// anonymous. Every method returns ErrNotFound for a project the caller may
// not see; Require and RequireID also ErrForbidden when the action is not
// allowed. Other errors are failures (the store), not answers. Archived
// projects refuse writes to everyone, the system too.
type Access interface {
	// Resolve, Require and Can take a project as the API's :id does: a
	// number or the full path.
	Resolve(ctx context.Context, ref string) (ProjectInfo, error)
	Require(ctx context.Context, ref string, a Action) (ProjectInfo, error)
	Can(ctx context.Context, ref string, a Action) (bool, error)
	// ResolveID and RequireID take a project's id, for code that holds one
	// (an event, a job) rather than a path parameter.
	ResolveID(ctx context.Context, projectID int64) (ProjectInfo, error)
	RequireID(ctx context.Context, projectID int64, a Action) (ProjectInfo, error)
}

// RepositoryState is how the repository module records what happened to a
// project's repository: the default branch the first push chose, and the
// state of an import from import_url (none, scheduled, started, finished,
// failed; the message of a failure is the project's import_error).
// ImportURL gives the import_url as it was given, credentials included
// (stored sealed; ProjectEvent.ImportURL carries it without them), "" when
// the project has none or is gone.
type RepositoryState interface {
	SetDefaultBranch(ctx context.Context, projectID int64, branch string) error
	SetImportStatus(ctx context.Context, projectID int64, status, message string) error
	ImportURL(ctx context.Context, projectID int64) (string, error)
	// ProjectIDs are the ids of every project, in the transaction ctx
	// carries if any (a backup's capture, a start-up check).
	ProjectIDs(ctx context.Context) ([]int64, error)
}

// GroupInfo is what other modules may know of a group.
type GroupInfo = internal.GroupInfo

// Teams tells other modules (notifications) who belongs to a project and
// which group owns it, and resolves a group as a caller sees it.
type Teams interface {
	// ResolveGroup finds a group by id or URL-encoded path as the caller of
	// ctx sees it; one they may not see is ErrGroupNotFound.
	ResolveGroup(ctx context.Context, ref string) (GroupInfo, error)
	// ProjectTeam returns the id of the group owning the project (0 for a
	// personal namespace) and the users with a membership on it (the
	// namespace's owner, project members, members of its group and of the
	// groups it is shared with), ascending. No access check.
	ProjectTeam(ctx context.Context, projectID int64) (groupID int64, userIDs []int64, err error)
}

// RunnersTokens finds the project a runners_token belongs to, for the CI
// module's runner registration (a runner registered with it is that
// project's runner). ErrNotFound when no project has it.
type RunnersTokens interface {
	ProjectIDByRunnersToken(ctx context.Context, token string) (int64, error)
}

// HookTokenPurpose is the purpose a hook's token is sealed for (core/sealed):
// the webhooks module opens Hook tokens with it to send X-Gitlab-Token.
const HookTokenPurpose = internal.PurposeHookToken

// Hook is a stored project hook, as the webhooks module reads it: its
// Token is sealed (open it with HookTokenPurpose).
type Hook = internal.HookConfig

// Hooks lets the webhooks module read the project hooks this module
// configures. Both methods join the transaction ctx carries, if any, and
// check no permission: callers ask Access first.
type Hooks interface {
	// ProjectHooks are a project's hooks in id order (none: empty).
	ProjectHooks(ctx context.Context, projectID int64) ([]Hook, error)
	// ProjectHook is one of them; ErrHookNotFound when the project has
	// no hook of that id.
	ProjectHook(ctx context.Context, projectID, hookID int64) (Hook, error)
}

// ErrHookNotFound: the project has no such hook; answered 404 Hook Not
// Found.
var ErrHookNotFound = internal.ErrHookNotFound

// HookURLProblem is the shape rule of hook URLs (absolute http or https
// with a host, 2048 characters at most): the "url" field error's text in
// GitLab's words, or "" when raw (trimmed) passes. The webhooks module
// applies it to system hooks; project hooks add the local-address check.
func HookURLProblem(raw string) string { return internal.HookURLProblem(raw) }

// Import states of RepositoryState.SetImportStatus.
const (
	ImportStarted  = internal.ImportStarted
	ImportFinished = internal.ImportFinished
	ImportFailed   = internal.ImportFailed
)

// SSHEndpoint lets the module that serves git over SSH say where clients
// reach it (host, or "" for the external URL's host, and port), so that
// ssh_url_to_repo names it: git@host:namespace/project.git on port 22,
// ssh://git@host:port/namespace/project.git on another. Until it is set
// (no SSH server), ssh_url_to_repo is git@<external host>:path.git.
type SSHEndpoint interface {
	SetSSHEndpoint(host string, port int)
}

// OpenIssuesCounter gives a project's number of open issues (opened or
// reopened, confidential ones included) for its open_issues_count. The
// module owning issues registers one with ProvideOpenIssuesCounter; without
// one every count is 0. It must read a stored counter, not walk issues (a
// page of projects asks once per project), and join the transaction ctx
// carries, if any.
type OpenIssuesCounter = internal.OpenIssuesCounter

// OpenIssuesCountersGroup is the fx value group of the registered counters.
const OpenIssuesCountersGroup = "fennec.projects.open_issues_counters"

// ProvideOpenIssuesCounter registers a module's OpenIssuesCounter; ctor is
// a constructor of one whose parameters fx fills. The counter is taken
// while the app is assembled, so ctor may depend on what depends on this
// module (Access).
func ProvideOpenIssuesCounter(ctor any) fx.Option {
	return fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+OpenIssuesCountersGroup+`"`)))
}

// BranchChecker tells whether a project's repository has a branch (for a
// default_branch an edit names). The module owning repositories registers
// one with ProvideBranchChecker; without one the name is taken as given.
type BranchChecker = internal.BranchChecker

// BranchCheckersGroup is the fx value group of the registered checkers.
const BranchCheckersGroup = "fennec.projects.branch_checkers"

// ProvideBranchChecker registers a module's BranchChecker; ctor is a
// constructor of one whose parameters fx fills.
func ProvideBranchChecker(ctor any) fx.Option {
	return fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+BranchCheckersGroup+`"`)))
}

// Module is the projects module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("projects",
		fennec.Tables(internal.Tables()...),
		fennec.ProvideMigrations(internal.Migrations),
		fx.Provide(internal.NewService, func(s *internal.Service) Access { return s },
			func(s *internal.Service) RepositoryState { return s },
			func(s *internal.Service) SSHEndpoint { return s },
			func(s *internal.Service) Teams { return s },
			func(s *internal.Service) Hooks { return s },
			func(s *internal.Service) RunnersTokens { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewUploadRoutes),
		fennec.ProvideSubscribers(internal.CleanupSubscribers),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec),
		fx.Invoke(fx.Annotate((*internal.Service).SetOpenIssuesCounters, fx.ParamTags("", `group:"`+OpenIssuesCountersGroup+`"`))),
		fx.Invoke(fx.Annotate((*internal.Service).SetBranchCheckers, fx.ParamTags("", `group:"`+BranchCheckersGroup+`"`))),
	)
}
