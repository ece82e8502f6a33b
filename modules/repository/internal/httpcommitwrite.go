package internal

// The HTTP adapter of commitwrite.go: routes, request inputs, GitLab views and
// status codes; the service side stays in commitwrite.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
)

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
	_, c, err := w.CommitActions(ctx, commitRequest{Branch: b.Branch, StartBranch: b.StartBranch, Message: b.CommitMessage,
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
	_, _, err := w.CommitActions(ctx, commitRequest{Branch: b.Branch, StartBranch: b.StartBranch, Message: b.CommitMessage,
		AuthorName: b.AuthorName, AuthorEmail: b.AuthorEmail, ProjectRef: in.ID, RequireExists: b.StartBranch == "",
		Actions: []CommitAction{{Action: action, FilePath: in.FilePath, Content: b.Content, Encoding: b.Encoding}}})
	if err != nil {
		return nil, err
	}
	out := &fileWriteOutput{}
	out.Body.FilePath, out.Body.Branch = in.FilePath, b.Branch
	return out, nil
}
