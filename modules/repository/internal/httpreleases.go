package internal

// The HTTP adapter of releases.go: routes, request inputs, GitLab views and
// status codes; the service side stays in releases.go.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
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

// insertRelease stores a new release, 409 when the tag has one already
// (also when a concurrent request made it first).
func insertRelease(tx *store.Tx, r *Release) error {
	if old, err := releaseByTag(tx, r.ProjectID, r.TagName); err != nil {
		return err
	} else if old != nil {
		return api.Conflict("Release already exists")
	}
	return releases.Insert(tx, r)
}

func (w *Writer) release(ctx context.Context, in *releaseInput, create bool) (*struct{ Body *ReleaseView }, error) {
	info, repo, err := w.rd.open(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	c := tagCommit(repo, in.Tag)
	if c == nil {
		return nil, ErrTagNotFound
	}
	if len(in.Body.Description) > maxReleaseText {
		return nil, api.FieldErrors{"description": {"is too long (maximum is 1048576 characters)"}}
	}
	desc := in.Body.Description
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		rel, err := releaseByTag(tx, info.ID, in.Tag)
		switch {
		case err != nil:
			return err
		case create:
			return insertRelease(tx, newRelease(ctx, info.ID, in.Tag, c.Hash.String(), &desc))
		case rel == nil:
			return api.NotFound("Release")
		default:
			rel.Description = &desc
			return releases.Update(tx, rel)
		}
	})
	if err != nil {
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

func checkReleaseText(name, description *string) error {
	if name != nil && len(*name) > 255 {
		return api.FieldErrors{"name": {"is too long (maximum is 255 characters)"}}
	}
	if description != nil && len(*description) > maxReleaseText {
		return api.FieldErrors{"description": {"is too long (maximum is 1048576 characters)"}}
	}
	return nil
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
	info, repo, err := w.rd.open(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if err := checkReleaseText(b.Name, b.Description); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	links := make([]*ReleaseLink, 0, len(b.Assets.Links))
	for _, l := range b.Assets.Links {
		typ := l.LinkType
		if typ == "" {
			typ = "other"
		}
		links = append(links, &ReleaseLink{ProjectID: info.ID, Name: strings.TrimSpace(l.Name), URL: strings.TrimSpace(l.URL), LinkType: typ, CreatedAt: now})
	}
	if msgs := checkLinks(nil, links); len(msgs) > 0 {
		// GitLab saves the release with its links and reports the
		// record's failure as one sentence.
		return nil, api.BadRequest("Validation failed: Links are invalid: " + strings.Join(msgs, ", "))
	}
	if r, _, err := w.releaseAt(ctx, info.ID, b.TagName); err != nil {
		return nil, err
	} else if r != nil {
		return nil, api.Conflict("Release already exists")
	}
	c := tagCommit(repo, b.TagName)
	if c == nil {
		if strings.TrimSpace(b.Ref) == "" {
			return nil, &api.Error{Status: http.StatusUnprocessableEntity, Message: "Ref is not specified"}
		}
		// The tags API's own rules (names, protected branches it would
		// hide, the target), with its messages; its 405s are a 9.x quirk
		// of that endpoint, and a bad request here.
		tin := &createTagInput{ProjectPath: in.ProjectPath}
		tin.Body.TagName, tin.Body.Ref, tin.Body.Message = b.TagName, b.Ref, b.TagMessage
		if _, err := w.createTag(ctx, tin); err != nil {
			var r *tagRefusal
			if errors.As(err, &r) {
				return nil, &releaseTagRefusal{r.reason}
			}
			return nil, err
		}
		if c = tagCommit(repo, b.TagName); c == nil {
			return nil, ErrTagNotFound
		}
	}
	r := newRelease(ctx, info.ID, b.TagName, c.Hash.String(), b.Description)
	if b.Name != nil && strings.TrimSpace(*b.Name) != "" {
		r.Name = *b.Name
	}
	if b.ReleasedAt != nil {
		r.ReleasedAt = time.Time(*b.ReleasedAt).UTC()
	}
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		if err := insertRelease(tx, r); err != nil {
			return err
		}
		for _, l := range links {
			l.ReleaseID = r.ID
			if err := releaseLinks.Insert(tx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v, err := w.releaseView(ctx, info, repo, r, sortedLinks(links))
	if err != nil {
		return nil, err
	}
	return &releaseOutput{Body: &v}, nil
}

func (w *Writer) updateRelease(ctx context.Context, in *updateReleaseInput) (*releaseOutput, error) {
	info, repo, err := w.rd.open(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if tagCommit(repo, in.Tag) == nil {
		return nil, errTagMissing
	}
	if b.Name == nil && b.Description == nil && b.ReleasedAt == nil {
		return nil, api.BadRequest("params is empty")
	}
	if err := checkReleaseText(b.Name, b.Description); err != nil {
		return nil, err
	}
	var r *Release
	var links []*ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = releaseByTag(tx, info.ID, in.Tag); err != nil {
			return err
		} else if r == nil {
			return errReleaseMissing
		}
		if b.Name != nil {
			r.Name = *b.Name
		}
		if b.Description != nil {
			r.Description = b.Description
		}
		if b.ReleasedAt != nil {
			r.ReleasedAt = time.Time(*b.ReleasedAt).UTC()
		}
		if err := releases.Update(tx, r); err != nil {
			return err
		}
		links, err = linksOf(tx, r.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v, err := w.releaseView(ctx, info, repo, r, links)
	if err != nil {
		return nil, err
	}
	return &releaseOutput{Body: &v}, nil
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

// linkRelease is the release of in's tag; GitLab's find_by_tag! answers a
// missing one with its record-not-found 404.
func linkRelease(tx *store.Tx, project int64, tag string) (*Release, error) {
	r, err := releaseByTag(tx, project, tag)
	if err == nil && r == nil {
		return nil, api.RecordNotFound()
	}
	return r, err
}

// linkOf is a link of release r, 404 when r has no such link.
func linkOf(tx *store.Tx, r *Release, id int64) (*ReleaseLink, error) {
	l, err := releaseLinks.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.ReleaseID != r.ID) {
		return nil, api.RecordNotFound()
	}
	return l, err
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

// linkFailure is GitLab's answer to a link its model refuses: 400 with the
// list of the record's messages.
func linkFailure(msgs []string) error {
	return &api.Error{Status: http.StatusBadRequest, Message: msgs}
}

func (w *Writer) updateLink(ctx context.Context, in *updateLinkInput) (*linkOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if b.Name == nil && b.URL == nil {
		return nil, api.AtLeastOne("name", "url")
	}
	var l *ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		r, err := linkRelease(tx, info.ID, in.Tag)
		if err != nil {
			return err
		}
		if l, err = linkOf(tx, r, in.LinkID); err != nil {
			return err
		}
		if b.Name != nil {
			l.Name = strings.TrimSpace(*b.Name)
		}
		if b.URL != nil {
			l.URL = strings.TrimSpace(*b.URL)
		}
		if b.LinkType != "" {
			l.LinkType = b.LinkType
		}
		others, err := linksOf(tx, r.ID)
		if err != nil {
			return err
		}
		others = slices.DeleteFunc(others, func(o *ReleaseLink) bool { return o.ID == l.ID })
		if msgs := checkLinks(others, []*ReleaseLink{l}); len(msgs) > 0 {
			return linkFailure(msgs)
		}
		return releaseLinks.Update(tx, l)
	})
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
	info, repo, err := w.rd.open(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	if tagCommit(repo, in.Tag) == nil {
		return nil, errTagMissing
	}
	var r *Release
	var links []*ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = releaseByTag(tx, info.ID, in.Tag); err != nil {
			return err
		} else if r == nil {
			return errReleaseMissing
		}
		if links, err = linksOf(tx, r.ID); err != nil {
			return err
		}
		return deleteRelease(tx, r)
	})
	if err != nil {
		return nil, err
	}
	v, err := w.releaseView(ctx, info, repo, r, links)
	if err != nil {
		return nil, err
	}
	return &releaseOutput{Body: &v}, nil
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
		r, err := linkRelease(tx, info.ID, in.Tag)
		if err != nil {
			return err
		}
		l, err = linkOf(tx, r, in.LinkID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := linkView(info, l)
	return &linkOutput{Body: &v}, nil
}

func (w *Writer) createLink(ctx context.Context, in *createLinkInput) (*linkOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	typ := in.Body.LinkType
	if typ == "" {
		typ = "other"
	}
	l := &ReleaseLink{ProjectID: info.ID, Name: strings.TrimSpace(in.Body.Name), URL: strings.TrimSpace(in.Body.URL),
		LinkType: typ, CreatedAt: time.Now().UTC()}
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		r, err := linkRelease(tx, info.ID, in.Tag)
		if err != nil {
			return err
		}
		others, err := linksOf(tx, r.ID)
		if err != nil {
			return err
		}
		if msgs := checkLinks(others, []*ReleaseLink{l}); len(msgs) > 0 {
			return linkFailure(msgs)
		}
		l.ReleaseID = r.ID
		return releaseLinks.Insert(tx, l)
	})
	if err != nil {
		return nil, err
	}
	v := linkView(info, l)
	return &linkOutput{Body: &v}, nil
}

func (w *Writer) deleteLink(ctx context.Context, in *linkInput) (*linkOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	var l *ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		r, err := linkRelease(tx, info.ID, in.Tag)
		if err != nil {
			return err
		}
		if l, err = linkOf(tx, r, in.LinkID); err != nil {
			return err
		}
		return releaseLinks.Delete(tx, l.ID)
	})
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
