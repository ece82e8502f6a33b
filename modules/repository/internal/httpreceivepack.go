package internal

// The HTTP adapter of receivepack.go: routes, request inputs, GitLab views and
// status codes; the service side stays in receivepack.go.

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

func (g *GitHTTP) receivePack(ctx context.Context, w http.ResponseWriter, r *http.Request, info projects.ProjectInfo) {
	body, err := requestBody(r)
	if err != nil {
		gitError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	defer body.Close()
	req, err := gitserve.ReadPushRequest(body)
	if err != nil {
		var re *gitserve.RequestError
		if errors.As(err, &re) {
			gitError(w, http.StatusBadRequest, "Bad Request: "+re.Msg)
		} else {
			gitError(w, http.StatusBadRequest, "Bad Request")
		}
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-git-receive-pack-result")
	noCache(h)
	if len(req.Commands) == 0 {
		return // the probe: credentials work, nothing to do
	}
	if err := g.push(ctx, w, info, req); err != nil {
		gitError(w, http.StatusInternalServerError, "Internal Server Error")
	}
}
