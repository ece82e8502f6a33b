package internal

// The HTTP adapter of read.go: routes, request inputs, GitLab views and
// status codes; the service side stays in read.go.

import (
	"context"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

// RoutesDeps are what NewRoutes is built from.
type RoutesDeps struct {
	fennec.In
	Reader   *Reader
	Statuses *Statuses
	Writer   *Writer
}

// NewRoutes registers the repository operations. The reader learns of the
// statuses and the writer here: they decorate what it reads (a commit's
// status, a branch's protection, a tag's release).
func NewRoutes(d RoutesDeps) fennec.Routes {
	r, st, w := d.Reader, d.Statuses, d.Writer
	r.statuses, r.writer = st, w
	return fennec.Routes{Name: "repository", Register: func(a *api.API) {
		mapErrors(a)
		r.register(a)
		st.register(a)
		w.register(a)
		w.registerRevert(a)
	}}
}

// CommitView is the commit resource.
type CommitView struct {
	ID             string      `json:"id"`
	ShortID        string      `json:"short_id"`
	Title          string      `json:"title"`
	CreatedAt      api.GitTime `json:"created_at"`
	ParentIDs      []string    `json:"parent_ids"`
	Message        string      `json:"message"`
	AuthorName     string      `json:"author_name"`
	AuthorEmail    string      `json:"author_email"`
	AuthoredDate   api.GitTime `json:"authored_date"`
	CommitterName  string      `json:"committer_name"`
	CommitterEmail string      `json:"committer_email"`
	CommittedDate  api.GitTime `json:"committed_date"`
}

func commitView(c *object.Commit) CommitView {
	title, _, _ := strings.Cut(c.Message, "\n")
	v := CommitView{
		ID: c.Hash.String(), ShortID: c.Hash.String()[:8], Title: strings.TrimRight(title, "\r"),
		CreatedAt: api.GitTime(c.Committer.When), Message: c.Message, ParentIDs: []string{},
		AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, AuthoredDate: api.GitTime(c.Author.When),
		CommitterName: c.Committer.Name, CommitterEmail: c.Committer.Email, CommittedDate: api.GitTime(c.Committer.When),
	}
	for _, p := range c.ParentHashes {
		v.ParentIDs = append(v.ParentIDs, p.String())
	}
	return v
}

type treeInput struct {
	ProjectPath
	api.PageParams
	Path      string `query:"path" doc:"A subdirectory"`
	Ref       string `query:"ref" doc:"Branch, tag or commit; default branch when empty"`
	Recursive bool   `query:"recursive"`
}

type treeOutput struct {
	api.PageHeaders
	Body []TreeEntry
}

func (rd *Reader) tree(ctx context.Context, in *treeInput) (*treeOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	notFound := api.NotFound("Tree")
	dir, ok := cleanTreePath(in.Path)
	if !ok {
		return nil, notFound
	}
	c, err := resolveCommit(repo, in.Ref, info.DefaultBranch)
	if err != nil {
		return nil, notFound
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	if dir != "" {
		if t, err = t.Tree(dir); err != nil {
			return nil, notFound
		}
	}
	entries, err := listTree(repo, t, dir, in.Recursive)
	if err != nil {
		return nil, err
	}
	return &treeOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(entries)), Body: nonNil(api.Window(entries, in.PageParams))}, nil
}

// listTree lists the entries of tree t (the directory dir of a commit),
// directories first, then files, each in git's (byte) order; recursive
// descends into subdirectories. The API's tree and the Files page share it.
func listTree(repo *git.Repository, t *object.Tree, dir string, recursive bool) ([]TreeEntry, error) {
	var entries []TreeEntry
	var walk func(t *object.Tree, prefix string) error
	walk = func(t *object.Tree, prefix string) error {
		// Directories first, then files, each in git's (byte) order.
		sorted := append([]object.TreeEntry(nil), t.Entries...)
		sort.SliceStable(sorted, func(i, j int) bool {
			di, dj := sorted[i].Mode == filemode.Dir, sorted[j].Mode == filemode.Dir
			if di != dj {
				return di
			}
			return sorted[i].Name < sorted[j].Name
		})
		for _, e := range sorted {
			typ := "blob"
			switch e.Mode {
			case filemode.Dir:
				typ = "tree"
			case filemode.Submodule:
				typ = "commit"
			}
			p := path.Join(prefix, e.Name)
			entries = append(entries, TreeEntry{ID: e.Hash.String(), Name: e.Name, Type: typ, Path: p, Mode: modeOf(e.Mode)})
			if recursive && e.Mode == filemode.Dir {
				sub, err := repo.TreeObject(e.Hash)
				if err != nil {
					return err
				}
				if err := walk(sub, p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(t, dir); err != nil {
		return nil, err
	}
	return entries, nil
}

type commitsInput struct {
	ProjectPath
	api.PageParams
	RefName string `query:"ref_name"`
	Since   string `query:"since"`
	Until   string `query:"until"`
	Path    string `query:"path"`
	All     bool   `query:"all" doc:"Every branch's and tag's history (ref_name is then ignored)"`
}

type commitsOutput struct {
	api.PageHeaders
	Body []CommitView
}

func (rd *Reader) commits(ctx context.Context, in *commitsInput) (*commitsOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	var since, until *time.Time
	if in.Since != "" {
		t, err := api.ParseTime(in.Since)
		if err != nil {
			return nil, api.Invalid("since")
		}
		since = &t
	}
	if in.Until != "" {
		t, err := api.ParseTime(in.Until)
		if err != nil {
			return nil, api.Invalid("until")
		}
		until = &t
	}
	file, ok := cleanTreePath(in.Path)
	if !ok {
		return nil, api.Invalid("path")
	}
	var iter object.CommitIter
	if in.All {
		if iter, err = allRefsLog(repo); err != nil {
			return nil, err
		}
		if file != "" {
			iter = newPathCommitIter(repo, iter, file)
		}
		if since != nil || until != nil {
			iter = object.NewCommitLimitIterFromIter(iter, object.LogLimitOptions{Since: since, Until: until})
		}
	} else {
		c, err := resolveCommit(repo, in.RefName, info.DefaultBranch)
		if err != nil {
			// An empty repository or an unknown ref has no commits.
			return &commitsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, 0), Body: []CommitView{}}, nil
		}
		if iter, err = refLog(repo, c, file, since, until); err != nil {
			return nil, err
		}
	}
	page, more, err := logPage(iter, in.Offset(), in.Limit())
	if err != nil {
		return nil, err
	}
	out := make([]CommitView, 0, len(page))
	for _, c := range page {
		out = append(out, commitView(c))
	}
	return &commitsOutput{PageHeaders: api.PaginateOpen(ctx, in.PageParams, more), Body: out}, nil
}

type listInput struct {
	ProjectPath
	api.PageParams
}

type branchesOutput struct {
	api.PageHeaders
	Body []BranchView
}

func (rd *Reader) branches(ctx context.Context, in *listInput) (*branchesOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	refs, err := sortedBranches(repo)
	if err != nil {
		return nil, err
	}
	out, err := rd.branchViews(ctx, info, repo, api.Window(refs, in.PageParams))
	if err != nil {
		return nil, err
	}
	return &branchesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(refs)), Body: out}, nil
}

// sortedBranches are a repository's branches by name.
func sortedBranches(repo *git.Repository) ([]*plumbing.Reference, error) {
	iter, err := repo.Branches()
	if err != nil {
		return nil, err
	}
	var refs []*plumbing.Reference
	_ = iter.ForEach(func(r *plumbing.Reference) error { refs = append(refs, r); return nil })
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name().Short() < refs[j].Name().Short() })
	return refs, nil
}

// branchViews are the branches refs with their commits, and their
// protection when the module writes (the API's branches and the
// branches page).
func (rd *Reader) branchViews(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, refs []*plumbing.Reference) ([]BranchView, error) {
	out := []BranchView{}
	for _, r := range refs {
		v, err := rd.branchView(repo, r.Name().Short(), r.Hash())
		if err != nil {
			return nil, err
		}
		if rd.writer != nil {
			rd.writer.decorate(ctx, info, repo, &v)
		}
		out = append(out, v)
	}
	return out, nil
}

// sortedTags are a repository's tags by name in reverse alphabetical
// order, as the spec lists them.
func sortedTags(repo *git.Repository) ([]*plumbing.Reference, error) {
	iter, err := repo.Tags()
	if err != nil {
		return nil, err
	}
	var refs []*plumbing.Reference
	_ = iter.ForEach(func(r *plumbing.Reference) error { refs = append(refs, r); return nil })
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name().Short() > refs[j].Name().Short() })
	return refs, nil
}

// tagViews are the tags refs with their commits and releases; a tag of a
// non-commit object is left out.
func (rd *Reader) tagViews(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, refs []*plumbing.Reference) []TagView {
	out := []TagView{}
	for _, r := range refs {
		v, err := tagView(repo, r)
		if err != nil {
			continue // a tag of a non-commit object: not shown
		}
		if rd.writer != nil {
			rd.writer.attachRelease(ctx, info.ID, &v)
		}
		out = append(out, v)
	}
	return out
}

type tagsOutput struct {
	api.PageHeaders
	Body []TagView
}

func (rd *Reader) tags(ctx context.Context, in *listInput) (*tagsOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	refs, err := sortedTags(repo)
	if err != nil {
		return nil, err
	}
	out := rd.tagViews(ctx, info, repo, api.Window(refs, in.PageParams))
	return &tagsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(refs)), Body: out}, nil
}

func (rd *Reader) register(a *api.API) {
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "repository-tree", Method: http.MethodGet, Path: "/projects/{id}/repository/tree", Tags: tags,
		Summary: "Files and directories of a tree", Access: api.Public}, rd.tree)
	rd.registerBlobs(a)
	api.Register(a, api.Op{ID: "repository-commits", Method: http.MethodGet, Path: "/projects/{id}/repository/commits", Tags: tags,
		Summary: "Commits of a ref (or of every branch and tag: all=true), newest first", Access: api.Public}, rd.commits)
	api.Register(a, api.Op{ID: "repository-commit", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}", Tags: tags,
		Summary: "A commit with its stats", Access: api.Public}, rd.commit)
	rd.registerDiff(a)
	rd.registerCompare(a)
	rd.registerArchive(a)
	rd.registerContributors(a)
	rd.registerFiles(a)
	rd.registerBlame(a)
	rd.registerMergeBase(a)
	rd.registerCommitRefs(a)
	api.Register(a, api.Op{ID: "repository-branches", Method: http.MethodGet, Path: "/projects/{id}/repository/branches", Tags: tags,
		Summary: "Branches", Access: api.Public}, rd.branches)
	api.Register(a, api.Op{ID: "repository-branch", Method: http.MethodGet, Path: "/projects/{id}/repository/branches/{branch}", Tags: tags,
		Summary: "A branch", Access: api.Public}, rd.branch)
	api.Register(a, api.Op{ID: "repository-tags", Method: http.MethodGet, Path: "/projects/{id}/repository/tags", Tags: tags,
		Summary: "Tags, by name in reverse order", Access: api.Public}, rd.tags)
	api.Register(a, api.Op{ID: "repository-tag", Method: http.MethodGet, Path: "/projects/{id}/repository/tags/{tag_name}", Tags: tags,
		Summary: "A tag", Access: api.Public}, rd.tag)
}

// ProjectPath is a project's :id.
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

type commitInput struct {
	ProjectPath
	SHA string `path:"sha" doc:"Commit sha, branch or tag"`
}

func (rd *Reader) commit(ctx context.Context, in *commitInput) (*struct{ Body *CommitDetail }, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	d, err := rd.detailOf(ctx, info.ID, c)
	if err != nil {
		return nil, err
	}
	if rd.statuses != nil {
		if list, err := rd.statuses.forCommit(ctx, info.ID, c.Hash.String()); err == nil {
			d.Status = combined(list)
		}
	}
	return &struct{ Body *CommitDetail }{Body: d}, nil
}

type branchInput struct {
	ProjectPath
	Branch string `path:"branch"`
}

func (rd *Reader) branch(ctx context.Context, in *branchInput) (*struct{ Body *BranchView }, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	r, err := branchRef(repo, in.Branch)
	if err != nil {
		return nil, ErrBranchNotFound
	}
	v, err := rd.branchView(repo, in.Branch, r.Hash())
	if err != nil {
		return nil, err
	}
	if rd.writer != nil {
		rd.writer.decorate(ctx, info, repo, &v)
	}
	return &struct{ Body *BranchView }{Body: &v}, nil
}

type tagInput struct {
	ProjectPath
	Tag string `path:"tag_name"`
}

func (rd *Reader) tag(ctx context.Context, in *tagInput) (*struct{ Body *TagView }, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	r, err := tagRef(repo, in.Tag)
	if err != nil {
		return nil, ErrTagNotFound
	}
	v, err := tagView(repo, r)
	if err != nil {
		return nil, ErrTagNotFound
	}
	if rd.writer != nil {
		rd.writer.attachRelease(ctx, info.ID, &v)
	}
	return &struct{ Body *TagView }{Body: &v}, nil
}
