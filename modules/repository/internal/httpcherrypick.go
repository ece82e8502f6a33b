package internal

// The HTTP adapter of cherrypick.go: routes, request inputs, GitLab views and
// status codes; the service side stays in cherrypick.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
)

// cherryPick is POST .../commits/:sha/cherry_pick (Writer.CherryPick).
func (w *Writer) cherryPick(ctx context.Context, in *cherryPickInput) (*struct{ Body *CommitDetail }, error) {
	created, err := w.CherryPick(ctx, in.ID, in.SHA, in.Body.Branch)
	if err != nil {
		return nil, err
	}
	return &struct{ Body *CommitDetail }{Body: detail(created)}, nil
}

func (w *Writer) registerCherryPick(a *api.API) {
	api.Register(a, api.Op{ID: "cherry-pick-commit", Method: http.MethodPost, Path: "/projects/{id}/repository/commits/{sha}/cherry_pick",
		Tags: []string{"repository"}, Summary: "Apply a commit's change on a branch", Access: api.SignedIn}, w.cherryPick)
}

type cherryPickInput struct {
	ProjectPath
	SHA  string `path:"sha" doc:"The commit to pick"`
	Body struct {
		Branch string `json:"branch" required:"true"`
	}
}
