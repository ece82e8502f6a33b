package gitserve

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// shallowPlan is the outcome of a deepen request.
type shallowPlan struct {
	shallow   []plumbing.Hash // new boundary commits the client did not have as shallow
	unshallow []plumbing.Hash // the client's shallow commits now inside the boundary
	// grafts are walked as parentless: the whole new boundary and the
	// client's shallow commits.
	grafts []plumbing.Hash
	// extraWants are the parents of unshallowed commits.
	extraWants []plumbing.Hash
}

// peelCommits resolves hashes to commit indexes, skipping what does not
// peel to a commit.
func (w *walker) peelCommits(hs []plumbing.Hash) ([]int32, error) {
	var out []int32
	for _, h := range hs {
		idx, _ := w.t.add(h)
		target, t, err := w.peel(idx, nil)
		if err != nil {
			if errors.Is(err, errMissing) {
				continue
			}
			return nil, err
		}
		if t == gitpack.Commit {
			out = append(out, target)
		}
	}
	return out, nil
}

// depthFrom computes, breadth first, the distance of every commit within
// depth of the roots (roots at 0). It returns the commits with their
// distances, in visiting order.
func (w *walker) depthFrom(roots []int32, depth int) (map[int32]int, []int32, error) {
	dist := make(map[int32]int)
	var order []int32
	queue := make([]int32, 0, len(roots))
	for _, r := range roots {
		if _, ok := dist[r]; !ok {
			dist[r] = 0
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		idx := queue[0]
		queue = queue[1:]
		order = append(order, idx)
		d := dist[idx]
		if d+1 >= depth {
			continue
		}
		ci, err := w.loadCommit(idx)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			if _, ok := dist[p]; !ok {
				dist[p] = d + 1
				queue = append(queue, p)
			}
		}
	}
	return dist, order, nil
}

// planByDepth: the commits within depth of roots are included; those at
// the last level that have parents form the boundary.
func (w *walker) planByDepth(roots []int32, depth int) (included map[int32]bool, boundary []int32, err error) {
	dist, order, err := w.depthFrom(roots, depth)
	if err != nil {
		return nil, nil, err
	}
	included = make(map[int32]bool, len(order))
	for _, idx := range order {
		included[idx] = true
		if dist[idx] == depth-1 {
			ci, err := w.loadCommit(idx)
			if err != nil {
				return nil, nil, err
			}
			if w.commits[ci].nparents > 0 {
				boundary = append(boundary, idx)
			}
		}
	}
	return included, boundary, nil
}

// planByRevList: the commits reachable from roots through commits not
// older than since (when set) and not reachable from exclude.
func (w *walker) planByRevList(roots []int32, since int64, hasSince bool, exclude []int32) (included map[int32]bool, boundary []int32, err error) {
	excluded := make(map[int32]bool)
	stack := append([]int32(nil), exclude...)
	for len(stack) > 0 {
		idx := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if excluded[idx] {
			continue
		}
		excluded[idx] = true
		ci, err := w.loadCommit(idx)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			if !excluded[p] {
				stack = append(stack, p)
			}
		}
	}
	keep := func(idx int32) (bool, error) {
		if excluded[idx] {
			return false, nil
		}
		ci, err := w.loadCommit(idx)
		if err != nil {
			return false, err
		}
		return !hasSince || w.commits[ci].when >= since, nil
	}
	included = make(map[int32]bool)
	var order []int32
	stack = stack[:0]
	for _, r := range roots {
		ok, err := keep(r)
		if err != nil {
			return nil, nil, err
		}
		if ok && !included[r] {
			included[r] = true
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		idx := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, idx)
		ci := w.t.ents[idx].commit
		for _, p := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			if included[p] {
				continue
			}
			ok, err := keep(p)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				included[p] = true
				stack = append(stack, p)
			}
		}
	}
	for _, idx := range order {
		ci := w.t.ents[idx].commit
		for _, p := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			if !included[p] {
				boundary = append(boundary, idx)
				break
			}
		}
	}
	return included, boundary, nil
}

// reachableCommits returns the commits reachable from roots.
func (w *walker) reachableCommits(roots []int32) (map[int32]bool, error) {
	seen := make(map[int32]bool)
	stack := append([]int32(nil), roots...)
	for len(stack) > 0 {
		idx := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[idx] {
			continue
		}
		seen[idx] = true
		ci, err := w.loadCommit(idx)
		if err != nil {
			return nil, err
		}
		for _, p := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			if !seen[p] {
				stack = append(stack, p)
			}
		}
	}
	return seen, nil
}

// resolveRefName finds a ref the way git's rev-parse would for a short
// name ("v1" finds refs/tags/v1).
func resolveRefName(refs []advRef, name string) (plumbing.Hash, bool) {
	candidates := []string{name, "refs/" + name, "refs/tags/" + name, "refs/heads/" + name, "refs/remotes/" + name, "refs/remotes/" + name + "/HEAD"}
	for _, c := range candidates {
		for _, r := range refs {
			if r.name == c {
				return r.hash, true
			}
		}
	}
	return plumbing.ZeroHash, false
}

// planShallow computes the shallow/unshallow lines and the walk's grafts
// for a request. refs are the advertised refs.
func (w *walker) planShallow(req *wantRequest, refs []advRef) (*shallowPlan, error) {
	plan := &shallowPlan{}
	clientShallow := make(map[int32]bool)
	for _, h := range req.shallows {
		// Unknown shallow commits are ignored, as git does.
		if !w.src.Has(h) {
			continue
		}
		idx, _ := w.t.add(h)
		if _, err := w.loadCommit(idx); err != nil {
			return nil, badRequest("upload-pack: invalid shallow object %s", h)
		}
		clientShallow[idx] = true
		plan.grafts = append(plan.grafts, h)
	}
	if !req.deepening() {
		return plan, nil
	}
	if req.depth > 0 && (req.hasSince || len(req.deepenNot) > 0) {
		return nil, badRequest("upload-pack: deepen and deepen-since (or deepen-not) cannot be used together")
	}
	wants, err := w.peelCommits(req.wants)
	if err != nil {
		return nil, err
	}
	var included map[int32]bool
	var boundary []int32
	// The client's shallow commits that our refs reach (the others are
	// left alone: their parents are not ours to give).
	reachableShallows := func() ([]int32, error) {
		if len(clientShallow) == 0 {
			return nil, nil
		}
		var tips []plumbing.Hash
		for _, r := range refs {
			tips = append(tips, r.hash)
		}
		tipCommits, err := w.peelCommits(tips)
		if err != nil {
			return nil, err
		}
		reach, err := w.reachableCommits(tipCommits)
		if err != nil {
			return nil, err
		}
		var roots []int32
		for _, h := range req.shallows {
			if idx := w.t.find(h); idx >= 0 && clientShallow[idx] && reach[idx] {
				roots = append(roots, idx)
			}
		}
		return roots, nil
	}
	switch {
	case req.depth == infiniteDepth:
		// --unshallow: every shallow commit of the client goes.
		roots, err := reachableShallows()
		if err != nil {
			return nil, err
		}
		included = make(map[int32]bool, len(roots))
		for _, idx := range roots {
			included[idx] = true
		}
	case req.depth > 0 && req.deepenRelative:
		// Deepen from the client's boundary.
		roots, err := reachableShallows()
		if err != nil {
			return nil, err
		}
		included, boundary, err = w.planByDepth(roots, req.depth+1)
		if err != nil {
			return nil, err
		}
	case req.depth > 0:
		included, boundary, err = w.planByDepth(wants, req.depth)
		if err != nil {
			return nil, err
		}
	default:
		var exclude []plumbing.Hash
		for _, name := range req.deepenNot {
			h, ok := resolveRefName(refs, name)
			if !ok {
				return nil, badRequest("upload-pack: deepen-not is not a ref: %s", name)
			}
			exclude = append(exclude, h)
		}
		excl, err := w.peelCommits(exclude)
		if err != nil {
			return nil, err
		}
		included, boundary, err = w.planByRevList(wants, req.deepenSince, req.hasSince, excl)
		if err != nil {
			return nil, err
		}
		if len(included) == 0 {
			return nil, badRequest("upload-pack: no commits selected for shallow requests")
		}
	}
	isBoundary := make(map[int32]bool, len(boundary))
	for _, idx := range boundary {
		isBoundary[idx] = true
		if !clientShallow[idx] {
			plan.shallow = append(plan.shallow, w.t.ents[idx].id)
			plan.grafts = append(plan.grafts, w.t.ents[idx].id)
		}
	}
	for _, h := range req.shallows {
		idx := w.t.find(h)
		if idx < 0 || !clientShallow[idx] || !included[idx] || isBoundary[idx] {
			continue
		}
		clientShallow[idx] = false // report once
		plan.unshallow = append(plan.unshallow, h)
		ci := w.t.ents[idx].commit
		for _, p := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			plan.extraWants = append(plan.extraWants, w.t.ents[p].id)
		}
	}
	return plan, nil
}
