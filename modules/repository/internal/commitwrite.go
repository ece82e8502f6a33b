package internal

import (
	"context"
	"encoding/base64"
	"errors"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitAction is one element of actions[].
type CommitAction struct {
	Action       string  `json:"action" required:"true" enum:"create,delete,move,update"`
	FilePath     string  `json:"file_path" required:"true"`
	PreviousPath string  `json:"previous_path,omitempty"`
	Content      *string `json:"content,omitempty"`
	Encoding     string  `json:"encoding,omitempty" enum:"text,base64,"`
}

// commitRequest is what both the commits API and the files API ask for.
type commitRequest struct {
	Branch        string
	StartBranch   string
	Message       string
	AuthorName    string
	AuthorEmail   string
	Actions       []CommitAction
	ProjectRef    string
	RequireExists bool // the files API needs the branch to exist
}

type entry struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// flatten lists every non-tree entry of t by full path.
func flatten(repo *git.Repository, t *object.Tree, prefix string, out map[string]entry) error {
	for _, e := range t.Entries {
		p := path.Join(prefix, e.Name)
		if e.Mode == filemode.Dir {
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return err
			}
			if err := flatten(repo, sub, p, out); err != nil {
				return err
			}
			continue
		}
		out[p] = entry{e.Mode, e.Hash}
	}
	return nil
}

// buildTree writes the nested trees of a flat path -> entry map and returns
// the root tree's hash.
func buildTree(repo *git.Repository, files map[string]entry) (plumbing.Hash, error) {
	type dir struct {
		files map[string]entry
		dirs  map[string]*dir
	}
	root := &dir{files: map[string]entry{}, dirs: map[string]*dir{}}
	for p, e := range files {
		d := root
		parts := strings.Split(p, "/")
		for _, seg := range parts[:len(parts)-1] {
			next := d.dirs[seg]
			if next == nil {
				next = &dir{files: map[string]entry{}, dirs: map[string]*dir{}}
				d.dirs[seg] = next
			}
			d = next
		}
		d.files[parts[len(parts)-1]] = e
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		var entries []object.TreeEntry
		for name, e := range d.files {
			entries = append(entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
		}
		for name, sub := range d.dirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// git orders tree entries by name, directories as if they ended in "/".
		sort.Slice(entries, func(i, j int) bool {
			a, b := entries[i].Name, entries[j].Name
			if entries[i].Mode == filemode.Dir {
				a += "/"
			}
			if entries[j].Mode == filemode.Dir {
				b += "/"
			}
			return a < b
		})
		obj := repo.Storer.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return repo.Storer.SetEncodedObject(obj)
	}
	return write(root)
}

func writeBlob(repo *git.Repository, content []byte) (plumbing.Hash, error) {
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return repo.Storer.SetEncodedObject(obj)
}

// contentBlob writes an action's content as a blob.
func contentBlob(repo *git.Repository, a CommitAction) (plumbing.Hash, error) {
	content, err := actionContent(a)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return writeBlob(repo, content)
}

// actionContent is an action's content, decoded as its encoding says.
func actionContent(a CommitAction) ([]byte, error) {
	if a.Content == nil {
		return nil, invalid("You must provide content.")
	}
	if a.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(*a.Content)
		if err != nil {
			return nil, invalid("The content of " + a.FilePath + " is not valid Base64")
		}
		return b, nil
	}
	return []byte(*a.Content), nil
}

// checkActionPaths refuses, before anything is written, an action whose
// file_path (or a move's previous_path) git could not check out, as
// validWritePath says: the one path check of every API write (the commits
// API and the files API's create, update and delete come through here).
func checkActionPaths(actions []CommitAction) error {
	for _, a := range actions {
		if _, ok := validWritePath(a.FilePath); !ok {
			return invalid("Invalid file path: " + a.FilePath)
		}
		if a.Action == "move" {
			if _, ok := validWritePath(a.PreviousPath); !ok {
				return invalid("Invalid previous path: " + a.PreviousPath)
			}
		}
	}
	return nil
}

// CommitActions applies the actions on the branch (or start_branch for a
// new branch) as a new commit of the caller in ctx, who must be able to
// push to the branch, and moves the branch by compare-and-set.
func (w *Writer) CommitActions(ctx context.Context, req commitRequest) (projects.ProjectInfo, *object.Commit, error) {
	info, repo, err := w.rd.open(ctx, req.ProjectRef, projects.PushCode)
	if err != nil {
		return info, nil, err
	}
	// The objects written below are unreachable until the ref moves; a
	// repack in between would drop them as garbage. Hold the repository's
	// maintenance lock shared, as pushes do, until the ref has moved.
	maint := w.rd.store.maintenanceLock(info.ID)
	maint.RLock()
	defer maint.RUnlock()
	if !validBranchName(req.Branch) {
		return info, nil, invalid("Branch name is invalid")
	}
	if strings.TrimSpace(req.Message) == "" {
		return info, nil, missing("commit_message")
	}
	if len(req.Actions) == 0 {
		return info, nil, missing("actions")
	}
	if err := checkActionPaths(req.Actions); err != nil {
		return info, nil, err
	}
	if ok, err := w.mayPushBranch(ctx, info.ID, req.ProjectRef, req.Branch); err != nil {
		return info, nil, err
	} else if !ok {
		return info, nil, refused("You are not allowed to push into this branch")
	}
	branch := plumbing.NewBranchReferenceName(req.Branch)
	var old *plumbing.Reference
	var parent *object.Commit
	files := map[string]entry{}
	if r, err := branchRef(repo, req.Branch); err == nil {
		old = r
	} else if req.RequireExists && hasBranches(repo) {
		// The files API writes to an existing branch, except the first
		// commit of an empty repository, which creates it (as the commits
		// API does): that is how scripts seed a new project.
		return info, nil, ErrBranchNotFound
	}
	from := old
	if from == nil && req.StartBranch != "" {
		r, err := branchRef(repo, req.StartBranch)
		if err != nil || !validBranchName(req.StartBranch) {
			return info, nil, invalid("Invalid start branch")
		}
		from = r
	}
	if from != nil {
		if parent, err = repo.CommitObject(from.Hash()); err != nil {
			return info, nil, err
		}
		t, err := parent.Tree()
		if err != nil {
			return info, nil, err
		}
		if err := flatten(repo, t, "", files); err != nil {
			return info, nil, err
		}
	} else if old == nil {
		// A new branch of an empty repository, or from nothing: only allowed
		// when the repository has no branch to start from.
		if iter, err := repo.Branches(); err == nil {
			if _, err := iter.Next(); err == nil {
				return info, nil, invalid("You can only create a new branch from an existing one: give start_branch")
			}
		}
	}
	isDir := func(p string) bool {
		for f := range files {
			if strings.HasPrefix(f, p+"/") {
				return true
			}
		}
		return false
	}
	for _, a := range req.Actions {
		p, ok := validWritePath(a.FilePath)
		if !ok {
			return info, nil, invalid("Invalid file path: " + a.FilePath)
		}
		_, exists := files[p]
		switch a.Action {
		case "create":
			if exists || isDir(p) {
				return info, nil, invalid("A file with this name already exists: " + p)
			}
			h, err := contentBlob(repo, a)
			if err != nil {
				return info, nil, err
			}
			files[p] = entry{filemode.Regular, h}
		case "update":
			if !exists {
				return info, nil, invalid("A file with this name doesn't exist: " + p)
			}
			h, err := contentBlob(repo, a)
			if err != nil {
				return info, nil, err
			}
			files[p] = entry{files[p].mode, h}
		case "delete":
			if !exists {
				return info, nil, invalid("A file with this name doesn't exist: " + p)
			}
			delete(files, p)
		case "move":
			prev, ok := validWritePath(a.PreviousPath)
			if !ok {
				return info, nil, invalid("Invalid previous path: " + a.PreviousPath)
			}
			src, had := files[prev]
			if !had {
				return info, nil, invalid("A file with this name doesn't exist: " + prev)
			}
			if exists || isDir(p) {
				return info, nil, invalid("A file with this name already exists: " + p)
			}
			delete(files, prev)
			if a.Content != nil {
				h, err := contentBlob(repo, a)
				if err != nil {
					return info, nil, err
				}
				src.hash = h
			}
			files[p] = src
		default:
			return info, nil, notValidValue("actions[action]")
		}
	}
	// A file may not sit where a directory is (a/b as a file and a/b/c).
	for f := range files {
		for dir := path.Dir(f); dir != "."; dir = path.Dir(dir) {
			if _, clash := files[dir]; clash {
				return info, nil, invalid("A file with this name already exists: " + dir)
			}
		}
	}
	tree, err := buildTree(repo, files)
	if err != nil {
		return info, nil, err
	}
	pr := auth.FromContext(ctx)
	committer := object.Signature{Name: pr.User.Username, Email: pr.User.Username, When: time.Now()}
	if u, err := w.users.UserByID(ctx, pr.UserID()); err == nil {
		committer.Name, committer.Email = u.Name, u.Email
	}
	author := committer
	if req.AuthorName != "" {
		author.Name = req.AuthorName
	}
	if req.AuthorEmail != "" {
		author.Email = req.AuthorEmail
	}
	commit := &object.Commit{Author: author, Committer: committer, Message: req.Message, TreeHash: tree}
	if parent != nil {
		commit.ParentHashes = []plumbing.Hash{parent.Hash}
	}
	obj := repo.Storer.NewEncodedObject()
	if err := commit.Encode(obj); err != nil {
		return info, nil, err
	}
	hash, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return info, nil, err
	}
	before := plumbing.ZeroHash
	if old != nil {
		before = old.Hash()
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: branch, Old: before, New: hash}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return info, nil, invalid("The branch changed while committing; nothing was lost: commit again")
		}
		return info, nil, err
	}
	created, err := repo.CommitObject(hash)
	if err != nil {
		return info, nil, err
	}
	return info, created, nil
}
