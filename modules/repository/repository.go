package repository

import (
	"context"

	"golang.org/x/crypto/ssh"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/commitstatus"
	"github.com/fennec-forge/fennec/modules/repository/event"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/repository/gitrepo"
	"github.com/fennec-forge/fennec/modules/repository/internal"
	"github.com/fennec-forge/fennec/modules/repository/release"
)

// Store gives access to projects' bare repositories. Modules above read
// them through gitread.Reader, never as go-git repositories (issue 36).
type Store interface {
	// Path is where a project's repository lives (it may not exist yet).
	Path(projectID int64) string
}

// CommitStatuses records statuses of commits for other modules (CI's jobs).
type CommitStatuses = commitstatus.Recorder

// BranchProtection says whether a branch is protected.
type BranchProtection interface {
	IsProtected(ctx context.Context, projectID int64, branch string) (bool, error)
}

// RefChanges tells whether a ref change is still on its way to the
// modules that listen to PushEvent.
type RefChanges interface {
	// RefChangePending says whether ref (a full name, refs/heads/...) of
	// project is moving to sha and the PushEvent of that change is not
	// published yet: the ref may already be at sha. With a transaction in
	// ctx it reads in it, so that a module that also asks the outbox
	// (events.Bus.Awaits) in that transaction learns, in one snapshot,
	// whether the push is still to reach its subscriber.
	RefChangePending(ctx context.Context, projectID int64, ref, sha string) (bool, error)
}

// Merges is what merge requests ask of repositories: heads, mergeability,
// the commits and diffs between two revisions, and the merge itself, made
// by the merge engine (package merge) and landed with the compare-and-set
// ref update every write uses (a push that lands meanwhile is kept: the
// merge is made again over it). Writes act as the user in ctx and publish
// PushEvents as any ref change does.
type Merges interface {
	// BranchHead is the commit a branch points at (ErrBranchNotFound).
	BranchHead(ctx context.Context, projectID int64, branch string) (string, error)
	// CanMerge says whether commit source merges cleanly into commit target.
	CanMerge(ctx context.Context, projectID int64, target, source string) (bool, error)
	// Merge merges spec.Source into spec.Branch with a merge commit and
	// returns its id; ErrMergeConflict when they do not merge cleanly.
	// spec.SourceProject names a fork to copy Source from first. target is
	// the project as the caller resolved it when it decided to merge: the
	// merge does not resolve it again.
	Merge(ctx context.Context, target projects.ProjectInfo, spec MergeSpec) (string, error)
	// DeleteBranch removes a branch still at sha (ErrRefMoved otherwise);
	// protection is the caller's to check.
	DeleteBranch(ctx context.Context, projectID int64, branch, sha string) error
	// MayMerge says whether the caller in ctx may merge into branch
	// (Developer; Master for a protected branch unless developers may
	// merge or push).
	MayMerge(ctx context.Context, projectID int64, branch string) (bool, error)
	// Commits are those of head not reachable from base, newest first, at
	// most limit.
	Commits(ctx context.Context, projectID int64, base, head string, limit int) ([]gitread.Commit, error)
	// Diffs are head's changes since its merge base with base.
	Diffs(ctx context.Context, projectID int64, base, head string) ([]DiffView, error)
	// Import copies commit sha of project from (a fork) with its history
	// into project to's repository where it is missing.
	Import(ctx context.Context, to, from int64, sha string) error
}

// CommitGraph answers questions about a project's history for the modules
// above (merge requests: which of them hold a commit).
type CommitGraph interface {
	// ResolveCommit is the commit id a sha, branch or tag names
	// (ErrCommitNotFound when none).
	ResolveCommit(ctx context.Context, projectID int64, rev string) (string, error)
	// InRange says whether commit sha is in head's history and not in
	// base's (git log base..head); an empty or unknown base leaves all of
	// head's history. ErrCommitNotFound when sha or head is not in the
	// repository.
	InRange(ctx context.Context, projectID int64, sha, base, head string) (bool, error)
}

// What Merges takes and returns, defined in the contract (package gitrepo,
// which new code imports): the merge and the diff entry as the repository
// endpoints render it. Commits are gitread.Commit.
type (
	MergeSpec = gitrepo.MergeSpec
	DiffView  = gitrepo.Diff
)

// ErrMergeConflict: Merges.Merge's revisions do not merge cleanly.
var ErrMergeConflict = gitrepo.ErrMergeConflict

// CommitStatus is one status CommitStatuses records.
type CommitStatus = commitstatus.Status

// The module's domain errors (package gitrepo's), for callers to test with
// errors.Is. The module maps the not-found ones to their GitLab answers at
// the API edge, so a handler of any module may return them as they come.
var (
	// ErrBranchNotFound: no such branch; answered 404 Branch Not Found.
	ErrBranchNotFound = gitrepo.ErrBranchNotFound
	// ErrTagNotFound: no such tag; answered 404 Tag Not Found.
	ErrTagNotFound = gitrepo.ErrTagNotFound
	// ErrCommitNotFound: no such commit; answered 404 Commit Not Found.
	ErrCommitNotFound = gitrepo.ErrCommitNotFound
	// ErrRefMoved: a ref was not where a compare-and-set expected it (a
	// push landed meanwhile); nothing was written. It has no answer of its
	// own: the operation that lost the race says what it means ("The
	// branch moved; try again").
	ErrRefMoved = gitrepo.ErrRefMoved
)

// The events the module publishes; their contract (and its documentation)
// is package event, public so that it is not defined inside internal/.
type (
	// PushEvent is published exactly once for every ref that moves (a git
	// push, or the API writing a commit or changing a branch or tag), with
	// GitLab's push payload fields.
	PushEvent  = event.PushEvent
	PushKind   = event.PushKind
	PushCommit = event.PushCommit
	PushRepo   = event.PushRepo
	// CommitCommented is published for every comment on a commit.
	CommitCommented = event.CommitCommented
)

// The kinds of PushEvent (its object_kind).
const (
	BranchPush = event.BranchPush
	TagPush    = event.TagPush
)

// SSHServer is the built-in SSH server for git (config ssh_listen).
type SSHServer interface {
	// Addr is the address it listens on, "" when it is off.
	Addr() string
	// HostKeys are its public host keys (ed25519, then RSA).
	HostKeys() []ssh.PublicKey
}

// Module is the repository module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("repository",
		fennec.ModuleConfig(SectionName, gitrepo.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Provide(internal.NewStorage, internal.NewReader, internal.NewStatuses, internal.NewWriter,
			internal.NewHousekeeper, internal.NewImporter, func(s *internal.Storage) Store { return s },
			func(s *internal.Statuses) CommitStatuses { return s },
			func(w *internal.Writer) BranchProtection { return w },
			func(w *internal.Writer) RefChanges { return w },
			internal.NewGit, internal.NewSSHServer, func(s *internal.SSHServer) SSHServer { return s }),
		fennec.Provide(internal.NewGitRead, func(g *internal.GitRead) gitread.Reader { return g }),
		fennec.Provide(func(w *internal.Writer) release.Service { return internal.NewReleaseService(w) }),
		fennec.Provide(internal.NewMerges, func(m *internal.Merges) Merges { return m },
			func(m *internal.Merges) CommitGraph { return m }),
		projects.ProvideBranchChecker(func(s *internal.Storage) projects.BranchChecker { return s }),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewGitRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideAdminCommands(internal.Commands, internal.CommandSpecs...),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec, internal.SSHBackupSpec),
		fennec.Provide(internal.NewMissingCheck),
		fennec.ProvideRoutes(internal.NewHousekeepingRoutes),
	)
}
