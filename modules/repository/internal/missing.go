package internal

// Repositories found missing at start: a store restored without its
// repositories, a disk that lost them. Such a project is reported (one
// warning listing them all), shown as a failed import with an error saying
// why, and its repository is not silently made anew and served empty: Open
// refuses it with ErrRepositoryMissing until the repository is put back
// (and the server restarted) or the project is removed.
//
// The check walks every project, so it does not hold up the start: it runs
// in the background once the server answers (Run). Until it is done, making
// a repository that is not on disk waits for it (Storage.create): a
// repository that was lost is never made anew in the meantime, and only the
// requests that would make one wait, not those reading repositories that
// are there.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitrepo"
)

// ErrRepositoryMissing: the project's repository directory is gone.
var ErrRepositoryMissing = gitrepo.ErrRepositoryMissing

// missingImportError is the import_error of a project whose repository is
// missing.
const missingImportError = "The repository is missing from the server's data directory (restored without it?); " +
	"put it back and restart, or remove the project."

// waitChecked waits until the start's check for missing repositories is
// done (at once when there is none).
func (s *Storage) waitChecked() {
	if s.checking != nil {
		<-s.checking
	}
}

func (s *Storage) isMissing(projectID int64) bool {
	s.missingMu.Lock()
	defer s.missingMu.Unlock()
	return s.missing[projectID]
}

// setMissing marks or clears a project; it reports whether it was marked.
func (s *Storage) setMissing(projectID int64, missing bool) bool {
	s.missingMu.Lock()
	defer s.missingMu.Unlock()
	was := s.missing[projectID]
	if missing {
		if s.missing == nil {
			s.missing = map[int64]bool{}
		}
		s.missing[projectID] = true
	} else {
		delete(s.missing, projectID)
	}
	return was
}

// MissingCheck looks for missing repositories when the app starts. It
// looks only at repositories that have had content (written.go), in the
// background once the server answers (Run). A store from before that
// record is looked at whole, once, before the server answers (Provision):
// every project then had its repository made with it.
type MissingCheck struct {
	st     *Storage
	state  projects.RepositoryState
	access projects.Access
	log    *zap.Logger
	// done is set by Provision when it did the whole check.
	done bool
}

// NewMissingCheck builds the check. From now until the check is done, the
// storage makes no repository without waiting for it.
func NewMissingCheck(st *Storage, state projects.RepositoryState, access projects.Access, log *zap.Logger) *MissingCheck {
	st.checking = make(chan struct{})
	return &MissingCheck{st: st, state: state, access: access, log: log}
}

var (
	_ fennec.Provisioner = (*MissingCheck)(nil)
	_ fennec.Runner      = (*MissingCheck)(nil)
	_ fennec.EveryNode   = (*MissingCheck)(nil)
)

// EveryNode: on nodes sharing a store and a data directory, each node
// keeps its own set of missing repositories and its storage waits for its
// own check before making one; run only on the leader, the others would
// wait forever. The marks the check writes are the same whichever node
// writes them.
func (m *MissingCheck) EveryNode() {}

// Provision fills the record of written repositories of a store from
// before it: every project's repository is looked for, those on disk are
// recorded, and those missing are marked. It runs once per store, before
// requests are served (a project created meanwhile would look missing).
func (m *MissingCheck) Provision(ctx context.Context) error {
	_, complete, err := m.st.writtenProjects(ctx)
	if err != nil || complete {
		return err
	}
	ids, err := m.state.ProjectIDs(ctx)
	if err != nil {
		return err
	}
	var present, missing []int64
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(m.st.Path(id), "HEAD")); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, id)
		} else {
			present = append(present, id)
		}
	}
	// In steps: one transaction need not hold every project of a large store.
	for len(present) > 0 {
		n := min(len(present), removeStep)
		step := present[:n]
		present = present[n:]
		if err := m.st.db.Update(ctx, func(tx *store.Tx) error {
			for _, id := range step {
				if err := markWritten(tx, id); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if err := m.report(ctx, missing); err != nil {
		return err
	}
	// Missing ones are recorded too: they stay missing at the next start.
	if err := m.st.db.Update(ctx, func(tx *store.Tx) error {
		for _, id := range append(missing, writtenComplete) {
			if err := markWritten(tx, id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	m.done = true
	close(m.st.checking)
	return nil
}

// Run marks the projects whose repository had content and is missing from
// the data directory as failed imports, then lets the storage make
// repositories. A check that fails is logged: the server then serves what
// it has, as it did before the check existed.
func (m *MissingCheck) Run(ctx context.Context) error {
	// On a cluster the leader's parts run again each time this node
	// leads anew (after a lost lease): the check is once per process,
	// and its channel may be closed only once.
	if m.done {
		return nil
	}
	m.done = true
	defer close(m.st.checking)
	if err := m.check(ctx); err != nil && ctx.Err() == nil {
		m.log.Error("repository: the check for missing repositories failed", zap.Error(err))
	}
	return nil
}

func (m *MissingCheck) check(ctx context.Context) error {
	ids, _, err := m.st.writtenProjects(ctx)
	if err != nil {
		return err
	}
	var missing []int64
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(m.st.Path(id), "HEAD")); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// A project removed meanwhile lost its record with its repository.
	err = m.st.db.View(ctx, func(tx *store.Tx) error {
		missing = slices.DeleteFunc(missing, func(id int64) bool {
			_, err := writtenRepos.GetBy(tx, "project", store.IDString(id))
			return err != nil
		})
		return nil
	})
	if err != nil {
		return err
	}
	return m.report(ctx, missing)
}

// report marks the missing repositories' projects as failed imports and
// logs them in one warning.
func (m *MissingCheck) report(ctx context.Context, missing []int64) error {
	if len(missing) == 0 {
		return nil
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	sys := auth.WithPrincipal(ctx, auth.System())
	var names []string
	for _, id := range missing {
		m.st.setMissing(id, true)
		if err := m.state.SetImportStatus(ctx, id, projects.ImportFailed, missingImportError); err != nil {
			return err
		}
		if info, err := m.access.ResolveID(sys, id); err == nil {
			names = append(names, info.PathWithNamespace)
		}
	}
	m.log.Warn("repository: projects whose repository is missing from the data directory; they are shown as failed imports and not served",
		zap.Int("count", len(missing)), zap.Int64s("project_ids", missing), zap.Strings("projects", names),
		zap.String("repositories", m.st.root))
	return nil
}

// created clears the mark of a project whose creation event comes now (a
// project created just before a crash, its event delivered after the
// start's check): its repository is made now, as for any new project.
func (st *Storage) created(ctx context.Context, state projects.RepositoryState, projectID int64) error {
	// After the check, which would otherwise mark it again.
	st.waitChecked()
	if st.setMissing(projectID, false) {
		return state.SetImportStatus(ctx, projectID, "none", "")
	}
	return nil
}
