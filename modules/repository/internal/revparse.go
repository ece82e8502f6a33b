package internal

import (
	"bytes"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// commitHash resolves rev in a project's repository to a commit id by the
// same rules as resolveCommit (a full id, then the refs in git's order with
// symbolic refs followed, then an unambiguous abbreviated id; annotated
// tags peeled; empty is the default branch), without opening a go-git
// repository: the refs are read from their files and the objects from the
// project's shared object store and its cache. Opening a repository reads
// and parses its config and HEAD on every call; the write endpoints that
// only need to know which commit a sha names (statuses, comments) are
// measured in thousands per second and use this instead.
func (s *Storage) commitHash(projectID int64, rev, defaultBranch string) (plumbing.Hash, error) {
	objects, err := s.Objects(projectID)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	refs := &refStorage{root: s.Path(projectID), barrier: &s.refWrites} // read only, but never without its barrier
	if rev == "" {
		if defaultBranch == "" {
			return plumbing.ZeroHash, plumbing.ErrReferenceNotFound
		}
		rev = plumbing.NewBranchReferenceName(defaultBranch).String()
	}
	if len(rev) == 40 && isHex(rev) {
		return peelHash(objects, plumbing.NewHash(rev))
	}
	if validRef(rev) {
		for _, name := range refCandidates(rev) {
			if h, ok, err := refs.resolvedHash(name); err != nil {
				return plumbing.ZeroHash, err
			} else if ok {
				return peelHash(objects, h)
			}
		}
	}
	if len(rev) >= 4 && len(rev) < 40 && isHex(rev) {
		// Unambiguous among the objects that peel to a commit, as git's
		// "short object id is ambiguous" rule has it.
		var found []plumbing.Hash
		for _, h := range objects.Prefix(rev, 16) {
			if c, err := peelHash(objects, h); err == nil {
				found = append(found, c)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
	}
	return plumbing.ZeroHash, plumbing.ErrReferenceNotFound
}

// resolvedHash is the id a ref points at, symbolic refs followed (as far as
// git follows them); ok is false when the ref or its target does not exist.
func (s *refStorage) resolvedHash(name plumbing.ReferenceName) (plumbing.Hash, bool, error) {
	for depth := 0; depth < 5; depth++ {
		r, err := s.readRef(name)
		if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, errRefName) {
			return plumbing.ZeroHash, false, nil
		}
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if r.Type() == plumbing.HashReference {
			return r.Hash(), true, nil
		}
		name = r.Target()
	}
	return plumbing.ZeroHash, false, nil
}

// peelHash follows annotated tags to the commit, as peel does.
func peelHash(objects *gitpack.Store, h plumbing.Hash) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		t, data, err := objects.Read(h)
		if errors.Is(err, gitpack.ErrNotFound) {
			return plumbing.ZeroHash, plumbing.ErrObjectNotFound
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch t {
		case gitpack.Commit:
			return h, nil
		case gitpack.Tag:
			// A tag object starts with "object <40 hex>\n".
			rest, ok := bytes.CutPrefix(data, []byte("object "))
			if !ok || len(rest) < 41 || rest[40] != '\n' || !isHex(string(rest[:40])) {
				return plumbing.ZeroHash, plumbing.ErrObjectNotFound
			}
			h = plumbing.NewHash(string(rest[:40]))
		default:
			return plumbing.ZeroHash, plumbing.ErrObjectNotFound
		}
	}
	return plumbing.ZeroHash, plumbing.ErrObjectNotFound
}
