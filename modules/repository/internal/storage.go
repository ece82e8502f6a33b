package internal

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"go.uber.org/zap"

	fconfig "github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository/gitrepo"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// Storage keeps one bare repository per project under the data directory.
type Storage struct {
	root string
	log  *zap.Logger
	// db records which repositories have content (written.go); nil in
	// some unit tests.
	db *store.DB
	// mu serialises creation, forking and removal of one repository at a
	// time (the outbox may deliver an event again while a request is
	// creating the same repository lazily).
	mu sync.Mutex
	// locks hold one mutex per project for ref updates (UpdateRef).
	locksMu sync.Mutex
	locks   map[int64]*sync.Mutex
	maint   map[int64]*sync.RWMutex // see maintenanceLock
	// objects are the open object stores, by project, at most maxOpen of
	// them (maxOpenStores unless a test sets it); used orders them, the
	// most recently asked for first (Objects).
	objMu   sync.Mutex
	objects map[int64]*gitpack.Store
	used    list.List // of int64 project ids
	usedAt  map[int64]*list.Element
	maxOpen int
	// noSync skips fsync of ref files (benchmarks, as config.NoSync).
	noSync bool
	// crossProcess: other nodes share the store and this directory, and
	// write the same repositories (refStorage.lock).
	crossProcess bool
	// backup holds what a backup must see at one point or not at all
	// (backup.go): refWrites is taken shared by every change of refs and
	// of which repositories exist, and exclusively by a backup for the
	// instant of its capture; removals is taken shared by what deletes
	// files (a repack's old packs, a removed repository) and exclusively
	// for a whole backup.
	refWrites sync.RWMutex
	removals  sync.RWMutex
	// missing are the projects whose repository was found missing at
	// start (missing.go): Open refuses them rather than serve an empty
	// repository.
	missingMu sync.Mutex
	missing   map[int64]bool
	// checking, when set, is closed once the start's check for missing
	// repositories is done; create waits for it before making one.
	checking chan struct{}
}

// NewStorage builds the storage under <data>/repositories, recording in db
// which repositories have content (written.go).
func NewStorage(cfg fconfig.Config, db *store.DB, log *zap.Logger) *Storage {
	return &Storage{root: filepath.Join(cfg.Data, "repositories"), db: db, log: log, noSync: cfg.NoSync,
		crossProcess: db != nil && db.Shared()}
}

// Path is <root>/@hashed/ab/cd/<sha256 of the decimal id>.git: spread over
// directories, and stable whatever happens to the project's name.
func (s *Storage) Path(projectID int64) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(projectID, 10)))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(s.root, "@hashed", h[:2], h[2:4], h+".git")
}

// Open opens a project's repository, creating it empty when missing.
func (s *Storage) Open(ctx context.Context, projectID int64) (*git.Repository, error) {
	if err := s.create(projectID, "master"); err != nil {
		return nil, err
	}
	path, err := filepath.Abs(s.Path(projectID))
	if err != nil {
		return nil, err
	}
	// go-git's storage for objects and config, Fennec's for refs (see
	// refStorage: writes that readers never see half-done).
	fsys := filesystem.NewStorage(listingFS{osfs.New(path)}, cache.NewObjectLRUDefault())
	return git.Open(&refStorage{Storage: fsys, root: path, mu: s.refLock(projectID), barrier: &s.refWrites, noSync: s.noSync,
		crossProcess: s.crossProcess}, nil)
}

// create makes an empty bare repository whose HEAD points at branch; an
// existing repository is left as it is. The repository is built beside its
// final place and renamed there, so a crash never leaves a half-made
// repository where a real one is expected; only the rename holds the
// storage's lock, so that projects created together are made in parallel.
func (s *Storage) create(projectID int64, branch string) error {
	path := s.Path(projectID)
	if _, err := os.Stat(filepath.Join(path, "HEAD")); err == nil {
		return nil
	}
	// Not there: lost (the check marks it) or new (made below).
	s.waitChecked()
	if s.isMissing(projectID) {
		return fmt.Errorf("%w (project %d)", ErrRepositoryMissing, projectID)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("repository: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".init-*")
	if err != nil {
		return fmt.Errorf("repository: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := initBare(tmp, branch); err != nil {
		return fmt.Errorf("repository: init %d: %w", projectID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(filepath.Join(path, "HEAD")); err == nil {
		return nil // made meanwhile
	}
	if s.isMissing(projectID) {
		return fmt.Errorf("%w (project %d)", ErrRepositoryMissing, projectID)
	}
	s.refWrites.RLock()
	defer s.refWrites.RUnlock()
	if err := os.Rename(tmp, path); err != nil {
		// Another node sharing the data directory made it meanwhile:
		// a rename never replaces a directory that has files.
		if _, statErr := os.Stat(filepath.Join(path, "HEAD")); statErr == nil {
			return nil
		}
		return fmt.Errorf("repository: %w", err)
	}
	return nil
}

// initBare lays out an empty bare repository in dir, as git init --bare
// and go-git do, with only what Fennec keeps in a repository (layout.go):
// HEAD at branch, Fennec's config, objects/ and refs/. Written directly,
// it costs a few system calls.
func initBare(dir, branch string) error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o750); err != nil {
			return err
		}
	}
	head := "ref: " + plumbing.NewBranchReferenceName(branch).String() + "\n"
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(head), 0o640); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config"), []byte(repoConfig), 0o640)
}

// fork copies the source project's repository to the fork's place: pack
// files and loose objects are hard links where the file system allows
// (objects are immutable), everything else is copied.
func (s *Storage) fork(sourceID, forkID int64) error {
	s.removals.RLock() // it may replace an empty repository
	defer s.removals.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setMissing(forkID, false)
	s.refWrites.RLock()
	defer s.refWrites.RUnlock()
	src, dst := s.Path(sourceID), s.Path(forkID)
	if _, err := os.Stat(filepath.Join(dst, "HEAD")); err == nil {
		if !isEmpty(dst) {
			return nil // done already (a redelivered event)
		}
		// An empty repository made lazily before this event arrived: the
		// fork's copy replaces it.
		s.forgetObjects(forkID)
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(src, "HEAD")); err != nil {
		if errors.Is(err, os.ErrNotExist) && !s.isMissing(sourceID) {
			// A source nobody used has nothing to copy: the fork's
			// repository is made, empty, when it is first used.
			return nil
		}
		return fmt.Errorf("repository: fork of %d: source repository missing: %w", sourceID, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".fork-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o750)
		case d.Type()&fs.ModeSymlink != 0:
			return nil // repositories made here contain none; never follow one
		case strings.HasSuffix(p, ".lock"):
			return nil // a ref being written in the source; its old value is copied
		case filepath.Base(filepath.Dir(p)) == "pack" || isLooseObject(rel):
			if os.Link(p, target) == nil {
				return nil
			}
		}
		return copyFile(p, target)
	})
	if err != nil {
		return fmt.Errorf("repository: fork %d -> %d: %w", sourceID, forkID, err)
	}
	// A fork has no remotes of its own.
	if r, err := git.PlainOpen(tmp); err == nil {
		if cfg, err := r.Config(); err == nil {
			cfg.Remotes = map[string]*config.RemoteConfig{}
			_ = r.SetConfig(cfg)
		}
	}
	return os.Rename(tmp, dst)
}

// isEmpty reports whether a bare repository has no refs at all.
func isEmpty(path string) bool {
	if _, err := os.Stat(filepath.Join(path, "packed-refs")); err == nil {
		return false
	}
	empty := true
	_ = filepath.WalkDir(filepath.Join(path, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			empty = false
			return filepath.SkipAll
		}
		return nil
	})
	return empty
}

func isLooseObject(rel string) bool {
	dir := filepath.Base(filepath.Dir(rel))
	return filepath.Base(filepath.Dir(filepath.Dir(rel))) == "objects" && len(dir) == 2
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// remove deletes a project's repository; a missing one is fine.
func (s *Storage) remove(projectID int64) error {
	s.removals.RLock()
	defer s.removals.RUnlock()
	s.forgetObjects(projectID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setMissing(projectID, false)
	s.refWrites.RLock()
	defer s.refWrites.RUnlock()
	path := s.Path(projectID)
	// Move it out of the way first, so a half-deleted repository is never
	// seen at its place.
	trash := path + ".deleted"
	if err := os.Rename(path, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(trash)
}

// ErrRefMoved is returned by UpdateRef when the ref is not at the expected
// value any more (someone else moved it first).
var ErrRefMoved = gitrepo.ErrRefMoved

// refLock is the lock of one project's refs.
func (s *Storage) refLock(projectID int64) *sync.Mutex {
	s.locksMu.Lock()
	defer s.locksMu.Unlock()
	if s.locks == nil {
		s.locks = map[int64]*sync.Mutex{}
	}
	l := s.locks[projectID]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[projectID] = l
	}
	return l
}

// RefUpdate is one compare-and-set of a ref: from Old (zero: the ref must
// not exist) to New (zero: delete the ref).
type RefUpdate struct {
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
}

var (
	// errAtomicAborted: an update of an atomic batch that was not applied
	// because another one failed its check.
	errAtomicAborted = errors.New("repository: another ref of the atomic update moved")
	// errRefRead wraps a failure to read a ref's current value.
	errRefRead = errors.New("repository: read ref")
)

// UpdateRefs applies compare-and-set updates under the project's ref lock,
// atomically for this process (a check and its write never interleave with
// another update's), and each write atomically for readers (refStorage).
// Every ref change of Fennec's goes through here. errs[i] is nil when
// update i was applied, ErrRefMoved when its ref was not at Old, errRefRead
// or a write error otherwise. With atomic, every update is checked before
// any is applied, and none is applied unless all pass (the others get
// errAtomicAborted).
func (s *Storage) UpdateRefs(projectID int64, repo *git.Repository, ups []RefUpdate, atomic bool) []error {
	errs := make([]error, len(ups))
	rs, ok := repo.Storer.(*refStorage)
	if !ok {
		// Only repositories opened by Open may have their refs changed.
		for i := range errs {
			errs[i] = errors.New("repository: refs of a repository not opened by Storage.Open")
		}
		return errs
	}
	s.refWrites.RLock()
	defer s.refWrites.RUnlock()
	unlock, err := rs.lock()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	defer unlock()
	failed := false
	for i, u := range ups {
		var cur plumbing.Hash
		ref, err := rs.readRef(u.Name)
		switch {
		case err == nil:
			cur = ref.Hash()
		case !errors.Is(err, plumbing.ErrReferenceNotFound):
			errs[i] = fmt.Errorf("%w %s: %w", errRefRead, u.Name, err)
		}
		if errs[i] == nil && cur != u.Old {
			errs[i] = ErrRefMoved
		}
		failed = failed || errs[i] != nil
	}
	for i, u := range ups {
		switch {
		case errs[i] != nil:
			continue
		case atomic && failed:
			errs[i] = errAtomicAborted
		case u.New.IsZero():
			errs[i] = rs.deleteRef(u.Name)
		default:
			errs[i] = rs.writeRef(plumbing.NewHashReference(u.Name, u.New))
		}
	}
	return errs
}

// UpdateRef moves, creates (old nil) or deletes (to zero) one ref if it is
// still at old (ErrRefMoved otherwise).
func (s *Storage) UpdateRef(projectID int64, repo *git.Repository, name plumbing.ReferenceName, to plumbing.Hash, old *plumbing.Reference) error {
	var from plumbing.Hash
	if old != nil {
		from = old.Hash()
	}
	return s.UpdateRefs(projectID, repo, []RefUpdate{{Name: name, Old: from, New: to}}, false)[0]
}

// maxOpenStores bounds the object stores kept open. Each maps its packs
// and their indexes (two mappings a pack), and the kernel allows a process
// 65,530 mappings by default (vm.max_map_count): an instance whose every
// repository is read (a crawler, a mirror) must not keep them all. Past
// the bound the least recently used store is retired: reopening it costs
// reading its pack indexes' headers.
const maxOpenStores = 1024

// Objects is the pack-level object store of a project's repository, opened
// once and kept while it is among the maxOpenStores most recently used
// (its caches are what makes serving fast); pushes and repacks reload it.
func (s *Storage) Objects(projectID int64) (*gitpack.Store, error) {
	s.objMu.Lock()
	if o := s.objects[projectID]; o != nil {
		s.used.MoveToFront(s.usedAt[projectID])
		s.objMu.Unlock()
		return o, nil
	}
	defer s.objMu.Unlock()
	if err := s.create(projectID, "master"); err != nil {
		return nil, err
	}
	o, err := gitpack.Open(s.Path(projectID), gitpack.Options{})
	if err != nil {
		return nil, err
	}
	if s.objects == nil {
		s.objects, s.usedAt = map[int64]*gitpack.Store{}, map[int64]*list.Element{}
	}
	s.objects[projectID] = o
	s.usedAt[projectID] = s.used.PushFront(projectID)
	bound := s.maxOpen
	if bound <= 0 {
		bound = maxOpenStores
	}
	for len(s.objects) > bound {
		oldest := s.used.Remove(s.used.Back()).(int64)
		// Retired, not closed: whoever still reads through it goes on.
		s.objects[oldest].Retire()
		delete(s.objects, oldest)
		delete(s.usedAt, oldest)
	}
	return o, nil
}

// forgetObjects closes and drops a project's object store.
func (s *Storage) forgetObjects(projectID int64) {
	s.objMu.Lock()
	o := s.objects[projectID]
	if o != nil {
		s.used.Remove(s.usedAt[projectID])
		delete(s.objects, projectID)
		delete(s.usedAt, projectID)
	}
	s.objMu.Unlock()
	if o != nil {
		_ = o.Close()
	}
}

// BranchNames are the first limit of the project's branches, by name
// (projects.BranchLister, for the default branch's choices).
func (s *Storage) BranchNames(ctx context.Context, projectID int64, limit int) ([]string, error) {
	repo, err := s.Open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	refs, err := sortedBranches(repo)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, min(len(refs), limit))
	for _, r := range refs[:min(len(refs), limit)] {
		names = append(names, r.Name().Short())
	}
	return names, nil
}

// BranchExists tells whether the project's repository has the branch (for
// projects' check of an edited default_branch, projects.BranchChecker).
func (s *Storage) BranchExists(ctx context.Context, projectID int64, branch string) (bool, error) {
	repo, err := s.Open(ctx, projectID)
	if err != nil {
		return false, err
	}
	if _, err := branchRef(repo, branch); err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
