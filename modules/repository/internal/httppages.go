package internal

// The web pages of the repository module (issue 28): the project's
// overview and its Files (httppagesfiles.go), its history (commits,
// commit, compare, branches, tags, releases: httppageshistory.go). This
// file registers them and holds what they share: opening the project as
// the API does (projects.Access through Reader.open), splitting a ref
// that may hold slashes from the path after it, and the links.

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/markup"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
)

//go:embed all:templates
var pageTemplates embed.FS // all: keeps the partials, files named "_*"

//go:embed static/lines.js
var linesScript []byte

// PagesDeps are what NewPages is built from.
type PagesDeps struct {
	fennec.In
	Reader *Reader
	Teams  projects.Teams
}

// pages are the repository module's web pages; the page files add their
// handlers to it.
type pages struct {
	site  *web.Site
	rd    *Reader
	teams projects.Teams
	// lastCommits keeps the tree pages' last commits (lastcommits.go).
	lastCommits *lastCommits
}

// NewPages registers the repository module's pages.
func NewPages(d PagesDeps) fennec.Pages {
	return fennec.Pages{Name: "repository", Register: func(s *web.Site) {
		pg := &pages{site: s, rd: d.Reader, teams: d.Teams, lastCommits: newLastCommits(d.Reader)}
		// The project's overview and its Files: httppagesfiles.go.
		pg.registerFilePages(s)
		// The history pages (commits, commit, compare, branches, tags,
		// releases): httppageshistory.go.
		pg.registerHistoryPages(s)
		// Releases: httppagesreleases.go.
		pg.registerReleasePages(s)
		// Repository settings (protected branches): httppagessettings.go.
		pg.registerSettingsPages(s)
	}}
}

// projectHeader is the header of a project's pages, with tab active.
func projectHeader(info projects.ProjectInfo) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// openCode opens the repository of the page's project (r.PathValue
// ("owner")) for reading its code, with the API's permission (ReadCode).
// A project the visitor may not see, or not read the code of, is answered
// as missing (sign in, or the 404 page); ok is false once an answer is
// written.
func (pg *pages) openCode(w http.ResponseWriter, r *http.Request) (projects.ProjectInfo, *git.Repository, bool) {
	info, repo, err := pg.rd.open(r.Context(), r.PathValue("owner"), projects.ReadCode)
	if err != nil {
		pg.fail(w, r, err)
		return info, nil, false
	}
	return info, repo, true
}

// fail answers a page whose service call failed: a project that is not
// there (or hidden) as missing, one the visitor may not read as the 404
// page (as GitLab does: the code's pages do not exist for them), anything
// else as the 500 page with a log line (never the error's text).
func (pg *pages) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, projects.ErrNotFound):
		pg.site.Missing(w, r)
	case errors.Is(err, projects.ErrForbidden):
		pg.site.NotFound(w, r)
	default:
		pg.site.Logger().Error("repository page failed", zap.String("path", r.URL.Path), zap.Error(err))
		pg.site.Error(w, r, http.StatusInternalServerError)
	}
}

// maxRefSegments bounds the prefixes of a page's rest tried as a ref: a
// ref deeper than that is not found (git allows it; nobody names one so).
const maxRefSegments = 32

// splitRef finds the ref at the start of rest ("feature/x/dir/file"), as
// GitLab does: the longest prefix that names a branch, a tag or a commit
// ("feature/x/dir/file", then "feature/x/dir", "feature/x", "feature"),
// and the path after it. ok is false when no prefix is one.
func splitRef(repo *git.Repository, rest string) (ref, path string, c *object.Commit, ok bool) {
	segs := strings.Split(rest, "/")
	for n := min(len(segs), maxRefSegments); n > 0; n-- {
		cand := strings.Join(segs[:n], "/")
		if cand == "" {
			continue
		}
		if c, err := resolveCommit(repo, cand, ""); err == nil {
			return cand, strings.Join(segs[n:], "/"), c, true
		}
	}
	return "", "", nil, false
}

// projectURL is a project's page under the site's root, escaped; key and
// the ref and path after it are optional ("" leaves them out):
// /grp/proj/-/blob/feature/x/a%20b.md.
func projectURL(fullPath, key, ref, path string) string {
	u := "/" + web.EscapePath(fullPath)
	if key == "" {
		return u
	}
	u += "/-/" + key
	if ref != "" {
		u += "/" + web.EscapePath(ref)
		if path != "" {
			u += "/" + web.EscapePath(path)
		}
	}
	return u
}

// renderMarkdown is a Markdown file of the repository as HTML, its relative
// links and images resolved in dir at ref (core/markup).
func renderMarkdown(ctx context.Context, info projects.ProjectInfo, ref, dir, src string) template.HTML {
	return markup.Render(ctx, []byte(src), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: info.PathWithNamespace, Ref: ref, Dir: dir})
}

// markdown is renderMarkdown with its references linked, for a viewer
// who reads the code: the repository's commit ids here (commitRefs), the
// rest (#12, !3, $4, @name) by the modules that own them, through the
// site's resolver.
func (pg *pages) markdown(ctx context.Context, info projects.ProjectInfo, ref, dir, src string) template.HTML {
	return markup.Render(ctx, []byte(src), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: info.PathWithNamespace, Ref: ref, Dir: dir,
		Resolver: pg.site.Resolver(&commitRefs{rd: pg.rd, info: info})})
}

// maxCommitRefs bounds the commit ids of one text looked up: past it,
// the ids are left as text (each is a pack index lookup and a commit read).
const maxCommitRefs = 100

// commitRefs links the commit ids of a text shown in a project whose code
// the viewer reads (the pages render Markdown only for them): an id of 7
// to 40 hex digits that names exactly one object of its repository, a
// commit, is a link titled with the commit's first line. The other
// references (#12, !3, @user) belong to the modules above this one, which
// answer through the site's resolver (web.Site.AddReferences).
type commitRefs struct {
	rd     *Reader
	info   projects.ProjectInfo
	repo   *git.Repository // opened at the first id
	looked int
}

func (c *commitRefs) Reference(ctx context.Context, r markup.Reference) (bool, string) {
	if r.Kind != markup.Commit || r.Project != c.info.PathWithNamespace || c.looked >= maxCommitRefs {
		return false, ""
	}
	c.looked++
	objs, err := c.rd.store.Objects(c.info.ID)
	if err != nil {
		return false, ""
	}
	found := objs.Prefix(r.ID, 2)
	if len(found) != 1 {
		return false, ""
	}
	if c.repo == nil {
		if c.repo, err = c.rd.store.Open(ctx, c.info.ID); err != nil {
			return false, ""
		}
	}
	commit, err := c.repo.CommitObject(found[0])
	if err != nil {
		return false, ""
	}
	return true, firstLine(commit.Message)
}

// highlight is a file's lines as HTML, one fragment per line (core/markup).
func highlight(name, code string) []template.HTML {
	return markup.Highlight(name, []byte(code))
}

// visible is a name (a file's, a ref's) as a page shows it: its control
// characters, which git allows in names and which would vanish or garble
// the text around them, become their visible pictures (U+2400...). Bidi
// controls are isolated by the templates' <bdi> instead.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < 0x20:
			return 0x2400 + r
		case r == 0x7f:
			return '\u2421'
		}
		return r
	}, s)
}
