package internal

// The HTTP adapter of diff.go: routes, request inputs, GitLab views and
// status codes; the service side stays in diff.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

func (rd *Reader) registerDiff(a *api.API) {
	api.Register(a, api.Op{ID: "repository-commit-diff", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/diff",
		Tags: []string{"repository"}, Summary: "The diff of a commit against its first parent", Access: api.Public}, rd.commitDiff)
}

type commitDiffOutput struct {
	Body []DiffView
}

func (rd *Reader) commitDiff(ctx context.Context, in *commitInput) (*commitDiffOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	entries, err := rd.commitDiffEntries(ctx, info.ID, c)
	if err != nil {
		return nil, err
	}
	return &commitDiffOutput{Body: entries}, nil
}
