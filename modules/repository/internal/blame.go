package internal

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
	"github.com/fennec-forge/fennec/modules/repository/merge"
)

// GET /projects/:id/repository/files/:file_path/blame: which commit last
// changed each line of a file at a ref, as `git blame` says (no rename or
// copy detection: a line that came from another path is blamed on the
// commit that brought it to this one).
//
// The walk is git's: a commit hands to a parent every line that parent
// already had, found by the same Myers line diff git uses (package merge);
// a parent whose file is the very same blob takes all of them without a
// diff; what no parent takes is the commit's own. Commits are visited
// newest first by committer date, so a commit reached through several
// children collects all their lines before it is looked at.
//
// Cost is bounded up front rather than by a timeout: the file may be at
// most maxBlameBlob bytes (an older version over it is treated as another
// file), and the walk may visit at most maxBlameCommits commits and diff at
// most maxBlameDiffLines lines in all; past a bound the request is refused
// with 400, nothing half-done is answered. Objects are read through the
// project's own pack reader (as receive-pack does), trees cached by id for
// the request.

const (
	// maxBlameBlob bounds every version of the file that is diffed. It is
	// the diff endpoints' bound (maxDiffBlob): what they would not diff,
	// blame does not either.
	maxBlameBlob = maxDiffBlob
	// maxBlameCommits bounds the commits visited, most of them only to see
	// that the file did not change: a few tree reads each.
	maxBlameCommits = 50000
	// maxBlameDiffLines bounds the lines fed to the line diff, both sides
	// of every diff counted.
	maxBlameDiffLines = 20_000_000
	// maxBlameTrees bounds the trees kept parsed during one request.
	maxBlameTrees = 20000
)

var (
	errBlameTooLarge = errors.New("repository: the file is too large to blame")
	errBlameTooLong  = errors.New("repository: the file's history is too long to blame")
)

// blameSeg is a run of lines still to be blamed: n lines of the suspect's
// version of the file from line src on, which are the final file's lines
// from line final on (0-based).
type blameSeg struct{ final, src, n int }

// suspect is a commit that holds lines to blame, with its version of the
// file.
type suspect struct {
	hash    plumbing.Hash
	commit  *rawCommit
	blob    plumbing.Hash
	content []byte // read when first needed
	segs    []blameSeg
	order   int // tie-break of the queue: the order suspects were made
}

type suspectQueue []*suspect

func (q suspectQueue) Len() int { return len(q) }
func (q suspectQueue) Less(i, j int) bool {
	if q[i].commit.committer.when != q[j].commit.committer.when {
		return q[i].commit.committer.when > q[j].commit.committer.when
	}
	return q[i].order < q[j].order
}
func (q suspectQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *suspectQueue) Push(x any)   { *q = append(*q, x.(*suspect)) }
func (q *suspectQueue) Pop() any {
	old := *q
	s := old[len(old)-1]
	*q = old[:len(old)-1]
	return s
}

// blamer is one blame walk.
type blamer struct {
	ctx       context.Context
	objs      *gitpack.Store
	segs      []string // the file's path
	trees     map[plumbing.Hash][]treeEntry
	pending   map[plumbing.Hash]*suspect
	queue     suspectQueue
	made      int
	visited   int
	diffLines int
}

// blameFile blames path (blob at commit) line by line: owners[i] is the
// commit of line i of lines, the file's content cut into lines.
func blameFile(ctx context.Context, objs *gitpack.Store, commit plumbing.Hash, path string, blob plumbing.Hash) (owners []plumbing.Hash, lines [][]byte, err error) {
	b := &blamer{ctx: ctx, objs: objs, segs: strings.Split(path, "/"), trees: map[plumbing.Hash][]treeEntry{},
		pending: map[plumbing.Hash]*suspect{}}
	content, ok, err := b.readBlob(blob)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, errBlameTooLarge
	}
	lines = merge.SplitLines(content)
	owners = make([]plumbing.Hash, len(lines))
	if len(lines) == 0 {
		return owners, lines, nil
	}
	c, err := readCommit(objs.Read, commit)
	if err != nil {
		return nil, nil, err
	}
	first := &suspect{hash: commit, commit: c, blob: blob, content: content}
	b.pass(first, []blameSeg{{final: 0, src: 0, n: len(lines)}})
	for b.queue.Len() > 0 {
		s := heap.Pop(&b.queue).(*suspect)
		delete(b.pending, s.hash)
		if b.visited++; b.visited > maxBlameCommits {
			return nil, nil, errBlameTooLong
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		kept, err := b.handOut(s)
		if err != nil {
			return nil, nil, err
		}
		for _, sg := range kept {
			for k := 0; k < sg.n; k++ {
				owners[sg.final+k] = s.hash
			}
		}
	}
	return owners, lines, nil
}

// pass gives segs to the suspect s stands for (merging them into one that
// is already queued for the same commit).
func (b *blamer) pass(s *suspect, segs []blameSeg) {
	if len(segs) == 0 {
		return
	}
	if q, ok := b.pending[s.hash]; ok {
		q.segs = append(q.segs, segs...)
		if q.content == nil {
			q.content = s.content
		}
		return
	}
	s.segs = append([]blameSeg(nil), segs...)
	s.order = b.made
	b.made++
	b.pending[s.hash] = s
	heap.Push(&b.queue, s)
}

// handOut passes what it can of s's lines to its parents and returns the
// segments that stay: the lines s changed.
func (b *blamer) handOut(s *suspect) ([]blameSeg, error) {
	type parent struct {
		hash   plumbing.Hash
		commit *rawCommit
		blob   plumbing.Hash
	}
	var parents []parent
	for _, p := range s.commit.parents {
		pc, err := readCommit(b.objs.Read, p)
		if err != nil {
			return nil, err
		}
		pb, ok, err := b.blobAt(pc.tree)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // the file is not in this parent: its lines are new
		}
		if pb == s.blob {
			// Unchanged from this parent: everything is its to blame.
			b.pass(&suspect{hash: p, commit: pc, blob: pb, content: s.content}, s.segs)
			return nil, nil
		}
		parents = append(parents, parent{p, pc, pb})
	}
	segs := s.segs
	sort.Slice(segs, func(i, j int) bool { return segs[i].src < segs[j].src })
	for _, p := range parents {
		if len(segs) == 0 {
			break
		}
		if s.content == nil {
			content, ok, err := b.readBlob(s.blob)
			if err != nil {
				return nil, err
			}
			if !ok {
				break // too large to diff: its lines stay its own
			}
			s.content = content
		}
		old, ok, err := b.readBlob(p.blob)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // that version is too large to diff: another file
		}
		oldLines, newLines := merge.SplitLines(old), merge.SplitLines(s.content)
		if b.diffLines += len(oldLines) + len(newLines); b.diffLines > maxBlameDiffLines {
			return nil, errBlameTooLong
		}
		edits := merge.DiffLines(old, s.content, merge.DiffOptions{Algorithm: merge.Myers, IndentHeuristic: true})
		passed, kept := splitSegs(segs, edits, len(newLines))
		b.pass(&suspect{hash: p.hash, commit: p.commit, blob: p.blob, content: old}, passed)
		segs = kept
	}
	return segs, nil
}

// splitSegs cuts segs (sorted by src, in the new text's lines) by a diff
// from an old text to the new one of newLen lines: the parts on unchanged
// lines are passed (renumbered in the old text), the rest kept.
func splitSegs(segs []blameSeg, edits []merge.Edit, newLen int) (passed, kept []blameSeg) {
	// The unchanged runs: new lines [from, from+n) are old lines
	// [old, old+n).
	type run struct{ from, old, n int }
	var runs []run
	prevNew, prevOld := 0, 0
	for _, e := range edits {
		if n := e.NewStart - prevNew; n > 0 {
			runs = append(runs, run{prevNew, prevOld, n})
		}
		prevNew, prevOld = e.NewStart+e.NewLines, e.OldStart+e.OldLines
	}
	if n := newLen - prevNew; n > 0 {
		runs = append(runs, run{prevNew, prevOld, n})
	}
	r := 0
	for _, sg := range segs {
		start, end := sg.src, sg.src+sg.n
		for start < end {
			for r < len(runs) && runs[r].from+runs[r].n <= start {
				r++
			}
			if r == len(runs) || runs[r].from >= end {
				kept = append(kept, blameSeg{final: sg.final + (start - sg.src), src: start, n: end - start})
				break
			}
			ru := runs[r]
			if ru.from > start {
				kept = append(kept, blameSeg{final: sg.final + (start - sg.src), src: start, n: ru.from - start})
				start = ru.from
			}
			stop := min(end, ru.from+ru.n)
			passed = append(passed, blameSeg{final: sg.final + (start - sg.src), src: ru.old + (start - ru.from), n: stop - start})
			start = stop
		}
	}
	return passed, kept
}

// blobAt is the blob at the blamed path in tree root; ok is false when the
// path is missing there or is not a file.
func (b *blamer) blobAt(root plumbing.Hash) (plumbing.Hash, bool, error) {
	h := root
	for i, seg := range b.segs {
		entries, err := b.tree(h)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		var found *treeEntry
		for k := range entries {
			if entries[k].name == seg {
				found = &entries[k]
				break
			}
		}
		if found == nil {
			return plumbing.ZeroHash, false, nil
		}
		last := i == len(b.segs)-1
		switch {
		case last && (found.isTree() || found.isGitlink()):
			return plumbing.ZeroHash, false, nil
		case !last && !found.isTree():
			return plumbing.ZeroHash, false, nil
		}
		h = found.hash
	}
	return h, true, nil
}

// tree reads and parses a tree, cached for the walk.
func (b *blamer) tree(h plumbing.Hash) ([]treeEntry, error) {
	if es, ok := b.trees[h]; ok {
		return es, nil
	}
	t, data, err := b.objs.Read(h)
	if err != nil {
		return nil, err
	}
	if t != gitpack.Tree {
		return nil, fmt.Errorf("repository: blame: %s is not a tree", h)
	}
	es, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	if len(b.trees) >= maxBlameTrees {
		clear(b.trees)
	}
	b.trees[h] = es
	return es, nil
}

// readBlob reads a blob; ok is false when it is over maxBlameBlob (its
// size is read from the object's header first).
func (b *blamer) readBlob(h plumbing.Hash) ([]byte, bool, error) {
	t, size, err := b.objs.Stat(h)
	if err != nil {
		return nil, false, err
	}
	if t != gitpack.Blob {
		return nil, false, errNotBlob
	}
	if size > maxBlameBlob {
		return nil, false, nil
	}
	_, data, err := b.objs.Read(h)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}
