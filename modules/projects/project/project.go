package project

import "context"

// Access levels of API-CONVENTIONS.md (members' access_level).
const (
	NoAccess  = 0
	Guest     = 10
	Reporter  = 20
	Developer = 30
	Master    = 40
	Owner     = 50
)

// Visibility levels of projects and groups.
const (
	Private  = "private"
	Internal = "internal" // signed-in users who are not external
	Public   = "public"
)

// Action is something a caller may want to do on a project.
type Action int

// The actions of the permission table in API-CONVENTIONS.md.
const (
	ReadProject Action = iota
	ReadCode           // clone, read repository, jobs, pipelines, MRs
	CreateIssue
	CreateSnippet
	PushCode // unprotected branches, MRs, tags, job control
	PushProtected
	AdminProject // settings, hooks, members, protected branches
	ChangeVisibility
	RemoveProject // also archive/unarchive, delete MRs and issues

	// Reads of features that a project may switch off.
	ReadIssues        // issues_enabled
	ReadMergeRequests // merge_requests_enabled
	ReadSnippets      // snippets_enabled
	ReadJobs          // jobs_enabled; non-members also need public_jobs
)

// Features are a project's switches, settable on create and edit. The
// module stores them with these JSON names (they are part of the stored
// project), so the names never change.
type Features struct {
	IssuesEnabled                             bool `json:"issues_enabled"`
	MergeRequestsEnabled                      bool `json:"merge_requests_enabled"`
	JobsEnabled                               bool `json:"jobs_enabled"`
	WikiEnabled                               bool `json:"wiki_enabled"`
	SnippetsEnabled                           bool `json:"snippets_enabled"`
	ContainerRegistryEnabled                  bool `json:"container_registry_enabled"`
	SharedRunnersEnabled                      bool `json:"shared_runners_enabled"`
	PublicJobs                                bool `json:"public_jobs"`
	OnlyAllowMergeIfPipelineSucceeds          bool `json:"only_allow_merge_if_pipeline_succeeds"`
	OnlyAllowMergeIfAllDiscussionsAreResolved bool `json:"only_allow_merge_if_all_discussions_are_resolved"`
	LFSEnabled                                bool `json:"lfs_enabled"`
	RequestAccessEnabled                      bool `json:"request_access_enabled"`
}

// Map is the switches by their API names ("issues_enabled": true), for
// code that picks one by name: the tabs of the project's web pages.
func (f Features) Map() map[string]bool {
	return map[string]bool{
		"issues_enabled": f.IssuesEnabled, "merge_requests_enabled": f.MergeRequestsEnabled,
		"jobs_enabled": f.JobsEnabled, "wiki_enabled": f.WikiEnabled, "snippets_enabled": f.SnippetsEnabled,
		"container_registry_enabled": f.ContainerRegistryEnabled, "shared_runners_enabled": f.SharedRunnersEnabled,
		"public_jobs": f.PublicJobs, "lfs_enabled": f.LFSEnabled, "request_access_enabled": f.RequestAccessEnabled,
		"only_allow_merge_if_pipeline_succeeds":            f.OnlyAllowMergeIfPipelineSucceeds,
		"only_allow_merge_if_all_discussions_are_resolved": f.OnlyAllowMergeIfAllDiscussionsAreResolved,
	}
}

// Info is what other modules may know of a project, as the caller of the
// call that returned it sees it.
type Info struct {
	ID                int64
	NamespaceID       int64
	Name              string
	Path              string
	PathWithNamespace string
	NameWithNamespace string
	// WebURL is the project's page under the external URL of the request
	// ctx carries; without a request (background work) it is the path
	// alone, "/namespace/project".
	WebURL string
	// HTTPURLToRepo and SSHURLToRepo are the clone URLs the API's project
	// view gives (http_url_to_repo, ssh_url_to_repo), for the pages that
	// show them.
	HTTPURLToRepo string
	SSHURLToRepo  string
	Visibility    string
	Archived      bool
	DefaultBranch string
	Features      Features
	// Level is the caller's effective access level (Guest for readers of a
	// public or internal project, Owner for administrators).
	Level int
	// MemberLevel is the caller's level from membership alone (the project,
	// its group, a group it is shared with, the personal namespace's owner):
	// 0 for non-members, administrators included. Level cannot tell a Guest
	// member from a reader of a public project; GitLab's "team member" rules
	// (private snippets are shown to every member) need that difference.
	MemberLevel int
	// ForkedFromID is the project this one was forked from (0: none), for
	// merge requests from a fork into its upstream.
	ForkedFromID int64
	// Description is the project's description ("" when it has none), for
	// the project object of hook payloads.
	Description string
	// OnlyAllowMergeIfAllDiscussionsAreResolved: merge requests merge only
	// when their threads are resolved (the merge requests module asks).
	OnlyAllowMergeIfAllDiscussionsAreResolved bool
	// OnlyAllowMergeIfPipelineSucceeds: merge requests merge only when the
	// head commit's pipeline succeeded, if it has one (the merge requests
	// module asks).
	OnlyAllowMergeIfPipelineSucceeds bool
	// GroupIDs are the group owning the project and its ancestors, nearest
	// first (empty in a personal namespace): what a project inherits from
	// groups (labels, milestones, CI variables) comes from these.
	GroupIDs []int64
	// StarCount and ForksCount are the API's star_count and forks_count
	// (counters kept on the project), for the pages' project header.
	StarCount, ForksCount int
}

// GroupInfo is what other modules may know of a group.
type GroupInfo struct {
	ID       int64
	Name     string
	FullPath string
	// Level is the caller's unexpired membership level in the group,
	// inherited from the groups above it (0 when none); an
	// administrator's is Owner.
	Level int
	// AncestorIDs are the groups above it, nearest first (none for a
	// top-level group).
	AncestorIDs []int64
}

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
	Resolve(ctx context.Context, ref string) (Info, error)
	Require(ctx context.Context, ref string, a Action) (Info, error)
	Can(ctx context.Context, ref string, a Action) (bool, error)
	// ResolveID and RequireID take a project's id, for code that holds one
	// (an event, a job) rather than a path parameter.
	ResolveID(ctx context.Context, projectID int64) (Info, error)
	RequireID(ctx context.Context, projectID int64, a Action) (Info, error)
}

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

// Import states of a project's import_status (RepositoryState.SetImportStatus).
const (
	ImportNone      = "none"
	ImportScheduled = "scheduled"
	ImportStarted   = "started"
	ImportFinished  = "finished"
	ImportFailed    = "failed"
)

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

// RunnersTokens finds the project a runners_token belongs to, for the CI
// module's runner registration (a runner registered with it is that
// project's runner). ErrNotFound when no project has it.
type RunnersTokens interface {
	ProjectIDByRunnersToken(ctx context.Context, token string) (int64, error)
	// RunnersToken is project projectID's runners_token, for its CI/CD
	// settings page; ResetRunnersToken gives the project a new one (the
	// old one registers no more runners; registered runners keep their
	// own). Neither checks who asks: the CI module asks Access (Master)
	// first. ErrNotFound when there is no such project.
	RunnersToken(ctx context.Context, projectID int64) (string, error)
	ResetRunnersToken(ctx context.Context, projectID int64) (string, error)
}

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
// issues module owns issues and sits above this module, so it registers
// one (projects.ProvideOpenIssuesCounter) instead of being imported;
// without one every count is 0. It must read a stored counter, not walk
// issues (a page of 100 projects asks it 100 times), and join the
// transaction ctx carries, if any.
type OpenIssuesCounter interface {
	OpenIssuesCount(ctx context.Context, projectID int64) (int, error)
}

// BranchChecker tells whether a project's repository has a branch (for a
// default_branch an edit names). The repository module owns repositories
// and sits above this module, so it registers one
// (projects.ProvideBranchChecker) instead of being imported; without one
// the name is taken as given.
type BranchChecker interface {
	BranchExists(ctx context.Context, projectID int64, branch string) (bool, error)
}

// BranchLister is a BranchChecker that also names a repository's
// branches, by name, at most limit of them: the settings page offers them
// as the choices of default branch. A checker that is not one leaves the
// page a text field.
type BranchLister interface {
	BranchNames(ctx context.Context, projectID int64, limit int) ([]string, error)
}
