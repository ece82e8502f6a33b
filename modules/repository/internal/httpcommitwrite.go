package internal

// The HTTP adapter of commitwrite.go: routes, request inputs, GitLab views and
// status codes; the service side stays in commitwrite.go.

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects"
)

// commitActions applies the actions on the branch (or start_branch for a
// new branch) and moves the branch by compare-and-set.
func (w *Writer) commitActions(ctx context.Context, req commitRequest) (projects.ProjectInfo, *object.Commit, error) {
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
		return info, nil, api.BadRequest("Branch name is invalid")
	}
	if strings.TrimSpace(req.Message) == "" {
		return info, nil, api.Missing("commit_message")
	}
	if len(req.Actions) == 0 {
		return info, nil, api.Missing("actions")
	}
	if err := checkActionPaths(req.Actions); err != nil {
		return info, nil, err
	}
	if ok, err := w.mayPushBranch(ctx, info.ID, req.ProjectRef, req.Branch); err != nil {
		return info, nil, err
	} else if !ok {
		return info, nil, api.Forbidden("You are not allowed to push into this branch")
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
			return info, nil, api.BadRequest("Invalid start branch")
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
				return info, nil, api.BadRequest("You can only create a new branch from an existing one: give start_branch")
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
			return info, nil, api.BadRequest("Invalid file path: " + a.FilePath)
		}
		_, exists := files[p]
		switch a.Action {
		case "create":
			if exists || isDir(p) {
				return info, nil, api.BadRequest("A file with this name already exists: " + p)
			}
			h, err := contentBlob(repo, a)
			if err != nil {
				return info, nil, err
			}
			files[p] = entry{filemode.Regular, h}
		case "update":
			if !exists {
				return info, nil, api.BadRequest("A file with this name doesn't exist: " + p)
			}
			h, err := contentBlob(repo, a)
			if err != nil {
				return info, nil, err
			}
			files[p] = entry{files[p].mode, h}
		case "delete":
			if !exists {
				return info, nil, api.BadRequest("A file with this name doesn't exist: " + p)
			}
			delete(files, p)
		case "move":
			prev, ok := validWritePath(a.PreviousPath)
			if !ok {
				return info, nil, api.BadRequest("Invalid previous path: " + a.PreviousPath)
			}
			src, had := files[prev]
			if !had {
				return info, nil, api.BadRequest("A file with this name doesn't exist: " + prev)
			}
			if exists || isDir(p) {
				return info, nil, api.BadRequest("A file with this name already exists: " + p)
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
			return info, nil, api.NotValidValue("actions[action]")
		}
	}
	// A file may not sit where a directory is (a/b as a file and a/b/c).
	for f := range files {
		for dir := path.Dir(f); dir != "."; dir = path.Dir(dir) {
			if _, clash := files[dir]; clash {
				return info, nil, api.BadRequest("A file with this name already exists: " + dir)
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
			return info, nil, api.BadRequest("The branch changed while committing; nothing was lost: commit again")
		}
		return info, nil, err
	}
	created, err := repo.CommitObject(hash)
	if err != nil {
		return info, nil, err
	}
	return info, created, nil
}

func (w *Writer) registerCommits(a *api.API) {
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "create-commit", Method: http.MethodPost, Path: "/projects/{id}/repository/commits", Tags: tags,
		Summary: "Commit several file actions at once", Access: api.SignedIn}, w.createCommit)
	api.Register(a, api.Op{ID: "create-file", Method: http.MethodPost, Path: "/projects/{id}/repository/files/{file_path}", Tags: tags,
		Summary: "Create a file in a new commit", Access: api.SignedIn}, func(ctx context.Context, in *fileWriteInput) (*fileWriteOutput, error) {
		return w.fileWrite(ctx, in, "create")
	})
	api.Register(a, api.Op{ID: "update-file", Method: http.MethodPut, Path: "/projects/{id}/repository/files/{file_path}", Tags: tags,
		Summary: "Change a file in a new commit", Access: api.SignedIn}, func(ctx context.Context, in *fileWriteInput) (*fileWriteOutput, error) {
		return w.fileWrite(ctx, in, "update")
	})
	api.Register(a, api.Op{ID: "delete-file", Method: http.MethodDelete, Path: "/projects/{id}/repository/files/{file_path}", Tags: tags,
		Summary: "Delete a file in a new commit", Access: api.SignedIn}, func(ctx context.Context, in *fileWriteInput) (*struct{}, error) {
		_, err := w.fileWrite(ctx, in, "delete")
		return nil, err
	})
}

type createCommitInput struct {
	ProjectPath
	Body struct {
		Branch        string         `json:"branch" required:"true"`
		CommitMessage string         `json:"commit_message" required:"true"`
		Actions       []CommitAction `json:"actions" required:"true"`
		StartBranch   string         `json:"start_branch,omitempty"`
		AuthorEmail   string         `json:"author_email,omitempty"`
		AuthorName    string         `json:"author_name,omitempty"`
	}
}

func (w *Writer) createCommit(ctx context.Context, in *createCommitInput) (*struct{ Body *CommitDetail }, error) {
	b := in.Body
	_, c, err := w.commitActions(ctx, commitRequest{Branch: b.Branch, StartBranch: b.StartBranch, Message: b.CommitMessage,
		AuthorName: b.AuthorName, AuthorEmail: b.AuthorEmail, Actions: b.Actions, ProjectRef: in.ID})
	if err != nil {
		return nil, err
	}
	return &struct{ Body *CommitDetail }{Body: detail(c)}, nil
}

type fileWriteInput struct {
	ProjectPath
	FilePath string `path:"file_path"`
	Body     struct {
		Branch        string  `json:"branch" required:"true"`
		CommitMessage string  `json:"commit_message" required:"true"`
		Content       *string `json:"content,omitempty"`
		Encoding      string  `json:"encoding,omitempty" enum:"text,base64,"`
		StartBranch   string  `json:"start_branch,omitempty"`
		AuthorEmail   string  `json:"author_email,omitempty"`
		AuthorName    string  `json:"author_name,omitempty"`
	}
}

type fileWriteOutput struct {
	Body struct {
		FilePath string `json:"file_path"`
		Branch   string `json:"branch"`
	}
}

func (w *Writer) fileWrite(ctx context.Context, in *fileWriteInput, action string) (*fileWriteOutput, error) {
	b := in.Body
	_, _, err := w.commitActions(ctx, commitRequest{Branch: b.Branch, StartBranch: b.StartBranch, Message: b.CommitMessage,
		AuthorName: b.AuthorName, AuthorEmail: b.AuthorEmail, ProjectRef: in.ID, RequireExists: b.StartBranch == "",
		Actions: []CommitAction{{Action: action, FilePath: in.FilePath, Content: b.Content, Encoding: b.Encoding}}})
	if err != nil {
		return nil, err
	}
	out := &fileWriteOutput{}
	out.Body.FilePath, out.Body.Branch = in.FilePath, b.Branch
	return out, nil
}
