package gitserve

import (
	"container/heap"
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// Object flags in objEntry.flags.
const (
	fWanted        uint16 = 1 << iota // in the answer (reached from a want)
	fUninteresting                    // the client has it
	fShallow                          // a shallow graft: walked as if parentless
	fQueued                           // in the commit queue
	fDone                             // commit popped from the queue
	fTheyHave                         // negotiation: a common have
	fClosed                           // in a closed pack taken whole
	fTag                              // an annotated tag object
)

// commitNode is a parsed commit.
type commitNode struct {
	obj      int32 // index in the table
	tree     int32
	parents  int32 // start in walker.parents
	nparents int32
	when     int64
}

// walker walks the object graph of one request.
type walker struct {
	ctx     context.Context // may be nil
	err     error           // set when ctx ends
	src     objectSource
	t       *objTable
	commits []commitNode
	parents []int32
	pbuf    []plumbing.Hash
	stack   []int32

	jobs  []treeJob
	paths *pathTable

	// progress, when set, is called now and then with the number of
	// objects enumerated so far.
	progress func(n int)
	counted  int

	// closed lists the closed packs the walk may take whole; taken those
	// it took (their objects are left out of its answer).
	closed     []gitpack.ClosedPack
	taken      []gitpack.ClosedPack
	tookClosed int // len(taken), for tests
}

func newWalker(src objectSource, hint int) *walker {
	return &walker{src: src, t: newObjTable(hint)}
}

// errMissing is wrapped when an object the walk needs is absent.
var errMissing = errors.New("gitserve: missing object")

func (w *walker) read(idx int32) (gitpack.Type, []byte, error) {
	t, data, err := w.src.Read(w.t.ents[idx].id)
	if err != nil {
		return 0, nil, w.readErr(idx, err)
	}
	return t, data, nil
}

func (w *walker) readErr(idx int32, err error) error {
	if errors.Is(err, gitpack.ErrNotFound) {
		return fmt.Errorf("%w %s", errMissing, w.t.ents[idx].id)
	}
	return err
}

// loadCommit parses the commit at idx once; it returns its node index.
func (w *walker) loadCommit(idx int32) (int32, error) {
	if c := w.t.ents[idx].commit; c >= 0 {
		return c, nil
	}
	t, data, err := w.read(idx)
	if err != nil {
		return -1, err
	}
	if t != gitpack.Commit {
		return -1, fmt.Errorf("gitserve: %s is a %s, not a commit", w.t.ents[idx].id, t)
	}
	return w.parseCommitData(idx, data)
}

func (w *walker) parseCommitData(idx int32, data []byte) (int32, error) {
	tree, parents, when, ok := parseCommit(data, w.pbuf)
	w.pbuf = parents[:0]
	if !ok {
		return -1, fmt.Errorf("gitserve: malformed commit %s", w.t.ents[idx].id)
	}
	node := commitNode{obj: idx, parents: int32(len(w.parents)), nparents: int32(len(parents)), when: when}
	node.tree, _ = w.t.add(tree)
	for _, p := range parents {
		pi, _ := w.t.add(p)
		w.parents = append(w.parents, pi)
	}
	// add may have grown the table's slices but never moves indexes.
	ci := int32(len(w.commits))
	w.commits = append(w.commits, node)
	w.t.ents[idx].commit = ci
	return ci, nil
}

// parentsOf returns the parents of a parsed commit (nil for a graft).
func (w *walker) parentsOf(ci int32) []int32 {
	n := &w.commits[ci]
	if w.t.ents[n.obj].flags&fShallow != 0 {
		return nil
	}
	return w.parents[n.parents : n.parents+n.nparents]
}

// peel resolves idx through annotated tags, calling onTag for each tag
// met; it returns the final object's index and type.
func (w *walker) peel(idx int32, onTag func(int32)) (int32, gitpack.Type, error) {
	for depth := 0; ; depth++ {
		if w.t.ents[idx].commit >= 0 {
			return idx, gitpack.Commit, nil
		}
		t, data, err := w.read(idx)
		if err != nil {
			return idx, 0, err
		}
		switch t {
		case gitpack.Commit:
			if _, err := w.parseCommitData(idx, data); err != nil {
				return idx, 0, err
			}
			return idx, t, nil
		case gitpack.Tag:
			if depth > 64 {
				return idx, 0, fmt.Errorf("gitserve: tag chain too long at %s", w.t.ents[idx].id)
			}
			target, _, ok := parseTagTarget(data)
			if !ok {
				return idx, 0, fmt.Errorf("gitserve: malformed tag %s", w.t.ents[idx].id)
			}
			w.t.ents[idx].flags |= fTag
			if onTag != nil {
				onTag(idx)
			}
			idx, _ = w.t.add(target)
		default:
			return idx, t, nil
		}
	}
}

// walkRequest says what to enumerate.
type walkRequest struct {
	wants []plumbing.Hash
	// haves are objects the client has (with their closure, shallow
	// grafts respected).
	haves []plumbing.Hash
	// shallow are commits walked as parentless (the client's boundary and
	// the new one).
	shallow []plumbing.Hash
	// aggressive marks the trees of every uninteresting root commit
	// uninteresting, not only those of the commits at the edge (used when
	// shallow boundaries move, as unshallowed commits are only children
	// of what is sent).
	aggressive bool
}

// commitQueue is a max-heap of commits by committer time.
type commitQueue struct {
	w     *walker
	items []int32 // node indexes
}

func (q *commitQueue) Len() int { return len(q.items) }
func (q *commitQueue) Less(i, j int) bool {
	a, b := &q.w.commits[q.items[i]], &q.w.commits[q.items[j]]
	if a.when != b.when {
		return a.when > b.when
	}
	return a.obj < b.obj
}
func (q *commitQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *commitQueue) Push(x any)    { q.items = append(q.items, x.(int32)) }
func (q *commitQueue) Pop() any {
	n := len(q.items) - 1
	x := q.items[n]
	q.items = q.items[:n]
	return x
}

// walk marks everything reachable from the wants and not from the haves
// with fWanted (and not fUninteresting), and returns the answer: the ids
// of those objects, less the closed packs it could take whole, which it
// leaves in w.taken.
func (w *walker) walk(req walkRequest) ([]plumbing.Hash, error) {
	if w.ctx != nil {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
	}
	for _, s := range req.shallow {
		idx, _ := w.t.add(s)
		w.t.ents[idx].flags |= fShallow
	}

	// Uninteresting roots.
	var uninterestingCommits []int32
	var uninterestingTrees []int32
	for _, h := range req.haves {
		idx, _ := w.t.add(h)
		w.t.ents[idx].flags |= fUninteresting
		target, t, err := w.peel(idx, func(tag int32) { w.t.ents[tag].flags |= fUninteresting })
		if err != nil {
			if errors.Is(err, errMissing) {
				continue
			}
			return nil, err
		}
		w.t.ents[target].flags |= fUninteresting
		switch t {
		case gitpack.Commit:
			uninterestingCommits = append(uninterestingCommits, target)
		case gitpack.Tree:
			uninterestingTrees = append(uninterestingTrees, target)
		}
	}

	// Interesting roots.
	var wantCommits []int32
	var wantTrees []int32
	for _, h := range req.wants {
		idx, _ := w.t.add(h)
		target, t, err := w.peel(idx, func(tag int32) {
			if w.t.ents[tag].flags&fUninteresting == 0 {
				w.t.ents[tag].flags |= fWanted
			}
		})
		if err != nil {
			return nil, err
		}
		switch t {
		case gitpack.Commit:
			wantCommits = append(wantCommits, target)
		case gitpack.Tree:
			wantTrees = append(wantTrees, target)
		default:
			if w.t.ents[target].flags&fUninteresting == 0 {
				w.t.ents[target].flags |= fWanted
			}
		}
	}

	// Commits. Closed packs only serve a walk with nothing uninteresting
	// and no grafts, where every tip reached means that the pack's whole
	// closure is wanted.
	var result []int32 // node indexes of the commits to send
	var taken []gitpack.ClosedPack
	var err error
	switch {
	case len(uninterestingCommits) > 0:
		result, err = w.walkCommitsLimited(wantCommits, uninterestingCommits)
	case len(req.haves) == 0 && len(req.shallow) == 0 && len(w.closed) > 0:
		result, taken, err = w.walkCommitsClosed(wantCommits)
		w.tookClosed = len(taken)
		w.taken = taken
	default:
		result, err = w.walkCommitsAll(wantCommits)
	}
	if err != nil {
		return nil, err
	}

	inTaken := func(h plumbing.Hash) bool {
		for i := range taken {
			if taken[i].Contains(h) {
				return true
			}
		}
		return false
	}

	// Uninteresting trees: those of the edge commits (uninteresting
	// parents of commits sent), and with aggressive those of every
	// uninteresting root.
	for _, ti := range uninterestingTrees {
		if err := w.markTreeUninteresting(ti); err != nil {
			return nil, err
		}
	}
	if req.aggressive {
		for _, idx := range uninterestingCommits {
			if err := w.markCommitTreeUninteresting(idx); err != nil {
				return nil, err
			}
		}
	}
	if len(uninterestingCommits) > 0 {
		for _, ci := range result {
			for _, p := range w.parentsOf(ci) {
				if w.t.ents[p].flags&fUninteresting != 0 {
					if err := w.markCommitTreeUninteresting(p); err != nil {
						return nil, err
					}
				}
			}
		}
	}

	// Trees and blobs of the commits sent.
	roots := wantTrees
	for _, ci := range result {
		if len(taken) > 0 && w.t.ents[w.commits[ci].obj].flags&fClosed != 0 {
			continue
		}
		roots = append(roots, w.commits[ci].tree)
	}
	if err := w.walkTrees(roots, inTaken, len(taken) > 0); err != nil {
		return nil, err
	}
	if w.progress != nil {
		w.progress(w.counted)
	}

	// The answer, less the closed packs taken (w.taken).
	out := make([]plumbing.Hash, 0, w.counted+len(w.t.ents)/8)
	for i := range w.t.ents {
		if w.t.ents[i].flags&(fWanted|fUninteresting|fClosed) == fWanted {
			out = append(out, w.t.ents[i].id)
		}
	}
	return out, nil
}

func (w *walker) count() {
	w.counted++
	if w.counted&0x3fff == 0 {
		if w.progress != nil {
			w.progress(w.counted)
		}
		if w.ctx != nil && w.err == nil {
			w.err = w.ctx.Err()
		}
	}
}

// walkCommitsAll walks every commit reachable from the wants (no haves):
// a plain depth-first walk.
func (w *walker) walkCommitsAll(wants []int32) ([]int32, error) {
	var result []int32
	stack := w.stack[:0]
	for _, idx := range wants {
		stack = append(stack, idx)
	}
	for len(stack) > 0 {
		idx := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.t.ents[idx].flags&fWanted != 0 {
			continue
		}
		if w.err != nil {
			return nil, w.err
		}
		ci, err := w.loadCommit(idx)
		if err != nil {
			return nil, err
		}
		w.t.ents[idx].flags |= fWanted
		w.count()
		result = append(result, ci)
		for _, p := range w.parentsOf(ci) {
			if w.t.ents[p].flags&fWanted == 0 {
				stack = append(stack, p)
			}
		}
	}
	w.stack = stack[:0]
	return result, nil
}

// walkCommitsLimited walks commits newest first from the wants and the
// haves together, propagating "uninteresting" down from the haves, and
// stops when everything left in the queue is uninteresting.
func (w *walker) walkCommitsLimited(wants, haves []int32) ([]int32, error) {
	q := &commitQueue{w: w}
	interesting := 0 // interesting commits in the queue
	push := func(idx int32) error {
		f := w.t.ents[idx].flags
		if f&(fQueued|fDone) != 0 {
			return nil
		}
		ci, err := w.loadCommit(idx)
		if err != nil {
			if f&fUninteresting != 0 && errors.Is(err, errMissing) {
				return nil // beyond what we have of the client's side
			}
			return err
		}
		w.t.ents[idx].flags |= fQueued
		if w.t.ents[idx].flags&fUninteresting == 0 {
			interesting++
		}
		heap.Push(q, ci)
		return nil
	}
	// mark marks idx uninteresting and, if already walked, its ancestors.
	var markStack []int32
	mark := func(idx int32) {
		stack := append(markStack[:0], idx)
		defer func() { markStack = stack[:0] }()
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			f := w.t.ents[i].flags
			if f&fUninteresting != 0 {
				continue
			}
			w.t.ents[i].flags |= fUninteresting
			if f&fQueued != 0 {
				interesting--
			}
			if f&fDone != 0 {
				if ci := w.t.ents[i].commit; ci >= 0 {
					stack = append(stack, w.parentsOf(ci)...)
				}
			}
		}
	}
	for _, idx := range haves {
		if err := push(idx); err != nil {
			return nil, err
		}
	}
	for _, idx := range wants {
		if err := push(idx); err != nil {
			return nil, err
		}
	}
	var walked []int32
	for q.Len() > 0 && interesting > 0 {
		ci := heap.Pop(q).(int32)
		idx := w.commits[ci].obj
		f := w.t.ents[idx].flags
		w.t.ents[idx].flags = f&^fQueued | fDone
		if f&fUninteresting != 0 {
			for _, p := range w.parentsOf(ci) {
				mark(p)
				if err := push(p); err != nil {
					return nil, err
				}
			}
			continue
		}
		interesting--
		walked = append(walked, ci)
		for _, p := range w.parentsOf(ci) {
			if err := push(p); err != nil {
				return nil, err
			}
		}
	}
	// Clear the queue marks (the negotiation may walk again).
	for _, ci := range q.items {
		w.t.ents[w.commits[ci].obj].flags &^= fQueued
	}
	result := walked[:0]
	for _, ci := range walked {
		idx := w.commits[ci].obj
		if w.t.ents[idx].flags&fUninteresting == 0 {
			w.t.ents[idx].flags |= fWanted
			w.count()
			result = append(result, ci)
		}
	}
	return result, nil
}

// walkCommitsClosed walks the commits reachable from the wants (no
// haves, no grafts) without walking into closed packs: a commit in a
// closed pack is an entry into it. A pack all of whose tips are reached
// (wanted, entries, or found below its entries) is taken whole: its
// commits need neither a walk nor a tree walk. A pack whose tips are not
// all reached is given up, and the walk goes on through it as through
// any commits. It returns the commits outside the taken packs.
func (w *walker) walkCommitsClosed(wants []int32) ([]int32, []gitpack.ClosedPack, error) {
	var packs []gitpack.ClosedPack
	for _, p := range w.closed {
		if len(p.Tips) > 0 && p.Contains != nil {
			packs = append(packs, p)
		}
	}
	const (
		candidate = iota
		takenPack
		givenUp
	)
	state := make([]int, len(packs))
	entries := make([][]int32, len(packs))
	inPack := func(h plumbing.Hash) int {
		for k := range packs {
			if state[k] != givenUp && packs[k].Contains(h) {
				return k
			}
		}
		return -1
	}
	var result []int32
	stack := append(w.stack[:0], wants...)
	walk := func() error {
		for len(stack) > 0 {
			idx := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if w.t.ents[idx].flags&fWanted != 0 {
				continue
			}
			if w.err != nil {
				return w.err
			}
			if k := inPack(w.t.ents[idx].id); k >= 0 {
				w.t.ents[idx].flags |= fWanted
				entries[k] = append(entries[k], idx)
				continue
			}
			ci, err := w.loadCommit(idx)
			if err != nil {
				return err
			}
			w.t.ents[idx].flags |= fWanted
			w.count()
			result = append(result, ci)
			for _, p := range w.parentsOf(ci) {
				if w.t.ents[p].flags&fWanted == 0 {
					stack = append(stack, p)
				}
			}
		}
		return nil
	}
	if err := walk(); err != nil {
		return nil, nil, err
	}
	for {
		again := false
		for k := range packs {
			if state[k] != candidate {
				continue
			}
			ok, err := w.tipsReached(packs[k], entries[k])
			if err != nil {
				return nil, nil, err
			}
			if ok {
				state[k] = takenPack
				continue
			}
			// Given up: walk on through its entries.
			state[k] = givenUp
			again = true
			for _, idx := range entries[k] {
				w.t.ents[idx].flags &^= fWanted
				stack = append(stack, idx)
			}
			entries[k] = nil
			if err := walk(); err != nil {
				return nil, nil, err
			}
		}
		if !again {
			break
		}
	}
	w.stack = stack[:0]
	var taken []gitpack.ClosedPack
	for k := range packs {
		if state[k] == takenPack && len(entries[k]) > 0 {
			taken = append(taken, packs[k])
			for _, idx := range entries[k] {
				w.t.ents[idx].flags |= fClosed
			}
		}
	}
	// Wanted tags that the taken packs hold come with them.
	for i := range w.t.ents {
		if w.t.ents[i].flags&(fTag|fWanted) == fTag|fWanted {
			for _, p := range taken {
				if p.Contains(w.t.ents[i].id) {
					w.t.ents[i].flags |= fClosed
					break
				}
			}
		}
	}
	return result, taken, nil
}

// tipsReached reports whether every tip of p is wanted, or is found by a
// walk of p's commits down from the entries (all in p: it is closed).
func (w *walker) tipsReached(p gitpack.ClosedPack, entries []int32) (bool, error) {
	if len(entries) == 0 {
		return false, nil
	}
	missing := make(map[plumbing.Hash]bool)
	for _, tip := range p.Tips {
		if idx := w.t.find(tip); idx < 0 || w.t.ents[idx].flags&fWanted == 0 {
			missing[tip] = true
		}
	}
	if len(missing) == 0 {
		return true, nil
	}
	seen := make(map[int32]bool, len(entries))
	stack := append([]int32(nil), entries...)
	for _, idx := range entries {
		seen[idx] = true
	}
	for len(stack) > 0 && len(missing) > 0 {
		idx := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		delete(missing, w.t.ents[idx].id)
		ci, err := w.loadCommit(idx)
		if err != nil {
			return false, err
		}
		for _, par := range w.parents[w.commits[ci].parents : w.commits[ci].parents+w.commits[ci].nparents] {
			if !seen[par] {
				seen[par] = true
				stack = append(stack, par)
			}
		}
	}
	return len(missing) == 0, nil
}

func (w *walker) markCommitTreeUninteresting(idx int32) error {
	ci, err := w.loadCommit(idx)
	if err != nil {
		if errors.Is(err, errMissing) {
			return nil
		}
		return err
	}
	return w.markTreeUninteresting(w.commits[ci].tree)
}

// markTreeUninteresting marks a tree the client has, and everything under
// it, uninteresting.
func (w *walker) markTreeUninteresting(root int32) error {
	if w.t.ents[root].flags&fUninteresting != 0 {
		return nil
	}
	w.t.ents[root].flags |= fUninteresting
	stack := append(w.stack[:0], root)
	for len(stack) > 0 {
		ti := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t, data, err := w.read(ti)
		if err != nil {
			if errors.Is(err, errMissing) {
				continue
			}
			return err
		}
		if t != gitpack.Tree {
			continue
		}
		for len(data) > 0 {
			kind, _, id, rest, ok := nextTreeEntry(data)
			if !ok {
				return fmt.Errorf("gitserve: malformed tree %s", w.t.ents[ti].id)
			}
			data = rest
			if kind == entryGitlink {
				continue
			}
			idx, _ := w.t.add(id)
			if w.t.ents[idx].flags&fUninteresting != 0 {
				continue
			}
			w.t.ents[idx].flags |= fUninteresting
			if kind == entryTree {
				stack = append(stack, idx)
			}
		}
	}
	w.stack = stack[:0]
	return nil
}

// inTaken reports whether a closed pack the walk took holds h.
func (w *walker) inTaken(h plumbing.Hash) bool {
	for i := range w.taken {
		if w.taken[i].Contains(h) {
			return true
		}
	}
	return false
}

// clientHas reports whether the walk found the object on the client's
// side (for thin packs).
func (w *walker) clientHas(h plumbing.Hash) bool {
	idx := w.t.find(h)
	return idx >= 0 && w.t.ents[idx].flags&fUninteresting != 0
}

// Enumerate lists every object reachable from tips (commits, trees, blobs
// and tags; submodule commits are not followed), each once, for
// housekeeping to repack. A closed pack all of whose tips are reached is
// listed whole without walking into it.
func Enumerate(objects *gitpack.Store, tips []plumbing.Hash) ([]plumbing.Hash, error) {
	w := newWalker(objects, 1<<16)
	w.closed = objects.ClosedPacks()
	out, err := w.walk(walkRequest{wants: tips})
	if err != nil {
		return nil, err
	}
	if testHookWalk != nil {
		testHookWalk(w)
	}
	if len(w.taken) == 0 {
		return out, nil
	}
	// A taken pack's objects are not marked in the table (only those the
	// walk met are): merge the sorted lists, dropping duplicates.
	seen := make(map[plumbing.Hash]bool, len(out))
	for _, h := range out {
		seen[h] = true
	}
	for _, p := range w.taken {
		for _, h := range p.List() {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func enumerate(src objectSource, tips []plumbing.Hash) ([]plumbing.Hash, error) {
	w := newWalker(src, 1<<16)
	return w.walk(walkRequest{wants: tips})
}
