package internal

// The HTTP adapter of releases.go: routes, request inputs, GitLab views and
// status codes; the service side stays in releases.go.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

func (w *Writer) release(ctx context.Context, in *releaseInput, create bool) (*struct{ Body *ReleaseView }, error) {
	desc := in.Body.Description
	if err := w.SetReleaseNotes(ctx, in.ID, in.Tag, desc, create); err != nil {
		return nil, err
	}
	return &struct{ Body *ReleaseView }{Body: &ReleaseView{TagName: in.Tag, Description: &desc}}, nil
}

// ReleaseDetail is GitLab's Release resource. Milestones are not kept (the
// issues module, which has them, stands above this one), so the key is
// absent, as GitLab leaves it out for a release without milestones; there
// is no description_html (Fennec renders no Markdown).
type ReleaseDetail struct {
	Name            string              `json:"name"`
	TagName         string              `json:"tag_name"`
	Description     *string             `json:"description"`
	CreatedAt       api.Time            `json:"created_at"`
	ReleasedAt      api.Time            `json:"released_at"`
	Author          *identity.BasicUser `json:"author,omitempty"`
	Commit          *CommitView         `json:"commit"`
	UpcomingRelease bool                `json:"upcoming_release"`
	CommitPath      string              `json:"commit_path,omitempty"`
	TagPath         string              `json:"tag_path"`
	Assets          ReleaseAssets       `json:"assets"`
	Links           ReleaseURLs         `json:"_links"`
}

func (w *Writer) releaseView(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, r *Release, links []*ReleaseLink) (ReleaseDetail, error) {
	tag := r.TagName
	v := ReleaseDetail{Name: r.Name, TagName: tag, Description: r.Description,
		TagPath: "/" + info.PathWithNamespace + "/-/tags/" + url.PathEscape(tag)}
	if v.Name == "" {
		v.Name = tag
	}
	var c *object.Commit
	if r.SHA != "" {
		c, _ = repo.CommitObject(plumbing.NewHash(r.SHA))
	}
	if c == nil {
		c = tagCommit(repo, tag)
	}
	created, released := r.CreatedAt, r.ReleasedAt
	if c != nil {
		cv := commitView(c)
		v.Commit = &cv
		v.CommitPath = "/" + info.PathWithNamespace + "/-/commit/" + c.Hash.String()
		if created.IsZero() {
			created = c.Committer.When
		}
	}
	if released.IsZero() {
		released = created
	}
	v.CreatedAt, v.ReleasedAt = api.NewTime(created.UTC()), api.NewTime(released.UTC())
	v.UpcomingRelease = released.After(time.Now())
	if r.AuthorID != 0 {
		base := api.ExternalURLFrom(ctx)
		u, err := w.users.UserByID(ctx, r.AuthorID)
		var bu identity.BasicUser
		switch {
		case errors.Is(err, auth.ErrUserNotFound):
			bu = identity.GhostUser(base, r.AuthorID)
		case err != nil:
			return v, err
		default:
			bu = identity.NewBasicUser(base, u)
		}
		v.Author = &bu
	}
	// The archives through the API's archive endpoint (GitLab links its
	// web routes, /-/archive/..., which Fennec does not serve): a client
	// that downloads a source gets the archive.
	archive := api.ExternalURLFrom(ctx) + api.Prefix + "/projects/" + store.IDString(info.ID) + "/repository/archive."
	v.Assets.Sources = make([]ReleaseSource, 0, len(sourceFormats))
	for _, f := range sourceFormats {
		v.Assets.Sources = append(v.Assets.Sources, ReleaseSource{Format: f, URL: archive + f + "?sha=" + url.QueryEscape(tag)})
	}
	v.Assets.Links = make([]ReleaseLinkView, 0, len(links))
	for _, l := range links {
		v.Assets.Links = append(v.Assets.Links, linkView(info, l))
	}
	v.Assets.Count = len(v.Assets.Sources) + len(v.Assets.Links)
	v.Links.Self = info.WebURL + "/-/releases/" + url.PathEscape(tag)
	return v, nil
}

type listReleasesInput struct {
	ProjectPath
	api.PageParams
	OrderBy string `query:"order_by" enum:"released_at,created_at" doc:"released_at (default) or created_at"`
	Sort    string `query:"sort" enum:"asc,desc" doc:"desc (default) or asc"`
}

type releasesOutput struct {
	api.PageHeaders
	Body []ReleaseDetail
}

type createReleaseInput struct {
	ProjectPath
	Body struct {
		TagName     string    `json:"tag_name" required:"true"`
		Name        *string   `json:"name,omitempty"`
		Description *string   `json:"description,omitempty"`
		Ref         string    `json:"ref,omitempty" doc:"The commit, branch or tag to tag when tag_name does not exist"`
		TagMessage  *string   `json:"tag_message,omitempty" doc:"The message of the annotated tag made from ref"`
		ReleasedAt  *api.Time `json:"released_at,omitempty"`
		Assets      struct {
			Links []releaseLinkInput `json:"links,omitempty"`
		} `json:"assets,omitempty"`
	}
}

type updateReleaseInput struct {
	ProjectPath
	Tag  string `path:"tag_name"`
	Body struct {
		Name        *string   `json:"name,omitempty"`
		Description *string   `json:"description,omitempty"`
		ReleasedAt  *api.Time `json:"released_at,omitempty"`
	}
}

func (w *Writer) listReleases(ctx context.Context, in *listReleasesInput) (*releasesOutput, error) {
	info, repo, err := w.rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	var all []*Release
	err = w.db.View(ctx, func(tx *store.Tx) error {
		ids, err := releases.IDsBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			r, err := releases.Get(tx, id)
			if err != nil {
				return err
			}
			all = append(all, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A project has tens or hundreds of releases: sorting them all is
	// cheap, and 9.x releases have no times of their own (their commit's
	// date stands in), which a stored order could not know.
	key := func(r *Release) time.Time {
		t := r.ReleasedAt
		if in.OrderBy == "created_at" || t.IsZero() {
			t = r.CreatedAt
		}
		if t.IsZero() {
			if c := tagCommit(repo, r.TagName); c != nil {
				t = c.Committer.When
			}
		}
		return t
	}
	keys := make(map[int64]time.Time, len(all))
	for _, r := range all {
		keys[r.ID] = key(r)
	}
	slices.SortStableFunc(all, func(a, b *Release) int {
		c := keys[a.ID].Compare(keys[b.ID])
		if c == 0 {
			c = int(a.ID) - int(b.ID)
		}
		if in.Sort != "asc" {
			c = -c
		}
		return c
	})
	out := &releasesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(all)), Body: []ReleaseDetail{}}
	for _, r := range api.Window(all, in.PageParams) {
		var links []*ReleaseLink
		if err := w.db.View(ctx, func(tx *store.Tx) error {
			var err error
			links, err = linksOf(tx, r.ID)
			return err
		}); err != nil {
			return nil, err
		}
		v, err := w.releaseView(ctx, info, repo, r, links)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

// latestRelease is the release released last. GitLab answers with a
// redirect to that release's path; the release itself is what a client
// following it reads.
func (w *Writer) latestRelease(ctx context.Context, in *latestReleaseInput) (*releaseOutput, error) {
	list, err := w.listReleases(ctx, &listReleasesInput{ProjectPath: in.ProjectPath, PageParams: api.PageParams{Page: 1, PerPage: 1}})
	if err != nil {
		return nil, err
	}
	if len(list.Body) == 0 {
		return nil, api.NotFound("")
	}
	return &releaseOutput{Body: &list.Body[0]}, nil
}

func (w *Writer) getRelease(ctx context.Context, in *releaseTagInput) (*releaseOutput, error) {
	info, repo, err := w.rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	r, links, err := w.releaseAt(ctx, info.ID, in.Tag)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, api.NotFound("")
	}
	v, err := w.releaseView(ctx, info, repo, r, links)
	if err != nil {
		return nil, err
	}
	return &releaseOutput{Body: &v}, nil
}

func (w *Writer) createRelease(ctx context.Context, in *createReleaseInput) (*releaseOutput, error) {
	b := in.Body
	f := newReleaseFields{TagName: b.TagName, Name: b.Name, Description: b.Description, Ref: b.Ref, TagMessage: b.TagMessage}
	if b.ReleasedAt != nil {
		t := time.Time(*b.ReleasedAt)
		f.ReleasedAt = &t
	}
	for _, l := range b.Assets.Links {
		f.Links = append(f.Links, linkFields{Name: l.Name, URL: l.URL, LinkType: l.LinkType})
	}
	st, err := w.CreateRelease(ctx, in.ID, f)
	if err != nil {
		return nil, err
	}
	return w.releaseOut(ctx, st)
}

// releaseOut renders the release a command left.
func (w *Writer) releaseOut(ctx context.Context, st releaseState) (*releaseOutput, error) {
	v, err := w.releaseView(ctx, st.Info, st.Repo, st.Release, st.Links)
	if err != nil {
		return nil, err
	}
	return &releaseOutput{Body: &v}, nil
}

func (w *Writer) updateRelease(ctx context.Context, in *updateReleaseInput) (*releaseOutput, error) {
	b := in.Body
	ch := releaseChange{Name: b.Name, Description: b.Description}
	if b.ReleasedAt != nil {
		t := time.Time(*b.ReleasedAt)
		ch.ReleasedAt = &t
	}
	st, err := w.UpdateRelease(ctx, in.ID, in.Tag, ch)
	if err != nil {
		return nil, err
	}
	return w.releaseOut(ctx, st)
}

type listLinksInput struct {
	ProjectPath
	api.PageParams
	Tag string `path:"tag_name"`
}

type linksOutput struct {
	api.PageHeaders
	Body []ReleaseLinkView
}

func (w *Writer) listLinks(ctx context.Context, in *listLinksInput) (*linksOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	var links []*ReleaseLink
	err = w.db.View(ctx, func(tx *store.Tx) error {
		r, err := linkRelease(tx, info.ID, in.Tag)
		if err != nil {
			return err
		}
		links, err = linksOf(tx, r.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &linksOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(links)), Body: []ReleaseLinkView{}}
	for _, l := range api.Window(links, in.PageParams) {
		out.Body = append(out.Body, linkView(info, l))
	}
	return out, nil
}

func (w *Writer) updateLink(ctx context.Context, in *updateLinkInput) (*linkOutput, error) {
	b := in.Body
	info, l, err := w.UpdateReleaseLink(ctx, in.ID, in.Tag, in.LinkID, linkChange{Name: b.Name, URL: b.URL, LinkType: b.LinkType})
	if err != nil {
		return nil, err
	}
	v := linkView(info, l)
	return &linkOutput{Body: &v}, nil
}

func (w *Writer) registerReleases(a *api.API) {
	tags := []string{"releases"}
	base := "/projects/{id}/releases"
	api.Register(a, api.Op{ID: "list-releases", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "Releases, newest released first", Access: api.Public}, w.listReleases)
	api.Register(a, api.Op{ID: "latest-release", Method: http.MethodGet, Path: base + "/permalink/latest", Tags: tags,
		Summary: "The release released last", Access: api.Public}, w.latestRelease)
	api.Register(a, api.Op{ID: "get-release", Method: http.MethodGet, Path: base + "/{tag_name}", Tags: tags,
		Summary: "The release of a tag", Access: api.Public}, w.getRelease)
	api.Register(a, api.Op{ID: "create-project-release", Method: http.MethodPost, Path: base, Tags: tags,
		Summary: "Create a release (and its tag from ref when the tag does not exist)", Access: api.SignedIn}, w.createRelease)
	api.Register(a, api.Op{ID: "update-project-release", Method: http.MethodPut, Path: base + "/{tag_name}", Tags: tags,
		Summary: "Change a release", Access: api.SignedIn}, w.updateRelease)
	api.Register(a, api.Op{ID: "delete-release", Method: http.MethodDelete, Path: base + "/{tag_name}", Tags: tags, Status: http.StatusOK,
		Summary: "Delete a release (not its tag); answers with the release", Access: api.SignedIn}, w.deleteReleaseAPI)
	links := base + "/{tag_name}/assets/links"
	api.Register(a, api.Op{ID: "list-release-links", Method: http.MethodGet, Path: links, Tags: tags,
		Summary: "A release's links, newest first", Access: api.Public}, w.listLinks)
	api.Register(a, api.Op{ID: "get-release-link", Method: http.MethodGet, Path: links + "/{link_id}", Tags: tags,
		Summary: "A release link", Access: api.Public}, w.getLink)
	api.Register(a, api.Op{ID: "create-release-link", Method: http.MethodPost, Path: links, Tags: tags,
		Summary: "Add a link to a release", Access: api.SignedIn}, w.createLink)
	api.Register(a, api.Op{ID: "update-release-link", Method: http.MethodPut, Path: links + "/{link_id}", Tags: tags,
		Summary: "Change a release link", Access: api.SignedIn}, w.updateLink)
	api.Register(a, api.Op{ID: "delete-release-link", Method: http.MethodDelete, Path: links + "/{link_id}", Tags: tags, Status: http.StatusOK,
		Summary: "Delete a release link; answers with the link", Access: api.SignedIn}, w.deleteLink)
}

type releaseInput struct {
	ProjectPath
	Tag  string `path:"tag_name"`
	Body struct {
		Description string `json:"description" required:"true"`
	}
}

// releaseLinkInput is one link, of a new release or by itself.
type releaseLinkInput struct {
	Name     string `json:"name" required:"true"`
	URL      string `json:"url" required:"true"`
	LinkType string `json:"link_type,omitempty" enum:"other,runbook,image,package" doc:"other (default), runbook, image or package"`
}

type releaseTagInput struct {
	ProjectPath
	Tag string `path:"tag_name"`
}

type releaseOutput struct {
	Body *ReleaseDetail
}

type latestReleaseInput struct {
	ProjectPath
}

// deleteRelease deletes a release, not its tag, and answers with it.
func (w *Writer) deleteReleaseAPI(ctx context.Context, in *releaseTagInput) (*releaseOutput, error) {
	st, err := w.DeleteRelease(ctx, in.ID, in.Tag)
	if err != nil {
		return nil, err
	}
	return w.releaseOut(ctx, st)
}

type linkInput struct {
	ProjectPath
	Tag    string `path:"tag_name"`
	LinkID int64  `path:"link_id"`
}

type createLinkInput struct {
	ProjectPath
	Tag  string `path:"tag_name"`
	Body releaseLinkInput
}

type updateLinkInput struct {
	ProjectPath
	Tag    string `path:"tag_name"`
	LinkID int64  `path:"link_id"`
	Body   struct {
		Name     *string `json:"name,omitempty"`
		URL      *string `json:"url,omitempty"`
		LinkType string  `json:"link_type,omitempty" enum:"other,runbook,image,package"`
	}
}

type linkOutput struct {
	Body *ReleaseLinkView
}

func (w *Writer) getLink(ctx context.Context, in *linkInput) (*linkOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	var l *ReleaseLink
	err = w.db.View(ctx, func(tx *store.Tx) error {
		var err error
		_, l, err = linkOf(tx, info.ID, in.Tag, in.LinkID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := linkView(info, l)
	return &linkOutput{Body: &v}, nil
}

func (w *Writer) createLink(ctx context.Context, in *createLinkInput) (*linkOutput, error) {
	b := in.Body
	info, l, err := w.CreateReleaseLink(ctx, in.ID, in.Tag, linkFields{Name: b.Name, URL: b.URL, LinkType: b.LinkType})
	if err != nil {
		return nil, err
	}
	v := linkView(info, l)
	return &linkOutput{Body: &v}, nil
}

func (w *Writer) deleteLink(ctx context.Context, in *linkInput) (*linkOutput, error) {
	info, l, err := w.DeleteReleaseLink(ctx, in.ID, in.Tag, in.LinkID)
	if err != nil {
		return nil, err
	}
	v := linkView(info, l)
	return &linkOutput{Body: &v}, nil
}

func (w *Writer) attachRelease(ctx context.Context, project int64, v *TagView) {
	if rel := w.releaseOf(ctx, project, v.Name); rel != nil {
		v.Release = &ReleaseView{TagName: rel.TagName, Description: rel.Description}
	}
}
