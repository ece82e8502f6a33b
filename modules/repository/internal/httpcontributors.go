package internal

// The HTTP adapter of contributors.go: routes, request inputs, GitLab views and
// status codes; the service side stays in contributors.go.

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

type contributorsOutput struct {
	api.PageHeaders
	Body []ContributorView
}

// contributors counts the commits, added and deleted lines of each author
// (by e-mail, case-insensitive) on the default branch, most commits first.
// It walks the whole history and diffs every commit: fine for the sizes a
// single node serves today; a cache keyed by the branch head is the next
// step for very large repositories.
func (rd *Reader) contributors(ctx context.Context, in *listInput) (*contributorsOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	head, err := resolveCommit(repo, "", info.DefaultBranch)
	if err != nil {
		return &contributorsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, 0), Body: []ContributorView{}}, nil
	}
	iter, err := repo.Log(&git.LogOptions{From: head.Hash})
	if err != nil {
		return nil, err
	}
	objs, err := rd.store.Objects(info.ID)
	if err != nil {
		return nil, err
	}
	byEmail := map[string]*ContributorView{}
	err = iter.ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := strings.ToLower(c.Author.Email)
		v := byEmail[key]
		if v == nil {
			v = &ContributorView{Name: c.Author.Name, Email: c.Author.Email}
			byEmail[key] = v
		}
		v.Commits++
		if c.NumParents() <= 1 { // merges add no lines of their own
			if st, err := commitStats(ctx, objs, c); err == nil {
				v.Additions += st.Additions
				v.Deletions += st.Deletions
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	list := make([]ContributorView, 0, len(byEmail))
	for _, v := range byEmail {
		list = append(list, *v)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Commits != list[j].Commits {
			return list[i].Commits > list[j].Commits
		}
		return list[i].Email < list[j].Email
	})
	return &contributorsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: api.Window(list, in.PageParams)}, nil
}

func (rd *Reader) registerContributors(a *api.API) {
	api.Register(a, api.Op{ID: "repository-contributors", Method: http.MethodGet, Path: "/projects/{id}/repository/contributors",
		Tags: []string{"repository"}, Summary: "Contributors of the default branch", Access: api.Public}, rd.contributors)
}
