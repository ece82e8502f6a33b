package internal

// The HTTP adapter of compare.go: routes, request inputs, GitLab views and
// status codes; the service side stays in compare.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

func (rd *Reader) registerCompare(a *api.API) {
	api.Register(a, api.Op{ID: "repository-compare", Method: http.MethodGet, Path: "/projects/{id}/repository/compare",
		Tags: []string{"repository"}, Summary: "Commits and diffs between two refs (merge-base semantics)", Access: api.Public}, rd.compare)
}

type compareInput struct {
	ProjectPath
	From string `query:"from" required:"true" doc:"Commit sha or branch"`
	To   string `query:"to" required:"true" doc:"Commit sha or branch"`
}

func (rd *Reader) compare(ctx context.Context, in *compareInput) (*struct{ Body *CompareView }, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	from, err := resolveCommit(repo, in.From, info.DefaultBranch)
	if err != nil || in.From == "" {
		return nil, ErrCommitNotFound
	}
	to, err := resolveCommit(repo, in.To, info.DefaultBranch)
	if err != nil || in.To == "" {
		return nil, ErrCommitNotFound
	}
	out := &CompareView{Commits: []CommitView{}, Diffs: []DiffView{}, CompareSameRef: from.Hash == to.Hash}
	if out.CompareSameRef {
		return &struct{ Body *CompareView }{Body: out}, nil
	}
	commits, diffs, timeout, err := rd.comparison(ctx, info.ID, from, to)
	if err != nil {
		return nil, err
	}
	out.CompareTimeout, out.Diffs = timeout, diffs
	for _, c := range commits {
		out.Commits = append(out.Commits, commitView(c))
	}
	if len(commits) > 0 {
		last := commitView(to)
		out.Commit = &last
	}
	return &struct{ Body *CompareView }{Body: out}, nil
}
