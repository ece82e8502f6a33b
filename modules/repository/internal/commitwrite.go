package internal

import (
	"encoding/base64"
	"path"
	"sort"
	"strings"

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
