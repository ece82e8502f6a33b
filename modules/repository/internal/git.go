package internal

import (
	"context"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

// Git is the git service that smart HTTP (httpgit.go) and SSH
// (sshserver.go) serve alike: who may read or push is projects.Access's
// answer, and a push (push, checkCommands: protection, reserved refs,
// quarantine, atomic ref moves) is the same whichever transport brought it.
type Git struct {
	st       *Storage
	access   projects.Access
	state    projects.RepositoryState
	w        *Writer
	activity identity.Activity
	hk       *Housekeeper
	log      *zap.Logger
	maxPush  int64
	fsck     bool // check pushed trees (config receive_fsck_objects)
}

// NewGit builds the git service, which smart HTTP (NewGitRoutes) and SSH
// (NewSSHServer) serve alike.
func NewGit(st *Storage, access projects.Access, state projects.RepositoryState, w *Writer,
	activity identity.Activity, hk *Housekeeper, cfg Config, log *zap.Logger) *Git {
	return &Git{st: st, access: access, state: state, w: w, activity: activity, hk: hk,
		log: log.Named("git"), maxPush: cfg.MaxPushBytes, fsck: cfg.ReceiveFsckObjects}
}

// repoFor gathers what the protocol code needs: the object store, the refs
// and HEAD's branch.
func (g *Git) repoFor(ctx context.Context, projectID int64) (gitserve.Repo, *git.Repository, error) {
	repo, err := g.st.Open(ctx, projectID)
	if err != nil {
		return gitserve.Repo{}, nil, err
	}
	objs, err := g.st.Objects(projectID)
	if err != nil {
		return gitserve.Repo{}, nil, err
	}
	refs, err := listRefs(repo)
	if err != nil {
		return gitserve.Repo{}, nil, err
	}
	out := gitserve.Repo{Objects: objs, Refs: refs}
	if head, err := repo.Storer.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference {
		for _, ref := range out.Refs {
			if ref.Name == head.Target() {
				out.Head = head.Target()
				break
			}
		}
	}
	return out, repo, nil
}

// receivePackCaps are what Fennec's receive-pack does.
var receivePackCaps = []string{"report-status", "delete-refs", "side-band-64k", "quiet", "atomic", "ofs-delta", "agent=fennec"}
