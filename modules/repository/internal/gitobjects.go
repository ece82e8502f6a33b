package internal

// Small readers of raw git objects for receive-pack: commit headers, tree
// entries, a date-ordered walk (what `git rev-list new --not old` does) and
// a tree diff for the files of a push event. They read through a function,
// so the same code sees objects still in quarantine and stored ones.

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// readFunc reads a whole object.
type readFunc func(gitpack.Hash) (gitpack.Type, []byte, error)

// rawCommit is what receive-pack needs of a commit.
type rawCommit struct {
	tree      gitpack.Hash
	parents   []gitpack.Hash
	author    signature
	committer signature
	message   string
}

type signature struct {
	name, email string
	when        int64 // seconds since the epoch
	tz          string
}

var errNotCommit = errors.New("not a commit")

func readCommit(read readFunc, h gitpack.Hash) (*rawCommit, error) {
	t, data, err := read(h)
	if err != nil {
		return nil, err
	}
	if t != gitpack.Commit {
		return nil, fmt.Errorf("%s: %w", h, errNotCommit)
	}
	return parseCommit(data)
}

func parseCommit(data []byte) (*rawCommit, error) {
	c := &rawCommit{}
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, errors.New("commit: unterminated header")
		}
		line := data[:nl]
		data = data[nl+1:]
		if len(line) == 0 {
			c.message = string(data)
			break
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			h, ok := gitpack.ParseHex(val)
			if !ok {
				return nil, errors.New("commit: bad tree line")
			}
			c.tree = h
		case "parent":
			h, ok := gitpack.ParseHex(val)
			if !ok {
				return nil, errors.New("commit: bad parent line")
			}
			c.parents = append(c.parents, h)
		case "author":
			c.author = parseSignature(val)
		case "committer":
			c.committer = parseSignature(val)
		}
	}
	if c.tree.IsZero() {
		return nil, errors.New("commit: no tree")
	}
	return c, nil
}

// parseSignature reads "Name <email> 1234567890 +0100".
func parseSignature(b []byte) signature {
	var s signature
	lt := bytes.IndexByte(b, '<')
	gt := bytes.LastIndexByte(b, '>')
	if lt < 0 || gt < lt {
		s.name = string(bytes.TrimSpace(b))
		return s
	}
	s.name = string(bytes.TrimSpace(b[:lt]))
	s.email = string(b[lt+1 : gt])
	rest := bytes.Fields(b[gt+1:])
	if len(rest) > 0 {
		s.when, _ = strconv.ParseInt(string(rest[0]), 10, 64)
	}
	if len(rest) > 1 {
		s.tz = string(rest[1])
	}
	return s
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	name string
	mode uint32
	hash gitpack.Hash
}

func (e treeEntry) isTree() bool    { return e.mode == 0o40000 }
func (e treeEntry) isGitlink() bool { return e.mode == 0o160000 }

func parseTree(data []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, errors.New("tree: bad entry")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, errors.New("tree: bad mode")
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+21 {
			return nil, errors.New("tree: truncated entry")
		}
		e := treeEntry{name: string(data[:nul]), mode: uint32(mode)}
		copy(e.hash[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// walkEntry is a commit in the walk's queue.
type walkEntry struct {
	hash          gitpack.Hash
	commit        *rawCommit
	uninteresting bool
	queued        bool
}

type walkQueue []*walkEntry

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	return q[i].commit.committer.when > q[j].commit.committer.when
}
func (q walkQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *walkQueue) Push(x any)   { *q = append(*q, x.(*walkEntry)) }
func (q *walkQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// revWalk lists the commits reachable from include but not from exclude,
// newest first by committer date, as git's rev-list does: uninteresting
// marks travel down from exclude and the walk stops once only
// uninteresting commits are queued. keep bounds the commits returned (the
// count is always complete); limit bounds the commits visited at all, so
// a hostile history cannot make a push expensive (the count is then a
// lower bound).
func revWalk(read readFunc, include, exclude []gitpack.Hash, keep, limit int) (newest []*walkEntry, count int, err error) {
	seen := map[gitpack.Hash]*walkEntry{}
	q := &walkQueue{}
	interesting := 0 // queued commits not marked uninteresting
	add := func(h gitpack.Hash, unint bool) error {
		if e, ok := seen[h]; ok {
			if unint && !e.uninteresting {
				e.uninteresting = true
				if e.queued {
					interesting--
				}
			}
			return nil
		}
		c, err := readCommit(read, h)
		if err != nil {
			return err
		}
		e := &walkEntry{hash: h, commit: c, uninteresting: unint, queued: true}
		seen[h] = e
		heap.Push(q, e)
		if !unint {
			interesting++
		}
		return nil
	}
	for _, h := range exclude {
		if err := add(h, true); err != nil && !errors.Is(err, errNotCommit) {
			return nil, 0, err
		}
	}
	for _, h := range include {
		if err := add(h, false); err != nil {
			return nil, 0, err
		}
	}
	visited := 0
	for interesting > 0 && visited < limit {
		e := heap.Pop(q).(*walkEntry)
		e.queued = false
		visited++
		if !e.uninteresting {
			interesting--
			count++
			if len(newest) < keep {
				newest = append(newest, e)
			}
		}
		for _, p := range e.commit.parents {
			if err := add(p, e.uninteresting); err != nil {
				return nil, 0, err
			}
		}
	}
	return newest, count, nil
}

// isAncestor reports whether anc is reachable from desc (a fast-forward
// from anc to desc). Commits older than anc (with a day's slack for clock
// skew) are not followed.
func isAncestor(read readFunc, anc, desc gitpack.Hash) (bool, error) {
	if anc == desc {
		return true, nil
	}
	a, err := readCommit(read, anc)
	if err != nil {
		return false, err
	}
	cutoff := a.committer.when - 86400
	seen := map[gitpack.Hash]bool{desc: true}
	stack := []gitpack.Hash{desc}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c, err := readCommit(read, h)
		if err != nil {
			return false, err
		}
		for _, p := range c.parents {
			if p == anc {
				return true, nil
			}
			if !seen[p] {
				seen[p] = true
				pc, err := readCommit(read, p)
				if err != nil {
					return false, err
				}
				if pc.committer.when >= cutoff {
					stack = append(stack, p)
				}
			}
		}
	}
	return false, nil
}

// fileChanges lists the paths a commit added, modified and removed against
// its first parent (all added for a root commit).
func fileChanges(read readFunc, c *rawCommit) (added, modified, removed []string, err error) {
	var parentTree gitpack.Hash
	if len(c.parents) > 0 {
		p, err := readCommit(read, c.parents[0])
		if err != nil {
			return nil, nil, nil, err
		}
		parentTree = p.tree
	}
	added, modified, removed = []string{}, []string{}, []string{}
	var diff func(dir string, a, b gitpack.Hash) error
	entries := func(h gitpack.Hash) ([]treeEntry, error) {
		if h.IsZero() {
			return nil, nil
		}
		_, data, err := read(h)
		if err != nil {
			return nil, err
		}
		return parseTree(data)
	}
	var all func(dir string, h gitpack.Hash, into *[]string) error
	all = func(dir string, h gitpack.Hash, into *[]string) error {
		es, err := entries(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.isTree() {
				if err := all(path.Join(dir, e.name), e.hash, into); err != nil {
					return err
				}
				continue
			}
			*into = append(*into, path.Join(dir, e.name))
		}
		return nil
	}
	diff = func(dir string, a, b gitpack.Hash) error {
		if a == b {
			return nil
		}
		ea, err := entries(a)
		if err != nil {
			return err
		}
		eb, err := entries(b)
		if err != nil {
			return err
		}
		old := map[string]treeEntry{}
		for _, e := range ea {
			old[e.name] = e
		}
		for _, e := range eb {
			p := path.Join(dir, e.name)
			o, ok := old[e.name]
			delete(old, e.name)
			switch {
			case !ok && e.isTree():
				if err := all(p, e.hash, &added); err != nil {
					return err
				}
			case !ok:
				added = append(added, p)
			case o.isTree() && e.isTree():
				if err := diff(p, o.hash, e.hash); err != nil {
					return err
				}
			case o.isTree():
				if err := all(p, o.hash, &removed); err != nil {
					return err
				}
				added = append(added, p)
			case e.isTree():
				removed = append(removed, p)
				if err := all(p, e.hash, &added); err != nil {
					return err
				}
			case o.hash != e.hash || o.mode != e.mode:
				modified = append(modified, p)
			}
		}
		for _, o := range ea {
			if _, gone := old[o.name]; !gone {
				continue
			}
			p := path.Join(dir, o.name)
			if o.isTree() {
				if err := all(p, o.hash, &removed); err != nil {
					return err
				}
				continue
			}
			removed = append(removed, p)
		}
		return nil
	}
	return added, modified, removed, diff("", parentTree, c.tree)
}
