package internal

// Releases: the releases API (/projects/:id/releases and their asset links)
// and GitLab 9.x's release notes of a tag (.../repository/tags/:tag/release
// and the tag's "release" field) are two doors to one table, so a release
// made through either shows in both. A release belongs to its tag: deleting
// the tag, through the API or by a push, deletes the release in the
// transaction that publishes the tag's push event (dropDeletedTagReleases).
//
// Releases live in this module, not in one above it, because the tag API of
// 9.x (which this module serves) reads and writes them, a tag's deletion
// must take its release in its own transaction, and a release with ref
// creates its tag through this module's ref writer: a module above would
// need the repository module to reach up for all three.

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Release is a release of a tag. Releases made before the releases API
// (9.x release notes) have only a tag and a description: no name (the tag
// name is shown), no author (none is shown, as GitLab does), no times (the
// tagged commit's date is shown) and no sha (the tag's commit is shown).
type Release struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	TagName     string    `json:"tag_name"`
	Description *string   `json:"description"`
	Name        string    `json:"name,omitempty"`
	SHA         string    `json:"sha,omitempty"` // the tag's commit when the release was made
	AuthorID    int64     `json:"author_id,omitempty"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	ReleasedAt  time.Time `json:"released_at,omitzero"`
}

func (r *Release) RecordID() int64      { return r.ID }
func (r *Release) SetRecordID(id int64) { r.ID = id }

// ReleaseLink is a release's asset link.
type ReleaseLink struct {
	ID        int64     `json:"id"`
	ReleaseID int64     `json:"release_id"`
	ProjectID int64     `json:"project_id"`
	Name      string    `json:"name"`
	URL       string    `json:"url"`
	LinkType  string    `json:"link_type"`
	CreatedAt time.Time `json:"created_at"`
}

func (l *ReleaseLink) RecordID() int64      { return l.ID }
func (l *ReleaseLink) SetRecordID(id int64) { l.ID = id }

var (
	releases = store.NewTable[int64, Release]("repository.releases",
		store.Index[Release]{Name: "tag", Unique: true, Keys: func(r *Release) []string { return []string{refKey(r.ProjectID, r.TagName)} }},
		store.Index[Release]{Name: "project", Keys: func(r *Release) []string { return []string{store.IDString(r.ProjectID)} }},
	)
	releaseLinks = store.NewTable[int64, ReleaseLink]("repository.release_links",
		store.Index[ReleaseLink]{Name: "release", Keys: func(l *ReleaseLink) []string { return []string{store.IDString(l.ReleaseID)} }},
		store.Index[ReleaseLink]{Name: "project", Keys: func(l *ReleaseLink) []string { return []string{store.IDString(l.ProjectID)} }},
	)
)

// maxReleaseText bounds a release's description (and its name).
const maxReleaseText = 1 << 20

// releaseByTag is the release of a tag, nil when it has none.
func releaseByTag(tx *store.Tx, project int64, tag string) (*Release, error) {
	r, err := releases.GetBy(tx, "tag", refKey(project, tag))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return r, err
}

// linksOf are a release's links, newest first (GitLab's order).
func linksOf(tx *store.Tx, releaseID int64) ([]*ReleaseLink, error) {
	ids, err := releaseLinks.IDsBy(tx, "release", store.IDString(releaseID))
	if err != nil {
		return nil, err
	}
	out := make([]*ReleaseLink, 0, len(ids))
	for _, id := range ids {
		l, err := releaseLinks.Get(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *ReleaseLink) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return int(b.ID) - int(a.ID)
	})
	return out, nil
}

// deleteRelease removes a release and its links.
func deleteRelease(tx *store.Tx, r *Release) error {
	if _, err := releaseLinks.DeleteBy(tx, "release", store.IDString(r.ID)); err != nil {
		return err
	}
	return releases.Delete(tx, r.ID)
}

// dropDeletedTagReleases deletes the releases of the tags that changes
// deleted (moved[i]: change i happened), in the transaction that publishes
// their push events, so that a tag's release goes with it whoever deletes
// it (the API or a push) and cannot come back with a new tag of that name.
// A release made after the deletion (its events published late, by a
// retry) is a new tag's, and stays.
func dropDeletedTagReleases(tx *store.Tx, changes []*refChange, moved []bool) error {
	for i, c := range changes {
		name := plumbing.ReferenceName(c.Ref)
		if !moved[i] || !name.IsTag() || c.New != plumbing.ZeroHash.String() {
			continue
		}
		r, err := releaseByTag(tx, c.ProjectID, name.Short())
		if err != nil {
			return err
		}
		if r == nil || r.CreatedAt.After(c.CreatedAt) {
			continue
		}
		if err := deleteRelease(tx, r); err != nil {
			return err
		}
	}
	return nil
}

// removeProjectReleases deletes a deleted project's releases and links.
func removeProjectReleases(tx *store.Tx, projectKey string) error {
	if _, err := releaseLinks.DeleteBy(tx, "project", projectKey); err != nil {
		return err
	}
	_, err := releases.DeleteBy(tx, "project", projectKey)
	return err
}

// newRelease is a release of tag made now by the caller in ctx.
func newRelease(ctx context.Context, project int64, tag, sha string, description *string) *Release {
	now := time.Now().UTC()
	return &Release{ProjectID: project, TagName: tag, Description: description, Name: tag, SHA: sha,
		AuthorID: auth.FromContext(ctx).UserID(), CreatedAt: now, ReleasedAt: now}
}

// tagCommit is the commit a tag points at, nil when the tag is gone.
func tagCommit(repo *git.Repository, tag string) *object.Commit {
	r, err := tagRef(repo, tag)
	if err != nil {
		return nil
	}
	c, err := peel(repo, r.Hash())
	if err != nil {
		return nil
	}
	return c
}

// The 9.x release notes of a tag: {tag_name, description}.

// ReleaseView is the release of a tag as the tags API shows it.
type ReleaseView struct {
	TagName     string  `json:"tag_name"`
	Description *string `json:"description"`
}

func (w *Writer) releaseOf(ctx context.Context, project int64, tag string) *Release {
	var r *Release
	_ = w.db.View(ctx, func(tx *store.Tx) error {
		r, _ = releaseByTag(tx, project, tag)
		return nil
	})
	return r
}

// The releases API.

// ReleaseAssets are the archives of the tag and the release's links; count
// counts both.
type ReleaseAssets struct {
	Count   int               `json:"count"`
	Sources []ReleaseSource   `json:"sources"`
	Links   []ReleaseLinkView `json:"links"`
}

// ReleaseSource is one archive of the tag.
type ReleaseSource struct {
	Format string `json:"format"`
	URL    string `json:"url"`
}

// ReleaseURLs is the release's _links.
type ReleaseURLs struct {
	Self string `json:"self"`
}

// ReleaseLinkView is GitLab's release link resource.
type ReleaseLinkView struct {
	ID             int64  `json:"id"`
	Name           string `json:"name"`
	URL            string `json:"url"`
	DirectAssetURL string `json:"direct_asset_url"`
	External       bool   `json:"external"`
	LinkType       string `json:"link_type"`
}

// sourceFormats are the archives GitLab lists, in its order.
var sourceFormats = []string{"zip", "tar.gz", "tar.bz2", "tar"}

func linkView(info projects.ProjectInfo, l *ReleaseLink) ReleaseLinkView {
	// GitLab: a link is internal when it points into the project.
	// direct_asset_url is the link itself: Fennec keeps no direct asset
	// paths (GitLab's permalinks under the release's web page).
	return ReleaseLinkView{ID: l.ID, Name: l.Name, URL: l.URL, DirectAssetURL: l.URL,
		External: !strings.HasPrefix(l.URL, info.WebURL), LinkType: l.LinkType}
}

// checkLinkURL is GitLab's rule: an absolute http, https or ftp URL.
func checkLinkURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "ftp") && u.Host != ""
}

// checkLinks validates links to be added to a release that already has
// others; the messages are GitLab's (its model's full messages).
func checkLinks(others []*ReleaseLink, links []*ReleaseLink) []string {
	var msgs []string
	add := func(m string) {
		if !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	for i, l := range links {
		switch {
		case strings.TrimSpace(l.URL) == "":
			add("Url can't be blank")
		case !checkLinkURL(l.URL) || len(l.URL) > 2048:
			add("Url is blocked: Only allowed schemes are http, https, ftp")
		}
		if strings.TrimSpace(l.Name) == "" {
			add("Name can't be blank")
		} else if len(l.Name) > 255 {
			add("Name is too long (maximum is 255 characters)")
		}
		for _, o := range append(slices.Clone(others), links[:i]...) {
			if o.ID == l.ID && l.ID != 0 {
				continue
			}
			if o.URL == l.URL {
				add("Url has already been taken")
			}
			if o.Name == l.Name {
				add("Name has already been taken")
			}
		}
	}
	return msgs
}

// releaseAt loads a release and its links; nil when the tag has none.
func (w *Writer) releaseAt(ctx context.Context, project int64, tag string) (*Release, []*ReleaseLink, error) {
	var r *Release
	var links []*ReleaseLink
	err := w.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = releaseByTag(tx, project, tag); err != nil || r == nil {
			return err
		}
		links, err = linksOf(tx, r.ID)
		return err
	})
	return r, links, err
}

// sortedLinks orders links made in one request as linksOf reads them.
func sortedLinks(links []*ReleaseLink) []*ReleaseLink {
	out := slices.Clone(links)
	slices.Reverse(out)
	return out
}

// Release links.
