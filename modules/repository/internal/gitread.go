package internal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// GitRead is the service behind gitread.Reader: reads of a project's
// repository for the modules above, in plain values.
type GitRead struct {
	store  *Storage
	access projects.Access
}

var _ gitread.Reader = (*GitRead)(nil)

// NewGitRead builds the reader.
func NewGitRead(s *Storage, access projects.Access) *GitRead {
	return &GitRead{store: s, access: access}
}

// maxLogParents bounds the walk's queue per commit: an octopus merge has a
// handful of parents, never thousands.
const maxLogParents = 64

// open checks the caller's right to read the code, holds the project's
// maintenance lock (so housekeeping does not repack under the read) and
// opens the repository; done releases the lock.
func (g *GitRead) open(ctx context.Context, projectID int64) (repo *git.Repository, defaultBranch string, done func(), err error) {
	info, err := g.access.RequireID(ctx, projectID, projects.ReadCode)
	if err != nil {
		return nil, "", nil, err
	}
	lock := g.store.maintenanceLock(projectID)
	lock.RLock()
	repo, err = g.store.Open(ctx, projectID)
	if err != nil {
		lock.RUnlock()
		return nil, "", nil, err
	}
	return repo, info.DefaultBranch, lock.RUnlock, nil
}

// readRevision resolves rev in an open repository.
func readRevision(repo *git.Repository, rev, defaultBranch string) (*object.Commit, error) {
	c, err := resolveCommit(repo, rev, defaultBranch)
	if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: %q", gitread.ErrRevisionNotFound, rev)
	}
	return c, err
}

func plainCommit(c *object.Commit) gitread.Commit {
	parents := make([]string, len(c.ParentHashes))
	for i, h := range c.ParentHashes {
		parents[i] = h.String()
	}
	return gitread.Commit{
		ID: c.Hash.String(), ParentIDs: parents, Message: c.Message,
		Author:    gitread.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer: gitread.Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
	}
}

// Resolve implements gitread.Reader.
func (g *GitRead) Resolve(ctx context.Context, projectID int64, rev string) (string, error) {
	c, err := g.Commit(ctx, projectID, rev)
	return c.ID, err
}

// Commit implements gitread.Reader.
func (g *GitRead) Commit(ctx context.Context, projectID int64, rev string) (gitread.Commit, error) {
	repo, def, done, err := g.open(ctx, projectID)
	if err != nil {
		return gitread.Commit{}, err
	}
	defer done()
	c, err := readRevision(repo, rev, def)
	if err != nil {
		return gitread.Commit{}, err
	}
	return plainCommit(c), nil
}

// cleanPath is path relative to the root, "" for the root itself; ok is
// false for paths that climb out or hold empty segments.
func cleanPath(p string) (string, bool) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", true
	}
	if path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
		return "", false
	}
	return p, true
}

// File implements gitread.Reader.
func (g *GitRead) File(ctx context.Context, projectID int64, rev, filePath string, maxBytes int64) ([]byte, error) {
	p, ok := cleanPath(filePath)
	if !ok || p == "" {
		return nil, fmt.Errorf("%w: %q", gitread.ErrPathNotFound, filePath)
	}
	repo, def, done, err := g.open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := readRevision(repo, rev, def)
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	e, err := tree.FindEntry(p)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || (err == nil && !e.Mode.IsFile()) {
		return nil, fmt.Errorf("%w: %q", gitread.ErrPathNotFound, filePath)
	}
	if err != nil {
		return nil, err
	}
	blob, err := repo.BlobObject(e.Hash)
	if err != nil {
		return nil, err
	}
	if maxBytes > 0 && blob.Size > maxBytes {
		return nil, fmt.Errorf("%w: %q is %d bytes, at most %d", gitread.ErrTooLarge, filePath, blob.Size, maxBytes)
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Tree implements gitread.Reader.
func (g *GitRead) Tree(ctx context.Context, projectID int64, rev, treePath string, offset, limit int) ([]gitread.TreeEntry, error) {
	p, ok := cleanPath(treePath)
	if !ok {
		return nil, fmt.Errorf("%w: %q", gitread.ErrPathNotFound, treePath)
	}
	repo, def, done, err := g.open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := readRevision(repo, rev, def)
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	if p != "" {
		if tree, err = tree.Tree(p); errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%w: %q", gitread.ErrPathNotFound, treePath)
		} else if err != nil {
			return nil, err
		}
	}
	entries := tree.Entries
	offset = min(max(offset, 0), len(entries))
	entries = entries[offset:]
	if limit > 0 && limit < len(entries) {
		entries = entries[:limit]
	}
	out := make([]gitread.TreeEntry, 0, len(entries))
	for _, e := range entries {
		t := gitread.Blob
		switch e.Mode {
		case filemode.Dir:
			t = gitread.Tree
		case filemode.Submodule:
			t = gitread.Module
		}
		out = append(out, gitread.TreeEntry{ID: e.Hash.String(), Name: e.Name, Path: path.Join(p, e.Name), Type: t,
			Mode: fmt.Sprintf("%06o", uint32(e.Mode))})
	}
	return out, nil
}

// Log implements gitread.Reader: breadth first from q.From, each commit
// once, never into q.Stop.
func (g *GitRead) Log(ctx context.Context, projectID int64, q gitread.LogQuery, fn func(gitread.Commit) bool) error {
	repo, _, done, err := g.open(ctx, projectID)
	if err != nil {
		return err
	}
	defer done()
	seen := map[plumbing.Hash]bool{}
	for _, s := range q.Stop {
		if plumbing.IsHash(s) {
			seen[plumbing.NewHash(s)] = true
		}
	}
	var queue []plumbing.Hash
	for _, f := range q.From {
		if !plumbing.IsHash(f) {
			return fmt.Errorf("%w: %q", gitread.ErrRevisionNotFound, f)
		}
		queue = append(queue, plumbing.NewHash(f))
	}
	for n := 0; len(queue) > 0 && (q.Limit <= 0 || n < q.Limit); {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := repo.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return fmt.Errorf("%w: %s", gitread.ErrRevisionNotFound, h)
		}
		if err != nil {
			return err
		}
		n++
		if !fn(plainCommit(c)) {
			return nil
		}
		queue = append(queue, c.ParentHashes[:min(len(c.ParentHashes), maxLogParents)]...)
	}
	return nil
}

// AnnotatedTag implements gitread.Reader.
func (g *GitRead) AnnotatedTag(ctx context.Context, projectID int64, id string) (gitread.Tag, error) {
	if !plumbing.IsHash(id) {
		return gitread.Tag{}, gitread.ErrNotAnnotatedTag
	}
	repo, _, done, err := g.open(ctx, projectID)
	if err != nil {
		return gitread.Tag{}, err
	}
	defer done()
	t, err := repo.TagObject(plumbing.NewHash(id))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return gitread.Tag{}, gitread.ErrNotAnnotatedTag
	}
	if err != nil {
		return gitread.Tag{}, err
	}
	out := gitread.Tag{ID: t.Hash.String(), Name: t.Name, Message: t.Message}
	if c, err := peel(repo, t.Target); err == nil {
		out.CommitID = c.Hash.String()
	}
	return out, nil
}

// Branches implements gitread.Reader.
func (g *GitRead) Branches(ctx context.Context, projectID int64, limit int) ([]gitread.Ref, error) {
	repo, _, done, err := g.open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	defer done()
	iter, err := repo.Branches()
	if err != nil {
		return nil, err
	}
	var out []gitread.Ref
	err = iter.ForEach(func(r *plumbing.Reference) error {
		out = append(out, gitread.Ref{Name: r.Name().Short(), FullName: r.Name().String(), Target: r.Hash().String(), CommitID: r.Hash().String()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b gitread.Ref) int { return strings.Compare(a.FullName, b.FullName) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Tags implements gitread.Reader.
func (g *GitRead) Tags(ctx context.Context, projectID int64) ([]gitread.Ref, error) {
	repo, _, done, err := g.open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	defer done()
	iter, err := repo.Tags()
	if err != nil {
		return nil, err
	}
	var out []gitread.Ref
	err = iter.ForEach(func(r *plumbing.Reference) error {
		ref := gitread.Ref{Name: r.Name().Short(), FullName: r.Name().String(), Target: r.Hash().String()}
		if c, err := peel(repo, r.Hash()); err == nil {
			ref.CommitID = c.Hash.String()
		}
		out = append(out, ref)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b gitread.Ref) int { return strings.Compare(a.FullName, b.FullName) })
	return out, nil
}
