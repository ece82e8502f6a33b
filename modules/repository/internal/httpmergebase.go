package internal

// The merge-base endpoint: the common ancestor of two or more revisions.

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

// mergeBase answers GET /projects/:id/repository/merge_base: the best
// common ancestor of the refs, as `git merge-base a b c...` finds it (the
// first ref against a merge of all the others: the newest of the best
// common ancestors of the first with each other one, keeping only those no
// other is a descendant of).
//
// GITLAB-FACTS: GitLab's documentation gives only the success; its API
// answers 400 "Provide at least 2 refs" for fewer than two, 400 "Could not
// find ref: a" (refs: "Could not find refs: a, b") for refs that name no
// commit, and 404 "Merge Base Not Found" for unrelated histories. We
// answer the same.
func (rd *Reader) mergeBase(ctx context.Context, in *mergeBaseInput) (*struct{ Body *CommitView }, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	if len(in.Refs) < 2 {
		return nil, api.BadRequest("Provide at least 2 refs")
	}
	var commits []*object.Commit
	var unknown []string
	for _, ref := range in.Refs {
		c, err := resolveCommit(repo, ref, info.DefaultBranch)
		if err != nil || ref == "" {
			unknown = append(unknown, ref)
			continue
		}
		commits = append(commits, c)
	}
	if len(unknown) == 1 {
		return nil, api.BadRequest("Could not find ref: " + unknown[0])
	}
	if len(unknown) > 1 {
		return nil, api.BadRequest("Could not find refs: " + strings.Join(unknown, ", "))
	}
	var candidates []*object.Commit
	for _, other := range commits[1:] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bases, err := commits[0].MergeBase(other)
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, bases...)
	}
	// Every common ancestor of the first and the merge of the others lies
	// below a best base of the first with one of them: the best of those
	// bases are the answer.
	best, err := object.Independents(candidates)
	if err != nil {
		return nil, err
	}
	if len(best) == 0 {
		return nil, api.NotFound("Merge Base")
	}
	v := commitView(best[0]) // newest first
	return &struct{ Body *CommitView }{Body: &v}, nil
}

func (rd *Reader) registerMergeBase(a *api.API) {
	api.Register(a, api.Op{ID: "repository-merge-base", Method: http.MethodGet, Path: "/projects/{id}/repository/merge_base",
		Tags: []string{"repository"}, Summary: "The common ancestor of two or more refs", Access: api.Public}, rd.mergeBase)
}

type mergeBaseInput struct {
	ProjectPath
	Refs []string `query:"refs" required:"true" doc:"Two or more commit ids, branches or tags: refs[]=a&refs[]=b (or refs=a,b)"`
}
