package internal

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The last commit of each entry of a tree page (issue 28: "computed
// without blocking the page").
//
// One walk back along first parents serves every entry of the page at
// once: per commit it reads the directory's tree id, and only when that
// changed, its entries. In a long history that walk can take seconds (a
// file unchanged since the first of 20,000 commits), so:
//   - the page walks for at most lastCommitsBudget, shows what it found,
//     and says the column is incomplete;
//   - the walk goes on in the background (one per page at a time, at most
//     lastCommitsWorkers at once, each for at most lastCommitsBackground),
//     from where the page stopped;
//   - what a walk found is kept, keyed by project, commit, directory and
//     page of the listing (a commit's tree never changes, so the answer
//     never goes stale), for the next visitors, and a walk that stopped
//     resumes where it was.
//
// The cache holds lastCommitsEntries pages, the ones used longest ago
// dropped first.
const (
	lastCommitsBudget     = 100 * time.Millisecond
	lastCommitsBackground = 30 * time.Second
	lastCommitsWorkers    = 4
	lastCommitsEntries    = 512
)

type lastCommitsKey struct {
	project int64
	commit  plumbing.Hash
	dir     string
	page    int
}

// lastCommitsWalk is the state of one page's walk: what it found, and
// where it stands (the commit it reached, with its directory's tree and
// entries), so that it can resume.
type lastCommitsWalk struct {
	key   lastCommitsKey
	names []string

	mu sync.Mutex
	// found are the commits found, kept whole: reading one again would
	// make a page open the repository's pack indexes (tens of
	// milliseconds on a large repository) for a few commits.
	found   map[string]*object.Commit
	cur     plumbing.Hash
	done    bool
	running bool // a background walk owns it
}

// lastCommits is the cache of walks, shared by the repository's pages.
type lastCommits struct {
	rd      *Reader
	workers chan struct{}

	mu    sync.Mutex
	order *list.List // front: used last
	walks map[lastCommitsKey]*list.Element
}

func newLastCommits(rd *Reader) *lastCommits {
	return &lastCommits{rd: rd, workers: make(chan struct{}, lastCommitsWorkers), order: list.New(),
		walks: map[lastCommitsKey]*list.Element{}}
}

func (lc *lastCommits) walk(k lastCommitsKey, names []string) *lastCommitsWalk {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if e, ok := lc.walks[k]; ok {
		lc.order.MoveToFront(e)
		return e.Value.(*lastCommitsWalk)
	}
	w := &lastCommitsWalk{key: k, names: names, found: map[string]*object.Commit{}, cur: k.commit}
	lc.walks[k] = lc.order.PushFront(w)
	for lc.order.Len() > lastCommitsEntries {
		last := lc.order.Back()
		lc.order.Remove(last)
		delete(lc.walks, last.Value.(*lastCommitsWalk).key)
	}
	return w
}

// of answers the page: the commits found for names (of directory dir of
// commit c, page page of the listing), and whether every one was.
func (lc *lastCommits) of(ctx context.Context, repo *git.Repository, projectID int64, c *object.Commit, dir string, page int, names []string) (map[string]*object.Commit, bool) {
	w := lc.walk(lastCommitsKey{project: projectID, commit: c.Hash, dir: dir, page: page}, names)
	w.mu.Lock()
	running, done := w.running, w.done
	w.mu.Unlock()
	if !running && !done {
		done = w.run(ctx, repo, time.Now().Add(lastCommitsBudget))
		if !done {
			lc.background(w, projectID)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]*object.Commit, len(w.found))
	for n, c := range w.found {
		out[n] = c
	}
	return out, w.done
}

// background goes on with w's walk, when a worker is free (else the next
// visitor's page walks on from where it stands).
func (lc *lastCommits) background(w *lastCommitsWalk, projectID int64) {
	w.mu.Lock()
	if w.running || w.done {
		w.mu.Unlock()
		return
	}
	select {
	case lc.workers <- struct{}{}:
	default:
		w.mu.Unlock()
		return
	}
	w.running = true
	w.mu.Unlock()
	go func() {
		defer func() { <-lc.workers }()
		defer func() {
			w.mu.Lock()
			w.running = false
			w.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), lastCommitsBackground)
		defer cancel()
		repo, err := lc.rd.store.Open(ctx, projectID)
		if err != nil {
			return // a project deleted meanwhile: nothing to finish
		}
		w.run(ctx, repo, time.Now().Add(lastCommitsBackground))
	}()
}

// run walks on from where w stands until every name is found, the root
// commit is reached, the deadline passes or ctx ends, publishing what it
// finds as it goes; it reports whether the walk is done.
func (w *lastCommitsWalk) run(ctx context.Context, repo *git.Repository, deadline time.Time) bool {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return true
	}
	found := make(map[string]*object.Commit, len(w.names))
	for n, c := range w.found {
		found[n] = c
	}
	curHash := w.cur
	w.mu.Unlock()

	var segs []string
	if w.key.dir != "" {
		segs = strings.Split(w.key.dir, "/")
	}
	publish := func(done bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		for n, c := range found {
			w.found[n] = c
		}
		w.cur, w.done = curHash, done
	}
	cur, err := repo.CommitObject(curHash)
	if err != nil {
		publish(true) // unreadable: nothing more to find
		return true
	}
	curDir := dirTree(repo, cur.TreeHash, segs)
	curEntries := treeEntries(repo, curDir)
	for step := 1; len(found) < len(w.names); step++ {
		if step%64 == 0 {
			if time.Now().After(deadline) || ctx.Err() != nil {
				publish(false)
				return false
			}
			publish(false)
		}
		var parent *object.Commit
		if cur.NumParents() > 0 {
			parent, _ = cur.Parent(0)
		}
		if parent == nil {
			// The root commit (or an unreadable parent) made whatever is
			// left.
			for _, n := range w.names {
				if _, ok := found[n]; !ok && curEntries[n] != plumbing.ZeroHash {
					found[n] = cur
				}
			}
			publish(true)
			return true
		}
		pDir := dirTree(repo, parent.TreeHash, segs)
		if pDir != curDir {
			pEntries := treeEntries(repo, pDir)
			for _, n := range w.names {
				if _, ok := found[n]; !ok && curEntries[n] != pEntries[n] {
					found[n] = cur
				}
			}
			curDir, curEntries = pDir, pEntries
		}
		cur, curHash = parent, parent.Hash
	}
	publish(true)
	return true
}
