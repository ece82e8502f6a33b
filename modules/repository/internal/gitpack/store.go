package gitpack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Store is the object database of one bare repository: the packs under
// objects/pack (each with its .idx) and loose objects. Safe for
// concurrent use.
type Store struct {
	objDir  string
	packDir string
	cache   *lru
	loose   looseCache // see readLoose
	// memBytes bounds what a Stream resolves in memory; spills holds a
	// slot per large delta chain being resolved (see stream.go).
	memBytes int64
	spills   chan struct{}

	mu       sync.Mutex // serialises changes of the snapshot
	repackMu sync.Mutex // one Repack at a time
	snap     atomic.Pointer[snapshot]
	closed   atomic.Bool
}

// snapshot is an immutable set of open packs. Readers load the current
// one and use it throughout an operation.
type snapshot struct {
	packs   []*pack // largest first
	dirMod  time.Time
	scanned time.Time
}

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("gitpack: store closed")

// maxChain bounds a delta chain (C git's pack.depth cannot exceed 4095);
// a longer one is a loop of ref deltas.
const maxChain = 10000

const defaultCacheBytes = 64 << 20

// Open opens the objects of the bare repository at gitDir.
func Open(gitDir string, opt Options) (*Store, error) {
	objDir := filepath.Join(gitDir, "objects")
	st, err := os.Stat(objDir)
	if err != nil {
		return nil, fmt.Errorf("gitpack: open %s: %w", gitDir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("gitpack: %s is not a directory", objDir)
	}
	size := opt.CacheBytes
	if size <= 0 {
		size = defaultCacheBytes
	}
	s := &Store{
		objDir:  objDir,
		packDir: filepath.Join(objDir, "pack"),
		cache:   newLRU(size),

		memBytes: defaultMemBytes,
		spills:   make(chan struct{}, maxSpills),
	}
	s.cache.shared = objectCaches
	objectCaches.add(s.cache)
	s.snap.Store(&snapshot{})
	if _, err := s.reload(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases open pack files. Reads already under way finish; the
// mappings go once nothing uses them.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.Store(&snapshot{})
	objectCaches.remove(s.cache)
	return nil
}

// Retire lets go of the store for a holder of many (the repository
// module keeps a bounded set open): its cache leaves the process's budget,
// emptied, and caches nothing more. Unlike Close it fails nothing: a
// reader that still holds the store reads on, from the packs, which the
// runtime unmaps once the store is unreachable.
func (s *Store) Retire() {
	objectCaches.remove(s.cache)
}

// Reload picks up packs added (by a push or a repack) and forgets removed
// ones; readers of a removed pack keep working until they finish.
func (s *Store) Reload() error {
	if s.closed.Load() {
		return ErrClosed
	}
	_, err := s.reload()
	return err
}

// reload rescans objects/pack and reports whether the set of packs
// changed. Packs that cannot be opened are left out and reported, except
// ones that vanished meanwhile.
func (s *Store) reload() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reloadLocked("")
}

// reloadLocked rescans; the pack named reopen is opened afresh even if
// it was open (its files were replaced).
func (s *Store) reloadLocked(reopen string) (bool, error) {
	old := s.snap.Load()
	now := time.Now()
	var mod time.Time
	if st, err := os.Stat(s.packDir); err == nil {
		mod = st.ModTime()
	}
	ents, err := os.ReadDir(s.packDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("gitpack: %w", err)
	}
	have := make(map[string]*pack, len(old.packs))
	for _, p := range old.packs {
		if p.name != reopen {
			have[p.name] = p
		}
	}
	var packs []*pack
	var errs []error
	changed := false
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") {
			continue
		}
		if p := have[name]; p != nil {
			packs = append(packs, p)
			delete(have, name)
			continue
		}
		p, err := openPack(filepath.Join(s.packDir, name))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if p.name != name {
			// Named after another pack's checksum: still usable.
			p.name = name
		}
		packs = append(packs, p)
		changed = true
	}
	if len(have) > 0 {
		changed = true
	}
	slices.SortStableFunc(packs, func(a, b *pack) int { return b.idx.n - a.idx.n })
	s.snap.Store(&snapshot{packs: packs, dirMod: mod, scanned: now})
	return changed, errors.Join(errs...)
}

// refresh is called when an object is missing: if objects/pack may have
// changed since sn was taken, rescan it. It reports whether a retry may
// find more.
func (s *Store) refresh(sn *snapshot) bool {
	if s.closed.Load() {
		return false
	}
	var mod time.Time
	if st, err := os.Stat(s.packDir); err == nil {
		mod = st.ModTime()
	}
	// A directory changed within the clock's granularity of the scan keeps
	// its mtime: only an old, unchanged mtime proves nothing changed.
	if mod.Equal(sn.dirMod) && sn.scanned.Sub(mod) > 2*time.Second {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.Load() != sn {
		return true
	}
	changed, _ := s.reloadLocked("")
	return changed
}

// locateBase finds the base h of a ref delta stored in p: in p itself (where
// a pack usually keeps it), else in the other packs of sn. Not found means
// the base is a loose object, or missing.
func (sn *snapshot) locateBase(p *pack, h Hash) (*pack, int64, bool) {
	if i, ok := p.idx.find(h); ok {
		return p, p.idx.offset(i), true
	}
	if q, i, ok := sn.find(h); ok {
		return q, q.idx.offset(i), true
	}
	return nil, 0, false
}

// find locates h in the packs of sn.
func (sn *snapshot) find(h Hash) (*pack, int, bool) {
	for _, p := range sn.packs {
		if i, ok := p.idx.find(h); ok {
			return p, i, true
		}
	}
	return nil, 0, false
}

// Has reports whether the object exists (packed or loose).
func (s *Store) Has(h Hash) bool {
	sn := s.snap.Load()
	for {
		if _, _, ok := sn.find(h); ok {
			return true
		}
		if s.hasLoose(h) {
			return true
		}
		if !s.refresh(sn) {
			return false
		}
		sn = s.snap.Load()
	}
}

// Read returns an object's type and whole content, deltas resolved.
// The returned slice must not be modified (it may be cached).
func (s *Store) Read(h Hash) (Type, []byte, error) {
	if s.closed.Load() {
		return 0, nil, ErrClosed
	}
	sn := s.snap.Load()
	for {
		t, data, err := s.readIn(sn, h)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return t, data, err
		}
		if !s.refresh(sn) {
			return 0, nil, err
		}
		sn = s.snap.Load()
	}
}

// readIn reads h from the packs of sn or loose.
func (s *Store) readIn(sn *snapshot, h Hash) (Type, []byte, error) {
	if p, i, ok := sn.find(h); ok {
		return s.readEntry(sn, p, p.idx.offset(i))
	}
	t, data, err := s.readLoose(h)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil, fmt.Errorf("%w: %s", ErrNotFound, h)
		}
		return 0, nil, err
	}
	return t, data, nil
}

// deltaLink is one delta of a chain being resolved.
type deltaLink struct {
	key   cacheKey
	delta []byte
}

// readEntry reads the object stored at off in p, resolving its delta
// chain (ref delta bases are looked up in p, then in sn, then loose).
func (s *Store) readEntry(sn *snapshot, p *pack, off int64) (Type, []byte, error) {
	return resolveEntry(s.cache, p, off, 0, false, func(h Hash) (*pack, int64, Type, []byte, error) {
		if q, off, ok := sn.locateBase(p, h); ok {
			return q, off, 0, nil, nil
		}
		t, data, err := s.readLoose(h)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: delta base %s", ErrNotFound, h)
		}
		return nil, 0, t, data, err
	})
}

// baseFinder locates a ref delta's base: a pack entry, or (pack nil) the
// object itself.
type baseFinder func(Hash) (*pack, int64, Type, []byte, error)

// resolveEntry reads the entry at off in p with its delta chain, caching
// the bases (and the result, if keep or not a blob) in cache. limit (if
// > 0) bounds the size of every object and delta involved.
func resolveEntry(cache *lru, p *pack, off int64, limit int64, keep bool, findBase baseFinder) (Type, []byte, error) {
	var stack [16]deltaLink
	chain := stack[:0]
	var (
		t    Type
		data []byte
	)
	er := entryReaders.Get().(*entryReader)
	defer func() {
		if er != nil {
			er.release()
		}
	}()
	var seen map[cacheKey]bool
	for {
		key := cacheKey{p.id, off}
		if len(chain) >= 64 {
			// Deep: make sure ref deltas do not loop.
			if seen == nil {
				seen = make(map[cacheKey]bool)
				for _, l := range chain {
					seen[l.key] = true
				}
			}
			if seen[key] || len(chain) > maxChain {
				return 0, nil, errors.New("gitpack: delta chain loops or is too long")
			}
			seen[key] = true
		}
		if ct, cd, ok := cache.get(key); ok {
			t, data = ct, cd
			break
		}
		h, err := er.open(p, off)
		if err != nil {
			return 0, nil, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
		}
		if limit > 0 && h.size > limit {
			return 0, nil, fmt.Errorf("gitpack: %s at %d: object of %d bytes exceeds the limit", p.name, off, h.size)
		}
		d, err := er.inflate(h.size)
		runtime.KeepAlive(p)
		if err != nil {
			return 0, nil, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
		}
		if h.typ < OfsDelta {
			t, data = h.typ, d
			if len(chain) > 0 || keep || t != Blob {
				cache.put(key, t, d)
			}
			break
		}
		chain = append(chain, deltaLink{key, d})
		if h.typ == OfsDelta {
			off = h.baseOff
			continue
		}
		q, qoff, bt, bd, err := findBase(h.baseHash)
		if err != nil {
			return 0, nil, err
		}
		if q == nil {
			t, data = bt, bd
			break
		}
		p, off = q, qoff
	}
	er.release()
	er = nil
	for i := len(chain) - 1; i >= 0; i-- {
		if limit > 0 && int64(len(data)) > limit {
			return 0, nil, fmt.Errorf("gitpack: delta base of %d bytes exceeds the limit", len(data))
		}
		out, err := applyDelta(data, chain[i].delta, limit)
		if err != nil {
			return 0, nil, err
		}
		data = out
		if i > 0 || keep || t != Blob {
			cache.put(chain[i].key, t, out)
		}
	}
	return t, data, nil
}
