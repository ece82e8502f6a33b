package internal

import (
	"container/heap"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// aheadBehind counts the commits a has that b has not (ahead) and those b
// has that a has not (behind), as git rev-list --left-right --count a...b
// does: both histories are walked together, newest commit first, each
// commit marked with the sides that reach it, until every commit left to
// walk is reached from both (their common history, which needs no
// counting). The walk reads at most *budget commits, taken from the
// budget, so that a page of branches shares one bound; exact is false
// when it ran out (the counts are then not shown). Commits with clock
// skew can be counted on the wrong side, as git's own walk can.
func aheadBehind(repo *git.Repository, a, b plumbing.Hash, budget *int) (ahead, behind int, exact bool, err error) {
	if a == b {
		return 0, 0, true, nil
	}
	const fromA, fromB, both = 1, 2, 3
	flags := map[plumbing.Hash]uint8{}
	commits := map[plumbing.Hash]*object.Commit{}
	queued := map[plumbing.Hash]bool{}
	q := &commitQueue{}
	open := 0 // queued commits not yet known to be common
	push := func(h plumbing.Hash, f uint8) error {
		old := flags[h]
		if old|f == old {
			return nil
		}
		c := commits[h]
		if c == nil {
			if *budget <= 0 {
				return errBudget
			}
			*budget--
			var err error
			if c, err = repo.CommitObject(h); err != nil {
				return err
			}
			commits[h] = c
		}
		flags[h] = old | f
		switch {
		case !queued[h]:
			queued[h] = true
			heap.Push(q, c)
			if old|f != both {
				open++
			}
		case old != both && old|f == both:
			open--
		}
		return nil
	}
	if err := push(a, fromA); err != nil {
		return 0, 0, false, budgetOK(err)
	}
	if err := push(b, fromB); err != nil {
		return 0, 0, false, budgetOK(err)
	}
	for open > 0 && q.Len() > 0 {
		c := heap.Pop(q).(*object.Commit)
		queued[c.Hash] = false
		f := flags[c.Hash]
		if f != both {
			open--
		}
		for _, p := range c.ParentHashes {
			if err := push(p, f); err != nil {
				return 0, 0, false, budgetOK(err)
			}
		}
	}
	for _, f := range flags {
		switch f {
		case fromA:
			ahead++
		case fromB:
			behind++
		}
	}
	return ahead, behind, true, nil
}

// errBudget stops a walk that used its budget.
var errBudget = budgetError{}

type budgetError struct{}

func (budgetError) Error() string { return "repository: walk budget used" }

// budgetOK is nil for a used budget (not a failure: the counts are
// unknown) and err otherwise.
func budgetOK(err error) error {
	if err == errBudget {
		return nil
	}
	return err
}
