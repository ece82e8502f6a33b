package internal

// The HTTP adapter of commitrefs.go: routes, request inputs, GitLab views and
// status codes; the service side stays in commitrefs.go.

import (
	"context"
	"net/http"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

type commitRefsInput struct {
	ProjectPath
	api.PageParams
	SHA  string `path:"sha" doc:"Commit sha, branch or tag"`
	Type string `query:"type" enum:"branch,tag,all," doc:"Default all"`
}

type commitRefsOutput struct {
	api.PageHeaders
	Body []CommitRef
}

func (rd *Reader) commitRefs(ctx context.Context, in *commitRefsInput) (*commitRefsOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	objs, err := rd.store.Objects(info.ID)
	if err != nil {
		return nil, err
	}
	type tip struct {
		ref  CommitRef
		hash plumbing.Hash
	}
	var tips []tip
	collect := func(kind string, iter interface {
		ForEach(func(*plumbing.Reference) error) error
	}, err error) error {
		if err != nil {
			return err
		}
		var kinds []tip
		err = iter.ForEach(func(r *plumbing.Reference) error {
			h, err := peelHash(objs, r.Hash())
			if err != nil {
				return nil // a ref to something that is no commit holds none
			}
			kinds = append(kinds, tip{CommitRef{Type: kind, Name: r.Name().Short()}, h})
			return nil
		})
		sort.Slice(kinds, func(i, j int) bool { return kinds[i].ref.Name < kinds[j].ref.Name })
		tips = append(tips, kinds...)
		return err
	}
	if in.Type != "tag" {
		iter, err := repo.Branches()
		if err := collect("branch", iter, err); err != nil {
			return nil, err
		}
	}
	if in.Type != "branch" {
		iter, err := repo.Tags()
		if err := collect("tag", iter, err); err != nil {
			return nil, err
		}
	}
	reach, err := newReachability(ctx, objs.Read, c.Hash)
	if err != nil {
		return nil, err
	}
	out := []CommitRef{}
	for _, t := range tips {
		ok, err := reach.from(t.hash)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t.ref)
		}
	}
	return &commitRefsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(out)), Body: nonNil(api.Window(out, in.PageParams))}, nil
}

func (rd *Reader) registerCommitRefs(a *api.API) {
	api.Register(a, api.Op{ID: "repository-commit-refs", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/refs",
		Tags: []string{"repository"}, Summary: "The branches and tags that contain a commit", Access: api.Public}, rd.commitRefs)
}
