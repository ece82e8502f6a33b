package repository

import (
	"context"

	"github.com/go-git/go-git/v5"
	"go.uber.org/fx"
	"golang.org/x/crypto/ssh"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/repository/commitstatus"
	"github.com/fennec-forge/fennec/modules/repository/event"
	"github.com/fennec-forge/fennec/modules/repository/internal"
)

// Store gives access to projects' bare repositories.
type Store interface {
	// Path is where a project's repository lives (it may not exist yet).
	Path(projectID int64) string
	// Open opens a project's repository, creating an empty one if the
	// project's creation event has not been handled yet.
	Open(ctx context.Context, projectID int64) (*git.Repository, error)
}

// CommitStatuses records statuses of commits for other modules (CI's jobs).
type CommitStatuses = commitstatus.Recorder

// BranchProtection says whether a branch is protected.
type BranchProtection interface {
	IsProtected(ctx context.Context, projectID int64, branch string) (bool, error)
}

// CommitStatus is one status CommitStatuses records.
type CommitStatus = commitstatus.Status

// The module's domain errors, for callers to test with errors.Is. The
// module maps the not-found ones to their GitLab answers at the API edge,
// so a handler of any module may return them as they come.
var (
	// ErrBranchNotFound: no such branch; answered 404 Branch Not Found.
	ErrBranchNotFound = internal.ErrBranchNotFound
	// ErrTagNotFound: no such tag; answered 404 Tag Not Found.
	ErrTagNotFound = internal.ErrTagNotFound
	// ErrCommitNotFound: no such commit; answered 404 Commit Not Found.
	ErrCommitNotFound = internal.ErrCommitNotFound
	// ErrRefMoved: a ref was not where a compare-and-set expected it (a
	// push landed meanwhile); nothing was written. It has no answer of its
	// own: the operation that lost the race says what it means ("The
	// branch moved; try again").
	ErrRefMoved = internal.ErrRefMoved
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
		fennec.ModuleConfig(SectionName, internal.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fx.Provide(internal.NewStorage, internal.NewReader, internal.NewStatuses, internal.NewWriter,
			internal.NewHousekeeper, internal.NewImporter, func(s *internal.Storage) Store { return s },
			func(s *internal.Statuses) CommitStatuses { return s },
			func(w *internal.Writer) BranchProtection { return w },
			internal.NewGit, internal.NewSSHServer, func(s *internal.SSHServer) SSHServer { return s }),
		fx.Invoke(func(*internal.SSHServer) {}), // started with the app when ssh_listen is set
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewGitRoutes),
		fennec.ProvideAdminCommands(internal.Commands, internal.CommandSpecs...),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec, internal.SSHBackupSpec),
		fx.Invoke(internal.CheckMissing),
	)
}
