package internal

// A merge request's Changes, as the API's GET .../changes and the
// Changes tab read them, are the diff between two commits: git work in
// proportion to the files changed (200 ms for 1,000 files), done again
// for every view, every switch and every file loaded on demand. The diff
// of two commits of a repository never changes, so the last diffs read
// are kept, keyed by the project and the two commits (whose ids name
// their content, so the key is exact). Changes reads the
// merge request, which checks the visitor may see it, before asking: a
// kept diff is only given to callers allowed to read it. Callers must
// not change the slice or its entries.

import (
	"container/list"
	"context"
	"sync"

	"github.com/fennec-forge/fennec/modules/repository"
)

// diffCacheBytes bounds the diffs kept (their text and paths).
const diffCacheBytes = 64 << 20

type diffKey struct {
	project  int64
	from, to string
}

type keptDiff struct {
	key   diffKey
	diffs []repository.DiffView
	size  int
}

type diffCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front: used last
	items map[diffKey]*list.Element
}

var keptDiffs = &diffCache{order: list.New(), items: map[diffKey]*list.Element{}}

func (c *diffCache) get(k diffKey) ([]repository.DiffView, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*keptDiff).diffs, true
}

func (c *diffCache) put(k diffKey, diffs []repository.DiffView) {
	size := 0
	for _, d := range diffs {
		size += len(d.Diff) + len(d.OldPath) + len(d.NewPath) + 128
	}
	if size > diffCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.order.PushFront(&keptDiff{key: k, diffs: diffs, size: size})
	c.size += size
	for c.size > diffCacheBytes {
		last := c.order.Back()
		v := last.Value.(*keptDiff)
		c.order.Remove(last)
		delete(c.items, v.key)
		c.size -= v.size
	}
}

// diffsKept is s.Merges.Diffs through the cache, when from and to are
// commit ids (a branch's diff changes with the branch; so does that of a
// name that is not there yet).
func (s *Service) diffsKept(ctx context.Context, project int64, from, to string) ([]repository.DiffView, error) {
	if !isCommitID(from) || !isCommitID(to) {
		return s.Merges.Diffs(ctx, project, from, to)
	}
	k := diffKey{project: project, from: from, to: to}
	if diffs, ok := keptDiffs.get(k); ok {
		return diffs, nil
	}
	diffs, err := s.Merges.Diffs(ctx, project, from, to)
	if err != nil {
		return nil, err
	}
	keptDiffs.put(k, diffs)
	return diffs, nil
}

// isCommitID: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
