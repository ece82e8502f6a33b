package internal

// The releases' commands: the 9.x release notes of a tag, and the releases
// API's releases and links. Each asks for access once, writes in one store
// transaction and returns domain errors; httpreleases.go renders them.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// insertRelease stores a new release, errReleaseExists when the tag has
// one already (also when a concurrent request made it first).
func insertRelease(tx *store.Tx, r *Release) error {
	if old, err := releaseByTag(tx, r.ProjectID, r.TagName); err != nil {
		return err
	} else if old != nil {
		return errReleaseExists
	}
	return releases.Insert(tx, r)
}

// checkReleaseText refuses a name or description too long to keep.
func checkReleaseText(name, description *string) error {
	if name != nil && len(*name) > 255 {
		return fieldsInvalid("name", "is too long (maximum is 255 characters)")
	}
	if description != nil && len(*description) > maxReleaseText {
		return fieldsInvalid("description", "is too long (maximum is 1048576 characters)")
	}
	return nil
}

// SetReleaseNotes creates (create) or replaces the 9.x release notes of
// tag, as the caller in ctx, who must be able to push.
func (w *Writer) SetReleaseNotes(ctx context.Context, project, tag, description string, create bool) error {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return err
	}
	c := tagCommit(repo, tag)
	if c == nil {
		return ErrTagNotFound
	}
	if err := checkReleaseText(nil, &description); err != nil {
		return err
	}
	return w.db.Update(ctx, func(tx *store.Tx) error {
		rel, err := releaseByTag(tx, info.ID, tag)
		switch {
		case err != nil:
			return err
		case create:
			return insertRelease(tx, newRelease(ctx, info.ID, tag, c.Hash.String(), &description))
		case rel == nil:
			return errReleaseNotFound
		default:
			rel.Description = &description
			return releases.Update(tx, rel)
		}
	})
}

// releaseState is a release as a command left it, with what its view
// needs: the project, its repository and the release's links.
type releaseState struct {
	Info    projects.ProjectInfo
	Repo    *git.Repository
	Release *Release
	Links   []*ReleaseLink
}

// newReleaseFields is what a new release is: its tag (made from Ref, with
// TagMessage, when it does not exist), name, notes, time and links.
type newReleaseFields struct {
	TagName     string
	Name        *string
	Description *string
	Ref         string
	TagMessage  *string
	ReleasedAt  *time.Time
	Links       []linkFields
}

// linkFields is a release link as given; a blank type is "other".
type linkFields struct {
	Name, URL, LinkType string
}

func (l linkFields) link(project int64, now time.Time) *ReleaseLink {
	typ := l.LinkType
	if typ == "" {
		typ = "other"
	}
	return &ReleaseLink{ProjectID: project, Name: strings.TrimSpace(l.Name), URL: strings.TrimSpace(l.URL), LinkType: typ, CreatedAt: now}
}

// CreateRelease creates a release with its links, and its tag when the
// tag does not exist, as the caller in ctx, who must be able to push.
func (w *Writer) CreateRelease(ctx context.Context, project string, f newReleaseFields) (releaseState, error) {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return releaseState{}, err
	}
	if err := checkReleaseText(f.Name, f.Description); err != nil {
		return releaseState{}, err
	}
	now := time.Now().UTC()
	links := make([]*ReleaseLink, 0, len(f.Links))
	for _, l := range f.Links {
		links = append(links, l.link(info.ID, now))
	}
	if msgs := checkLinks(nil, links); len(msgs) > 0 {
		// GitLab saves the release with its links and reports the
		// record's failure as one sentence.
		return releaseState{}, invalid("Validation failed: Links are invalid: " + strings.Join(msgs, ", "))
	}
	if r, _, err := w.releaseAt(ctx, info.ID, f.TagName); err != nil {
		return releaseState{}, err
	} else if r != nil {
		return releaseState{}, errReleaseExists
	}
	c := tagCommit(repo, f.TagName)
	if c == nil {
		if strings.TrimSpace(f.Ref) == "" {
			return releaseState{}, errRefNotSpecified
		}
		// The tags API's own rules (names, protected branches it would
		// hide, the target), with its messages; its 405s are a 9.x quirk
		// of that endpoint, and a bad request here.
		if _, _, err := w.CreateTag(ctx, project, newTag{Name: f.TagName, Ref: f.Ref, Message: f.TagMessage}); err != nil {
			var r *tagRefusal
			if errors.As(err, &r) {
				return releaseState{}, &releaseTagRefusal{r.reason}
			}
			return releaseState{}, err
		}
		if c = tagCommit(repo, f.TagName); c == nil {
			return releaseState{}, ErrTagNotFound
		}
	}
	r := newRelease(ctx, info.ID, f.TagName, c.Hash.String(), f.Description)
	if f.Name != nil && strings.TrimSpace(*f.Name) != "" {
		r.Name = *f.Name
	}
	if f.ReleasedAt != nil {
		r.ReleasedAt = f.ReleasedAt.UTC()
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
		return releaseState{}, err
	}
	return releaseState{Info: info, Repo: repo, Release: r, Links: sortedLinks(links)}, nil
}

// releaseChange is what an update of a release gives; nil keeps.
type releaseChange struct {
	Name        *string
	Description *string
	ReleasedAt  *time.Time
}

// UpdateRelease changes the release of tag, as the caller in ctx, who
// must be able to push.
func (w *Writer) UpdateRelease(ctx context.Context, project, tag string, ch releaseChange) (releaseState, error) {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return releaseState{}, err
	}
	if tagCommit(repo, tag) == nil {
		return releaseState{}, errTagMissing
	}
	if ch.Name == nil && ch.Description == nil && ch.ReleasedAt == nil {
		return releaseState{}, invalid("params is empty")
	}
	if err := checkReleaseText(ch.Name, ch.Description); err != nil {
		return releaseState{}, err
	}
	var r *Release
	var links []*ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = requireRelease(tx, info.ID, tag, errReleaseMissing); err != nil {
			return err
		}
		if ch.Name != nil {
			r.Name = *ch.Name
		}
		if ch.Description != nil {
			r.Description = ch.Description
		}
		if ch.ReleasedAt != nil {
			r.ReleasedAt = ch.ReleasedAt.UTC()
		}
		if err := releases.Update(tx, r); err != nil {
			return err
		}
		links, err = linksOf(tx, r.ID)
		return err
	})
	if err != nil {
		return releaseState{}, err
	}
	return releaseState{Info: info, Repo: repo, Release: r, Links: links}, nil
}

// DeleteRelease deletes the release of tag (not the tag) with its links,
// as the caller in ctx, who must be able to push; it returns what was
// deleted.
func (w *Writer) DeleteRelease(ctx context.Context, project, tag string) (releaseState, error) {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return releaseState{}, err
	}
	if tagCommit(repo, tag) == nil {
		return releaseState{}, errTagMissing
	}
	var r *Release
	var links []*ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = requireRelease(tx, info.ID, tag, errReleaseMissing); err != nil {
			return err
		}
		if links, err = linksOf(tx, r.ID); err != nil {
			return err
		}
		return deleteRelease(tx, r)
	})
	if err != nil {
		return releaseState{}, err
	}
	return releaseState{Info: info, Repo: repo, Release: r, Links: links}, nil
}

// requireRelease is the release of tag, or missing when there is none
// (what an update, a delete or a link's command answers then).
func requireRelease(tx *store.Tx, project int64, tag string, missing error) (*Release, error) {
	r, err := releaseByTag(tx, project, tag)
	if err == nil && r == nil {
		return nil, missing
	}
	return r, err
}

// linkRelease is the release of tag; GitLab's find_by_tag! answers a
// missing one with its record-not-found.
func linkRelease(tx *store.Tx, project int64, tag string) (*Release, error) {
	return requireRelease(tx, project, tag, errReleaseLinkNotFound)
}

// linkOf is link id of the release of tag, with the release;
// errReleaseLinkNotFound when there is no such release or it has no such
// link.
func linkOf(tx *store.Tx, project int64, tag string, id int64) (*Release, *ReleaseLink, error) {
	r, err := linkRelease(tx, project, tag)
	if err != nil {
		return nil, nil, err
	}
	l, err := releaseLinks.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.ReleaseID != r.ID) {
		return nil, nil, errReleaseLinkNotFound
	}
	return r, l, err
}

// CreateReleaseLink adds a link to the release of tag, as the caller in
// ctx, who must be able to push.
func (w *Writer) CreateReleaseLink(ctx context.Context, project, tag string, f linkFields) (projects.ProjectInfo, *ReleaseLink, error) {
	info, err := w.rd.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return info, nil, err
	}
	l := f.link(info.ID, time.Now().UTC())
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		r, err := linkRelease(tx, info.ID, tag)
		if err != nil {
			return err
		}
		others, err := linksOf(tx, r.ID)
		if err != nil {
			return err
		}
		if msgs := checkLinks(others, []*ReleaseLink{l}); len(msgs) > 0 {
			return &linksInvalidError{msgs}
		}
		l.ReleaseID = r.ID
		return releaseLinks.Insert(tx, l)
	})
	if err != nil {
		return info, nil, err
	}
	return info, l, nil
}

// linkChange is what an update of a link gives; nil (or a blank type)
// keeps.
type linkChange struct {
	Name, URL *string
	LinkType  string
}

// UpdateReleaseLink changes link id of the release of tag, as the caller
// in ctx, who must be able to push.
func (w *Writer) UpdateReleaseLink(ctx context.Context, project, tag string, id int64, ch linkChange) (projects.ProjectInfo, *ReleaseLink, error) {
	info, err := w.rd.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return info, nil, err
	}
	if ch.Name == nil && ch.URL == nil {
		return info, nil, errLinkNothingGiven
	}
	var l *ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		r, link, err := linkOf(tx, info.ID, tag, id)
		if err != nil {
			return err
		}
		l = link
		if ch.Name != nil {
			l.Name = strings.TrimSpace(*ch.Name)
		}
		if ch.URL != nil {
			l.URL = strings.TrimSpace(*ch.URL)
		}
		if ch.LinkType != "" {
			l.LinkType = ch.LinkType
		}
		others, err := linksOf(tx, r.ID)
		if err != nil {
			return err
		}
		others = slices.DeleteFunc(others, func(o *ReleaseLink) bool { return o.ID == l.ID })
		if msgs := checkLinks(others, []*ReleaseLink{l}); len(msgs) > 0 {
			return &linksInvalidError{msgs}
		}
		return releaseLinks.Update(tx, l)
	})
	if err != nil {
		return info, nil, err
	}
	return info, l, nil
}

// DeleteReleaseLink deletes link id of the release of tag, as the caller
// in ctx, who must be able to push; it returns the deleted link.
func (w *Writer) DeleteReleaseLink(ctx context.Context, project, tag string, id int64) (projects.ProjectInfo, *ReleaseLink, error) {
	info, err := w.rd.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return info, nil, err
	}
	var l *ReleaseLink
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if _, l, err = linkOf(tx, info.ID, tag, id); err != nil {
			return err
		}
		return releaseLinks.Delete(tx, l.ID)
	})
	if err != nil {
		return info, nil, err
	}
	return info, l, nil
}
