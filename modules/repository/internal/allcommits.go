package internal

import (
	"container/heap"
	"io"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// GET /projects/:id/repository/commits?all=true lists the history of every
// branch and tag at once, newest first by committer date, each commit
// once (`git log --all`, without Fennec's own refs: the tips are the
// branches and tags a client can see). go-git's own "all" log runs one
// walk per ref and concatenates them, so its order is not newest first.

// allRefsLog walks the commits of every branch and tag of repo.
func allRefsLog(repo *git.Repository) (object.CommitIter, error) {
	w := &multiTipIter{seen: map[plumbing.Hash]bool{}}
	add := func(iter storer.ReferenceIter, err error) error {
		if err != nil {
			return err
		}
		return iter.ForEach(func(r *plumbing.Reference) error {
			c, err := peel(repo, r.Hash())
			if err != nil {
				return nil // a tag of a tree or blob has no history
			}
			w.push(c)
			return nil
		})
	}
	if err := add(repo.Branches()); err != nil {
		return nil, err
	}
	if err := add(repo.Tags()); err != nil {
		return nil, err
	}
	return w, nil
}

// multiTipIter is a committer-date ordered walk from several commits.
type multiTipIter struct {
	queue commitQueue
	seen  map[plumbing.Hash]bool // queued or returned
}

func (w *multiTipIter) push(c *object.Commit) {
	if w.seen[c.Hash] {
		return
	}
	w.seen[c.Hash] = true
	heap.Push(&w.queue, c)
}

// Next returns the newest commit not returned yet.
func (w *multiTipIter) Next() (*object.Commit, error) {
	if w.queue.Len() == 0 {
		return nil, io.EOF
	}
	c := heap.Pop(&w.queue).(*object.Commit)
	for i, h := range c.ParentHashes {
		if w.seen[h] {
			continue
		}
		p, err := c.Parent(i)
		if err != nil {
			return nil, err
		}
		w.push(p)
	}
	return c, nil
}

func (w *multiTipIter) ForEach(cb func(*object.Commit) error) error {
	for {
		c, err := w.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := cb(c); err == storer.ErrStop {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func (w *multiTipIter) Close() {}

// commitQueue orders commits newest first by committer date, ties by id
// so that the order does not depend on the refs' order.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	a, b := q[i].Committer.When, q[j].Committer.When
	if !a.Equal(b) {
		return a.After(b)
	}
	return q[i].Hash.String() < q[j].Hash.String()
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// pathCommitIter keeps the commits of src that change path (a file or a
// directory): a root commit that has it, a commit whose entry there
// differs from its parent's, a merge whose entry differs from every
// parent's (git log's rule: a merge that takes one side's version as it
// is changed nothing). It judges each commit against its own parents, not
// against the commit before it in the walk, so it holds on a walk that
// interleaves branches. Unlike git it does not prune the side of a merge
// that kept the other side's version.
type pathCommitIter struct {
	src  object.CommitIter
	repo *git.Repository
	segs []string
}

func newPathCommitIter(repo *git.Repository, src object.CommitIter, path string) *pathCommitIter {
	return &pathCommitIter{src: src, repo: repo, segs: strings.Split(path, "/")}
}

func (p *pathCommitIter) Next() (*object.Commit, error) {
	for {
		c, err := p.src.Next()
		if err != nil {
			return nil, err
		}
		if p.changes(c) {
			return c, nil
		}
	}
}

func (p *pathCommitIter) changes(c *object.Commit) bool {
	mine, has := entryAt(p.repo, c.TreeHash, p.segs)
	if len(c.ParentHashes) == 0 {
		return has
	}
	for _, ph := range c.ParentHashes {
		pc, err := p.repo.CommitObject(ph)
		if err != nil {
			return true // an unreadable parent: show the commit rather than hide it
		}
		theirs, had := entryAt(p.repo, pc.TreeHash, p.segs)
		if had == has && theirs == mine {
			return false // the same as this parent
		}
	}
	return true
}

// entryAt is the object at path segs in tree root (a blob or a tree).
func entryAt(repo *git.Repository, root plumbing.Hash, segs []string) (plumbing.Hash, bool) {
	h := root
	for _, seg := range segs {
		t, err := repo.TreeObject(h)
		if err != nil {
			return plumbing.ZeroHash, false
		}
		e, err := t.FindEntry(seg)
		if err != nil {
			return plumbing.ZeroHash, false
		}
		h = e.Hash
	}
	return h, true
}

func (p *pathCommitIter) ForEach(cb func(*object.Commit) error) error {
	for {
		c, err := p.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := cb(c); err == storer.ErrStop {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func (p *pathCommitIter) Close() { p.src.Close() }
