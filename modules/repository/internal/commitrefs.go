package internal

import (
	"context"
	"net/http"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

// GET /projects/:id/repository/commits/:sha/refs: the branches and tags
// whose history holds a commit (`git branch --contains`, `git tag
// --contains`), branches first, each by name.

// CommitRef is one branch or tag that holds a commit.
type CommitRef struct {
	Type string `json:"type" enum:"branch,tag"`
	Name string `json:"name"`
}

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

// reachability answers "does this commit's history hold target?" for many
// tips, remembering what each walk learnt, so that refs sharing history
// are walked once. Like isAncestor it does not follow commits older than
// the target (with a day's slack for clock skew).
type reachability struct {
	ctx    context.Context
	read   readFunc
	target plumbing.Hash
	cutoff int64
	known  map[plumbing.Hash]bool // finished commits: do they reach target
}

func newReachability(ctx context.Context, read readFunc, target plumbing.Hash) (*reachability, error) {
	c, err := readCommit(read, target)
	if err != nil {
		return nil, err
	}
	return &reachability{ctx: ctx, read: read, target: target, cutoff: c.committer.when - 86400,
		known: map[plumbing.Hash]bool{target: true}}, nil
}

// from reports whether target is in the history of tip. The walk is a
// depth-first search kept on an explicit stack (histories are deeper than
// goroutine stacks like): a commit is known once all its parents are; on
// reaching target, every commit on the stack is known to reach it.
func (r *reachability) from(tip plumbing.Hash) (bool, error) {
	type frame struct {
		hash    plumbing.Hash
		parents []plumbing.Hash
		next    int
	}
	if ok, done := r.known[tip]; done {
		return ok, nil
	}
	var stack []*frame
	push := func(h plumbing.Hash) error {
		c, err := readCommit(r.read, h)
		if err != nil {
			return err
		}
		if c.committer.when < r.cutoff {
			r.known[h] = false
			return nil
		}
		stack = append(stack, &frame{hash: h, parents: c.parents})
		return nil
	}
	if err := push(tip); err != nil {
		return false, err
	}
	for steps := 0; len(stack) > 0; steps++ {
		if steps%1024 == 0 {
			if err := r.ctx.Err(); err != nil {
				return false, err
			}
		}
		f := stack[len(stack)-1]
		if f.next == len(f.parents) {
			r.known[f.hash] = false
			stack = stack[:len(stack)-1]
			continue
		}
		p := f.parents[f.next]
		f.next++
		ok, done := r.known[p]
		if !done {
			if err := push(p); err != nil {
				return false, err
			}
			continue
		}
		if ok {
			for _, g := range stack {
				r.known[g.hash] = true
			}
			return true, nil
		}
	}
	return r.known[tip], nil
}

func (rd *Reader) registerCommitRefs(a *api.API) {
	api.Register(a, api.Op{ID: "repository-commit-refs", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/refs",
		Tags: []string{"repository"}, Summary: "The branches and tags that contain a commit", Access: api.Public}, rd.commitRefs)
}
