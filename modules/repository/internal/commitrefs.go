package internal

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"
)

// GET /projects/:id/repository/commits/:sha/refs: the branches and tags
// whose history holds a commit (`git branch --contains`, `git tag
// --contains`), branches first, each by name.

// CommitRef is one branch or tag that holds a commit.
type CommitRef struct {
	Type string `json:"type" enum:"branch,tag"`
	Name string `json:"name"`
}

// reachability answers "does this commit's history hold target?" for many
// tips, remembering what each walk learnt, so that refs sharing history
// are walked once. Like isAncestor it does not follow commits older than
// the target (with a day's slack for clock skew).
type reachability struct {
	ctx    context.Context
	read   readFunc
	target plumbing.Hash
	cutoff int64
	known  map[plumbing.Hash]bool // finished commits: do they reach target
}

func newReachability(ctx context.Context, read readFunc, target plumbing.Hash) (*reachability, error) {
	c, err := readCommit(read, target)
	if err != nil {
		return nil, err
	}
	return &reachability{ctx: ctx, read: read, target: target, cutoff: c.committer.when - 86400,
		known: map[plumbing.Hash]bool{target: true}}, nil
}

// from reports whether target is in the history of tip. The walk is a
// depth-first search kept on an explicit stack (histories are deeper than
// goroutine stacks like): a commit is known once all its parents are; on
// reaching target, every commit on the stack is known to reach it.
func (r *reachability) from(tip plumbing.Hash) (bool, error) {
	type frame struct {
		hash    plumbing.Hash
		parents []plumbing.Hash
		next    int
	}
	if ok, done := r.known[tip]; done {
		return ok, nil
	}
	var stack []*frame
	push := func(h plumbing.Hash) error {
		c, err := readCommit(r.read, h)
		if err != nil {
			return err
		}
		if c.committer.when < r.cutoff {
			r.known[h] = false
			return nil
		}
		stack = append(stack, &frame{hash: h, parents: c.parents})
		return nil
	}
	if err := push(tip); err != nil {
		return false, err
	}
	for steps := 0; len(stack) > 0; steps++ {
		if steps%1024 == 0 {
			if err := r.ctx.Err(); err != nil {
				return false, err
			}
		}
		f := stack[len(stack)-1]
		if f.next == len(f.parents) {
			r.known[f.hash] = false
			stack = stack[:len(stack)-1]
			continue
		}
		p := f.parents[f.next]
		f.next++
		ok, done := r.known[p]
		if !done {
			if err := push(p); err != nil {
				return false, err
			}
			continue
		}
		if ok {
			for _, g := range stack {
				r.known[g.hash] = true
			}
			return true, nil
		}
	}
	return r.known[tip], nil
}
