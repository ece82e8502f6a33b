package internal

// The HTTP adapter of revert.go: routes, request inputs, GitLab views and
// status codes; the service side stays in revert.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
)

// revert is POST .../commits/:sha/revert (Writer.Revert).
func (w *Writer) revert(ctx context.Context, in *revertInput) (*struct{ Body *CommitView }, error) {
	created, err := w.Revert(ctx, in.ID, in.SHA, in.Body.Branch)
	if err != nil {
		return nil, err
	}
	v := commitView(created)
	return &struct{ Body *CommitView }{Body: &v}, nil
}

func (w *Writer) registerRevert(a *api.API) {
	api.Register(a, api.Op{ID: "revert-commit", Method: http.MethodPost, Path: "/projects/{id}/repository/commits/{sha}/revert",
		Tags: []string{"repository"}, Summary: "Undo a commit's change in a new commit on a branch", Access: api.SignedIn}, w.revert)
}

type revertInput struct {
	ProjectPath
	SHA  string `path:"sha" doc:"The commit to revert"`
	Body struct {
		Branch string `json:"branch" required:"true" doc:"The branch to commit the revert to"`
	}
}
