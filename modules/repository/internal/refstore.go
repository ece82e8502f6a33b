package internal

// Refs on disk, read and written by Fennec rather than by go-git. go-git
// writes a loose ref in place (open, truncate, write), so a reader that
// comes in between finds an empty file: under concurrent commits, branch
// lists and info/refs failed with "ref file is empty" and ref lookups
// answered 404. Here, as git does, a ref is written whole to <ref>.lock
// and renamed over the ref (a rename replaces the name atomically), so a
// reader sees the old value or the new one, never a partial one. Readers
// skip *.lock files (no ref name may end in ".lock"), and packed-refs is
// rewritten the same way. The lock files also keep out a git command run
// by hand on the repository at the same moment.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// refStorage is go-git's filesystem storage (objects, config) with the
// refs handled here. Every repository the module opens uses it, so go-git's
// own code (Repository.Reference, Branches, Tags...) reads refs this way.
type refStorage struct {
	*filesystem.Storage
	root string      // the bare repository
	mu   *sync.Mutex // the project's ref lock (Storage.refLock)
	// barrier is Storage.refWrites, taken shared by every write (a
	// backup's capture takes it exclusively).
	barrier *sync.RWMutex
	noSync  bool // skip fsync (benchmarks)
	// crossProcess: other nodes write this repository's refs too (a
	// shared store and data directory), so mu alone does not make a
	// compare-and-set atomic; lock adds a lock on a file (lockRefs).
	crossProcess bool
}

var _ storer.ReferenceStorer = (*refStorage)(nil)

var (
	// errRefLocked: another process holds the ref's lock file.
	errRefLocked = errors.New("repository: the ref is locked")
	// errRefName: a name that is not a path under refs/ (or HEAD).
	errRefName = errors.New("repository: not a ref name")
)

// staleLockAge is how old a lock file must be before it is taken for the
// leftover of a crash. Fennec's own writers of a repository hold its ref
// lock (and one process serves a data directory), so a lock file found is
// either a crash's leftover or a git command run by hand, which holds it
// for milliseconds.
const staleLockAge = 10 * time.Second

// refPath maps a ref name to its file, refusing names that would leave
// refs/ (every name from a client is checked before, this is the last
// guard).
func (s *refStorage) refPath(name plumbing.ReferenceName) (string, error) {
	n := string(name)
	if n != "HEAD" && !strings.HasPrefix(n, "refs/") {
		return "", fmt.Errorf("%w: %q", errRefName, n)
	}
	for _, c := range strings.Split(n, "/") {
		if c == "" || c == "." || c == ".." || strings.ContainsRune(c, 0) || strings.ContainsRune(c, '\\') {
			return "", fmt.Errorf("%w: %q", errRefName, n)
		}
	}
	return filepath.Join(s.root, filepath.FromSlash(n)), nil
}

// parseRef reads a loose ref file's content; ok is false for an empty or
// malformed one.
func parseRef(name plumbing.ReferenceName, b []byte) (*plumbing.Reference, bool) {
	line := strings.TrimSpace(string(b))
	if target, sym := strings.CutPrefix(line, "ref: "); sym {
		target = strings.TrimSpace(target)
		if target == "" {
			return nil, false
		}
		return plumbing.NewSymbolicReference(name, plumbing.ReferenceName(target)), true
	}
	if len(line) != 40 || !isHex(line) {
		return nil, false
	}
	return plumbing.NewHashReference(name, plumbing.NewHash(line)), true
}

// loose reads a loose ref; found is false when there is none (or only a
// broken one, which git ignores too).
func (s *refStorage) loose(name plumbing.ReferenceName) (*plumbing.Reference, bool, error) {
	p, err := s.refPath(name)
	if err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR):
		// none, a directory of refs, or a ref where a directory is expected
		return nil, false, nil
	default:
		return nil, false, err
	}
	r, ok := parseRef(name, b)
	return r, ok, nil
}

// packed reads packed-refs (missing: none), in file order.
func (s *refStorage) packed() ([]*plumbing.Reference, error) {
	b, err := os.ReadFile(filepath.Join(s.root, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*plumbing.Reference
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue // the header, and peeled values of the tag above
		}
		hash, name, ok := strings.Cut(line, " ")
		if !ok || len(hash) != 40 || !isHex(hash) || name == "" {
			continue
		}
		out = append(out, plumbing.NewHashReference(plumbing.ReferenceName(name), plumbing.NewHash(hash)))
	}
	return out, sc.Err()
}

// readRef is the ref's current value: the loose file, else packed-refs.
func (s *refStorage) readRef(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	r, found, err := s.loose(name)
	if err != nil {
		return nil, err
	}
	if found {
		return r, nil
	}
	if name == plumbing.HEAD {
		return nil, plumbing.ErrReferenceNotFound
	}
	all, err := s.packed()
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if r.Name() == name {
			return r, nil
		}
	}
	return nil, plumbing.ErrReferenceNotFound
}

// Reference implements storer.ReferenceStorer.
func (s *refStorage) Reference(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	return s.readRef(name)
}

// IterReferences lists HEAD, the loose refs and the packed ones a loose
// one does not override, as go-git does.
func (s *refStorage) IterReferences() (storer.ReferenceIter, error) {
	var refs []*plumbing.Reference
	if head, found, err := s.loose(plumbing.HEAD); err != nil {
		return nil, err
	} else if found {
		refs = append(refs, head)
	}
	seen := map[plumbing.ReferenceName]bool{}
	var walk func(dir, prefix string) error
	walk = func(dir, prefix string) error {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while we walk: its refs were deleted
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := prefix + "/" + e.Name()
			switch {
			case e.IsDir():
				if err := walk(filepath.Join(dir, e.Name()), name); err != nil {
					return err
				}
			case strings.HasSuffix(name, ".lock") || !e.Type().IsRegular():
				// a ref being written, or not a ref
			default:
				r, found, err := s.loose(plumbing.ReferenceName(name))
				if err != nil {
					return err
				}
				if found {
					refs = append(refs, r)
					seen[r.Name()] = true
				}
			}
		}
		return nil
	}
	if err := walk(filepath.Join(s.root, "refs"), "refs"); err != nil {
		return nil, err
	}
	packed, err := s.packed()
	if err != nil {
		return nil, err
	}
	for _, r := range packed {
		if !seen[r.Name()] {
			refs = append(refs, r)
		}
	}
	return storer.NewReferenceSliceIter(refs), nil
}

// SetReference implements storer.ReferenceStorer: an unconditional write
// under the project's ref lock.
func (s *refStorage) SetReference(r *plumbing.Reference) error {
	s.barrier.RLock()
	defer s.barrier.RUnlock()
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return s.writeRef(r)
}

// CheckAndSetReference writes r if the ref is still at old (nil: any).
func (s *refStorage) CheckAndSetReference(r, old *plumbing.Reference) error {
	s.barrier.RLock()
	defer s.barrier.RUnlock()
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if old != nil {
		cur, err := s.readRef(old.Name())
		if err != nil {
			return err
		}
		if cur.Hash() != old.Hash() {
			return storage.ErrReferenceHasChanged
		}
	}
	return s.writeRef(r)
}

// RemoveReference implements storer.ReferenceStorer.
func (s *refStorage) RemoveReference(name plumbing.ReferenceName) error {
	s.barrier.RLock()
	defer s.barrier.RUnlock()
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return s.deleteRef(name)
}

// PackRefs is refused: go-git's version rewrites refs in place, and
// Fennec keeps loose refs.
func (s *refStorage) PackRefs() error {
	return errors.New("repository: packing refs is not supported")
}

// refsLockName is the file whose lock (flock) serialises the ref changes
// of nodes that share a data directory. Under refs/ so that a repository
// holds only what layout.go allows; git ignores names ending in ".lock".
const refsLockName = "fennec-refs.lock"

// lock takes the project's ref lock: the in-process mutex, and, when other
// nodes write the repository too, an exclusive flock of refsLockName. The
// kernel (or, on NFS, the server's lock lease) drops a flock with its
// process, so a node killed while holding it blocks no other node, where a
// lock file's existence would need a stale-lock guess.
func (s *refStorage) lock() (unlock func(), err error) {
	s.mu.Lock()
	if !s.crossProcess {
		return s.mu.Unlock, nil
	}
	f, err := os.OpenFile(filepath.Join(s.root, "refs", refsLockName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("repository: ref lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		s.mu.Unlock()
		return nil, fmt.Errorf("repository: ref lock: %w", err)
	}
	return func() {
		_ = f.Close() // closing the file drops its flock
		s.mu.Unlock()
	}, nil
}

// lockFile creates <path>.lock, exclusively. A lock older than
// staleLockAge is removed first (see there).
func lockFile(path string) (*os.File, error) {
	lock := path + ".lock"
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 0 {
			return nil, err
		}
		if st, err := os.Stat(lock); err == nil && time.Since(st.ModTime()) < staleLockAge {
			return nil, fmt.Errorf("%w: %s exists", errRefLocked, lock)
		}
		_ = os.Remove(lock)
	}
}

// replaceFile writes content to path through path.lock and a rename. The
// caller holds the project's ref lock.
func (s *refStorage) replaceFile(path string, content []byte) (err error) {
	f, err := lockFile(path)
	if err != nil {
		return err
	}
	lock := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(lock)
		}
	}()
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if !s.noSync {
		// A ref must not come back empty after a power loss when the
		// rename did reach the disk.
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	// An empty directory left where a nested ref was deleted (a/b gone,
	// now a) would block the rename; a non-empty one is a real conflict.
	if st, err := os.Lstat(path); err == nil && st.IsDir() {
		_ = os.Remove(path)
	}
	return os.Rename(lock, path)
}

// writeRef stores a ref atomically for readers. The caller holds the
// project's ref lock.
func (s *refStorage) writeRef(r *plumbing.Reference) error {
	p, err := s.refPath(r.Name())
	if err != nil {
		return err
	}
	var content string
	switch r.Type() {
	case plumbing.SymbolicReference:
		content = "ref: " + r.Target().String() + "\n"
	case plumbing.HashReference:
		content = r.Hash().String() + "\n"
	default:
		return fmt.Errorf("repository: cannot store ref %s of type %v", r.Name(), r.Type())
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("repository: ref %s: %w", r.Name(), err)
	}
	return s.replaceFile(p, []byte(content))
}

// deleteRef removes a ref, from packed-refs first and then its loose file
// (so that a reader meanwhile still sees the loose, current value rather
// than an older packed one). The caller holds the project's ref lock.
func (s *refStorage) deleteRef(name plumbing.ReferenceName) error {
	p, err := s.refPath(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("repository: ref %s: %w", name, err)
	}
	lock, err := lockFile(p)
	if err != nil {
		return err
	}
	lock.Close()
	defer os.Remove(lock.Name())
	if err := s.removePacked(name); err != nil {
		return err
	}
	if st, err := os.Lstat(p); err == nil && !st.IsDir() {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	os.Remove(lock.Name())
	s.pruneDirs(filepath.Dir(p))
	return nil
}

// removePacked rewrites packed-refs without name (and its peeled line).
func (s *refStorage) removePacked(name plumbing.ReferenceName) error {
	path := filepath.Join(s.root, "packed-refs")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	found, skipPeeled := false, false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "^") && skipPeeled {
			continue
		}
		skipPeeled = false
		if _, n, ok := strings.Cut(strings.TrimRight(line, "\n"), " "); ok && line[0] != '#' && plumbing.ReferenceName(n) == name {
			found, skipPeeled = true, true
			continue
		}
		out.WriteString(line)
	}
	if !found {
		return nil
	}
	return s.replaceFile(path, out.Bytes())
}

// pruneDirs removes the empty directories a deleted ref leaves, up to
// refs/heads, refs/tags and the like (kept, as git keeps them).
func (s *refStorage) pruneDirs(dir string) {
	refs := filepath.Join(s.root, "refs")
	for {
		rel, err := filepath.Rel(refs, dir)
		if err != nil || rel == "." || !strings.Contains(rel, string(filepath.Separator)) || strings.HasPrefix(rel, "..") {
			return
		}
		if os.Remove(dir) != nil {
			return // not empty
		}
		dir = filepath.Dir(dir)
	}
}
