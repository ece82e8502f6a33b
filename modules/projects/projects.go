package projects

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/internal"
	"github.com/fennec-forge/fennec/modules/projects/project"
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

// The module's contract, by the names it had here; it is defined (and
// documented) in package project, which new code imports.
type (
	// ProjectInfo is what other modules may know of a project.
	ProjectInfo = project.Info
	// Action is something a caller may want to do on a project.
	Action = project.Action
	// GroupInfo is what other modules may know of a group.
	GroupInfo = project.GroupInfo
	// Access is the one place every module asks what a caller may do on a
	// project.
	Access = project.Access
	// RepositoryState is how the repository module records what happened
	// to a project's repository.
	RepositoryState = project.RepositoryState
	// Teams tells who belongs to a project and resolves groups.
	Teams = project.Teams
	// RunnersTokens finds the project a runners_token belongs to.
	RunnersTokens = project.RunnersTokens
	// Hook is a stored project hook, as the webhooks module reads it: its
	// Token is sealed (open it with HookTokenPurpose).
	Hook = project.Hook
	// Hooks lets the webhooks module read the project hooks.
	Hooks = project.Hooks
	// SSHEndpoint lets the module that serves git over SSH say where
	// clients reach it.
	SSHEndpoint = project.SSHEndpoint
	// OpenIssuesCounter gives a project's open_issues_count
	// (ProvideOpenIssuesCounter).
	OpenIssuesCounter = project.OpenIssuesCounter
	// BranchChecker tells whether a project's repository has a branch
	// (ProvideBranchChecker).
	BranchChecker = project.BranchChecker
)

// The actions of the permission table in API-CONVENTIONS.md.
const (
	ReadProject      = project.ReadProject
	ReadCode         = project.ReadCode
	CreateIssue      = project.CreateIssue
	CreateSnippet    = project.CreateSnippet
	PushCode         = project.PushCode
	PushProtected    = project.PushProtected
	AdminProject     = project.AdminProject
	ChangeVisibility = project.ChangeVisibility
	RemoveProject    = project.RemoveProject

	ReadIssues        = project.ReadIssues
	ReadMergeRequests = project.ReadMergeRequests
	ReadSnippets      = project.ReadSnippets
	ReadJobs          = project.ReadJobs
)

// Access levels.
const (
	Guest     = project.Guest
	Reporter  = project.Reporter
	Developer = project.Developer
	Master    = project.Master
	Owner     = project.Owner
)

// The module's domain errors, for callers to test with errors.Is (package
// project documents them all).
var (
	// ErrNotFound: no such project, or one the caller may not see; answered
	// 404 Project Not Found.
	ErrNotFound = project.ErrNotFound
	// ErrForbidden: the caller sees the project (or group) but may not do
	// what was asked; answered 403 Forbidden.
	ErrForbidden = project.ErrForbidden
	// ErrGroupNotFound: no such group, or one the caller may not see;
	// answered 404 Group Not Found.
	ErrGroupNotFound = project.ErrGroupNotFound
	// ErrHookNotFound: the project has no such hook.
	ErrHookNotFound = project.ErrHookNotFound
)

// HookTokenPurpose is the purpose a hook's token is sealed for (core/sealed).
const HookTokenPurpose = project.HookTokenPurpose

// HookURLProblem is the shape rule of hook URLs (project.HookURLProblem).
func HookURLProblem(raw string) string { return project.HookURLProblem(raw) }

// Import states of RepositoryState.SetImportStatus.
const (
	ImportStarted  = project.ImportStarted
	ImportFinished = project.ImportFinished
	ImportFailed   = project.ImportFailed
)

// OpenIssuesCounters are the modules that count a project's open issues
// (the issues module), so this module never imports them.
var OpenIssuesCounters = fennec.NewExtension[OpenIssuesCounter]("fennec.projects.open_issues_counters")

// ProvideOpenIssuesCounter registers a module's OpenIssuesCounter. The
// counter is taken while the app is assembled, so ctor may depend on what
// depends on this module (Access).
func ProvideOpenIssuesCounter[D any](ctor func(D) OpenIssuesCounter) fennec.Part {
	return fennec.Contribute(OpenIssuesCounters, func(d D) []OpenIssuesCounter { return []OpenIssuesCounter{ctor(d)} })
}

// BranchCheckers are the modules that say whether a branch exists (the
// repository module).
var BranchCheckers = fennec.NewExtension[BranchChecker]("fennec.projects.branch_checkers")

// ProvideBranchChecker registers a module's BranchChecker.
func ProvideBranchChecker[D any](ctor func(D) BranchChecker) fennec.Part {
	return fennec.Contribute(BranchCheckers, func(d D) []BranchChecker { return []BranchChecker{ctor(d)} })
}

// Module is the projects module for fennec.WithModules. It provides the
// contracts of package project over one service.
func Module() fennec.Module {
	return fennec.NewModule("projects",
		fennec.Tables(internal.Tables()...),
		fennec.ProvideMigrations(internal.Migrations),
		fennec.Provide(internal.NewBaseURL, internal.NewService, func(s *internal.Service) project.Access { return s },
			func(s *internal.Service) project.RepositoryState { return s },
			func(s *internal.Service) project.SSHEndpoint { return s },
			func(s *internal.Service) project.Teams { return s },
			func(s *internal.Service) project.Hooks { return s },
			func(s *internal.Service) project.RunnersTokens { return s },
			func(s *internal.Service) project.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewUploadRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideSubscribers(internal.CleanupSubscribers),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec),
		fennec.Use(OpenIssuesCounters, (*internal.Service).SetOpenIssuesCounters),
		fennec.Use(BranchCheckers, (*internal.Service).SetBranchCheckers),
	)
}
