package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/fennec-forge/fennec/modules/projects"
)

// Reader serves the repository read API over the storage.
type Reader struct {
	store    *Storage
	access   projects.Access
	statuses *Statuses
	writer   *Writer // decorates branches and tags with protection and releases
}

// NewReader builds the one Reader the module's services share.
func NewReader(s *Storage, access projects.Access) *Reader {
	return &Reader{store: s, access: access}
}

// open checks that the caller may do a on the project (404 when they cannot
// see it, 403 when they may not) and opens its repository.
func (rd *Reader) open(ctx context.Context, id string, a projects.Action) (projects.ProjectInfo, *git.Repository, error) {
	info, err := rd.access.Require(ctx, id, a)
	if err != nil {
		return info, nil, err
	}
	repo, err := rd.store.Open(ctx, info.ID)
	return info, repo, err
}

// resolveCommit finds the commit a ref names, as git rev-parse does: a full
// 40-digit id is the object; then the refs in git's order (lookupRef: a
// full name first, tags before branches), annotated tags peeled; then an
// abbreviated id. Empty means the default branch itself.
func resolveCommit(repo *git.Repository, ref, defaultBranch string) (*object.Commit, error) {
	if ref == "" {
		if defaultBranch == "" {
			return nil, plumbing.ErrReferenceNotFound
		}
		ref = plumbing.NewBranchReferenceName(defaultBranch).String()
	}
	if len(ref) == 40 && isHex(ref) {
		return peel(repo, plumbing.NewHash(ref))
	}
	if r, err := lookupRef(repo, ref); err == nil {
		return peel(repo, r.Hash())
	}
	if len(ref) >= 4 && len(ref) < 40 && isHex(ref) {
		if h, err := repo.ResolveRevision(plumbing.Revision(ref)); err == nil {
			return peel(repo, *h)
		}
	}
	return nil, plumbing.ErrReferenceNotFound
}

// peel follows annotated tags to the commit.
func peel(repo *git.Repository, h plumbing.Hash) (*object.Commit, error) {
	for i := 0; i < 10; i++ {
		if t, err := repo.TagObject(h); err == nil {
			h = t.Target
			continue
		}
		return repo.CommitObject(h)
	}
	return nil, plumbing.ErrObjectNotFound
}

// Stats counts a commit's changed lines.
type Stats struct {
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
	Total     int `json:"total"`
}

// TreeEntry is one entry of GET /repository/tree.
type TreeEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
	Mode string `json:"mode"`
}

// cleanTreePath validates a repository path: relative, no "." or ".."
// segments, no NUL.
func cleanTreePath(p string) (string, bool) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", true
	}
	if strings.ContainsRune(p, 0) {
		return "", false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return p, true
}

// modeOf renders a mode as GitLab does: six octal digits.
func modeOf(m filemode.FileMode) string {
	s := strings.TrimLeft(m.String(), "0")
	for len(s) < 6 {
		s = "0" + s
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// refLog is the history from commit c, newest first by committer time,
// limited to the commits that touched file (a file or a directory; ""
// for all) and to the dates given. The API's commits and the commits page
// read it.
func refLog(repo *git.Repository, c *object.Commit, file string, since, until *time.Time) (object.CommitIter, error) {
	opts := &git.LogOptions{From: c.Hash, Order: git.LogOrderCommitterTime, Since: since, Until: until}
	if file != "" {
		opts.PathFilter = func(p string) bool { return p == file || strings.HasPrefix(p, file+"/") }
	}
	return repo.Log(opts)
}

// logPage is one page of a history: the limit commits after the first
// skip, and whether more follow. It walks only as far as the page and one
// more commit, so early pages never walk the whole history; iter is
// closed.
func logPage(iter object.CommitIter, skip, limit int) ([]*object.Commit, bool, error) {
	defer iter.Close()
	out := []*object.Commit{}
	more := false
	err := iter.ForEach(func(c *object.Commit) error {
		if skip > 0 {
			skip--
			return nil
		}
		if len(out) == limit {
			more = true
			return storer.ErrStop
		}
		out = append(out, c)
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, false, err
	}
	return out, more, nil
}
