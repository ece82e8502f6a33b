package internal

// The activity feeds as pages (issue 28): the signed-in visitor's own
// (/dashboard/activity), a user's (/users/<username>/activity) and a
// project's (/<project>/activity, and /-/activity). Each is the same
// service call as the events API, so an entry is shown exactly to those
// the API shows it to; the page adds the words and the links.

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

//go:embed templates
var pageTemplates embed.FS

// entriesPerPage is one page of a feed.
const entriesPerPage = 20

type pages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the feeds' pages.
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "activity", Register: func(site *web.Site) {
		pg := &pages{site: site, s: s, t: site.Templates(pageTemplates, "templates/activity/*.html")}
		site.AddMenu(web.MenuItem{Label: "Activity", Path: "/dashboard/activity", Order: 15, SignedIn: true})
		site.AddProjectTab(web.ProjectTab{Key: "activity", Label: "Activity", Suffix: "/-/activity", Order: 15})
		site.Handle("GET /dashboard/activity", pg.dashboard)
		site.Handle("GET /users/{username}/activity", pg.user)
		site.Project("GET activity", pg.project)
		// GitLab's project activity path has no "/-/": /<project>/activity.
		site.Path(pg.bareProjectActivity)
	}}
}

// entryView is one entry as a feed page shows it.
type entryView struct {
	Author            person
	Action            string // "pushed to branch", "opened issue", ...
	Target, TargetURL string // "#3", "master", ...
	Title             string // the target's title, or a push's first commit
	Project           string
	ProjectURL        string
	Excerpt           string // a comment's first line
	Commits           int    // a push's commits
	CreatedAt         time.Time
}

type person struct{ Name, Username, Href string }

type feedData struct {
	Rows                      []entryView
	Page                      int
	PrevHref, NextHref, Empty string
	Heading                   string
	ShowProject               bool
}

func (pg *pages) dashboard(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	page := pageOf(r)
	list, total, err := pg.s.MemberEntries(r.Context(), (page-1)*entriesPerPage, entriesPerPage)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := pg.feed(r.Context(), list, total, page, "/dashboard/activity", true)
	d.Heading, d.Empty = "Your projects' activity", "Nothing has happened in your projects yet: push, open an issue or comment, and it shows here."
	pg.t.Render(w, r, "feed", web.Page{Title: "Your projects' activity", Crumbs: []web.Crumb{{Label: "Dashboard", Href: "/"}, {Label: "Activity"}}, Data: d})
}

func (pg *pages) user(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("username")
	page := pageOf(r)
	list, total, err := pg.s.UserEntries(r.Context(), name, entry.Filter{}, (page-1)*entriesPerPage, entriesPerPage)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	u, err := pg.s.users.UserByUsername(r.Context(), name)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := pg.feed(r.Context(), list, total, page, "/users/"+web.EscapePath(name)+"/activity", true)
	d.Heading, d.Empty = u.Name+"'s activity", "No activity to show."
	pg.t.Render(w, r, "feed", web.Page{Title: d.Heading,
		Crumbs: []web.Crumb{{Label: u.Name, Href: "/" + web.EscapePath(u.Username)}, {Label: "Activity"}}, Data: d})
}

func (pg *pages) project(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("rest") != "" {
		pg.site.NotFound(w, r)
		return
	}
	pg.projectFeed(w, r, r.PathValue("owner"))
}

// bareProjectActivity takes "<project>/activity", GitLab's path.
func (pg *pages) bareProjectActivity(w http.ResponseWriter, r *http.Request, path string) bool {
	full, ok := strings.CutSuffix(path, "/activity")
	if !ok || !strings.Contains(full, "/") || r.Method != http.MethodGet {
		return false
	}
	if _, err := pg.s.access.Resolve(r.Context(), full); err != nil {
		return false // not a project (a group's or a user's path): others'
	}
	pg.projectFeed(w, r, full)
	return true
}

func (pg *pages) projectFeed(w http.ResponseWriter, r *http.Request, full string) {
	info, err := pg.s.access.Resolve(r.Context(), full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	page := pageOf(r)
	list, total, err := pg.s.ProjectEntries(r.Context(), full, entry.Filter{}, (page-1)*entriesPerPage, entriesPerPage)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := pg.feed(r.Context(), list, total, page, "/"+web.EscapePath(full)+"/-/activity", false)
	d.Heading, d.Empty = "Activity", "Nothing has happened in this project yet."
	pg.t.Render(w, r, "feed", web.Page{Title: "Activity · " + info.NameWithNamespace, Tab: "activity",
		Project: &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
			Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount},
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Activity"}}, Data: d})
}

func pageOf(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return min(max(n, 1), 100_000)
}

// fail answers a failed read: a project or user that is not there (or
// hidden) as missing, anything else as the 500 page with a log line.
func (pg *pages) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, projects.ErrNotFound), errors.Is(err, identity.ErrUserNotFound):
		pg.site.Missing(w, r)
	case errors.Is(err, projects.ErrForbidden):
		pg.site.NotFound(w, r)
	default:
		pg.site.Logger().Error("activity page failed", zap.String("path", r.URL.Path), zap.Error(err))
		pg.site.Error(w, r, http.StatusInternalServerError)
	}
}

// feed words the entries of one page. here is the page's own path (for
// the pager); withProject names each entry's project.
func (pg *pages) feed(ctx context.Context, list []entry.Entry, total, page int, here string, withProject bool) feedData {
	d := feedData{Page: page, ShowProject: withProject}
	if page > 1 {
		d.PrevHref = pg.site.URL(here + "?page=" + strconv.Itoa(page-1))
	}
	if page*entriesPerPage < total {
		d.NextHref = pg.site.URL(here + "?page=" + strconv.Itoa(page+1))
	}
	projectsSeen := map[int64]*projects.ProjectInfo{}
	for _, e := range list {
		a, err := pg.s.users.UserByID(ctx, e.AuthorID)
		v := entryView{CreatedAt: e.CreatedAt, Author: person{Name: "A deleted user", Username: "ghost"}}
		if err == nil {
			v.Author = person{Name: a.Name, Username: a.Username, Href: pg.site.URL("/" + web.EscapePath(a.Username))}
		}
		var full string
		if e.ProjectID != 0 {
			info, ok := projectsSeen[e.ProjectID]
			if !ok {
				if got, err := pg.s.access.ResolveID(ctx, e.ProjectID); err == nil {
					info = &got
				}
				projectsSeen[e.ProjectID] = info
			}
			if info != nil {
				full = info.PathWithNamespace
				v.Project, v.ProjectURL = info.NameWithNamespace, pg.site.URL("/"+web.EscapePath(full))
			}
		}
		pg.word(&v, e, full)
		d.Rows = append(d.Rows, v)
	}
	return d
}

// word fills the entry's sentence and its target's link, in GitLab's
// words ("pushed to branch master", "opened issue #3", "commented on
// merge request !2").
func (pg *pages) word(v *entryView, e entry.Entry, full string) {
	link := func(suffix string) string {
		if full == "" {
			return ""
		}
		return pg.site.URL("/" + web.EscapePath(full) + suffix)
	}
	iid := strconv.FormatInt(e.TargetIID, 10)
	v.Title = e.TargetTitle
	switch e.Action {
	case feed.PushedTo, feed.PushedNew, feed.Deleted:
		var push struct {
			Ref     string `json:"ref"`
			Total   int    `json:"total_commits_count"`
			Commits []struct {
				Message string `json:"message"`
			} `json:"commits"`
		}
		_ = json.Unmarshal(e.Data, &push)
		kind, ref := "branch", strings.TrimPrefix(push.Ref, "refs/heads/")
		if strings.HasPrefix(push.Ref, "refs/tags/") {
			kind, ref = "tag", strings.TrimPrefix(push.Ref, "refs/tags/")
		}
		v.Action, v.Target = string(e.Action)+" "+kind, ref
		if e.Action != feed.Deleted {
			v.TargetURL = link("/-/tree/" + web.EscapePath(ref))
		}
		v.Commits = push.Total
		if len(push.Commits) > 0 {
			v.Title, _, _ = strings.Cut(push.Commits[len(push.Commits)-1].Message, "\n")
		}
	case feed.CommentedOn:
		var note struct {
			Body         string `json:"body"`
			NoteableType string `json:"noteable_type"`
			NoteableID   int64  `json:"noteable_id"`
		}
		_ = json.Unmarshal(e.Note, &note)
		anchor := "#note_" + strconv.FormatInt(e.TargetID, 10)
		switch note.NoteableType {
		case "Issue":
			v.Action, v.Target = "commented on issue", "#"+iid
			if e.TargetIID > 0 {
				v.TargetURL = link("/-/issues/" + iid + anchor)
			}
		case "MergeRequest":
			v.Action, v.Target = "commented on merge request", "!"+iid
			if e.TargetIID > 0 {
				v.TargetURL = link("/-/merge_requests/" + iid + anchor)
			}
		case "Snippet":
			v.Action, v.Target = "commented on snippet", "$"+strconv.FormatInt(note.NoteableID, 10)
			v.TargetURL = link("/-/snippets/" + strconv.FormatInt(note.NoteableID, 10) + anchor)
		default:
			v.Action = "commented on"
		}
		if e.TargetIID == 0 && note.NoteableType != "Snippet" {
			v.Target = ""
		}
		v.Excerpt, _, _ = strings.Cut(strings.TrimSpace(note.Body), "\n")
		if len(v.Excerpt) > 200 {
			v.Excerpt = v.Excerpt[:200] + "…"
		}
	default:
		v.Action = string(e.Action)
		switch e.TargetType {
		case "Issue":
			v.Action += " issue"
			if e.TargetIID > 0 {
				v.Target, v.TargetURL = "#"+iid, link("/-/issues/"+iid)
			}
		case "MergeRequest":
			v.Action += " merge request"
			if e.TargetIID > 0 {
				v.Target, v.TargetURL = "!"+iid, link("/-/merge_requests/"+iid)
			}
		case "Milestone":
			v.Action += " milestone"
		case "":
			if e.Action == feed.Created || e.Action == feed.Joined || e.Action == feed.Left || e.Action == feed.Destroyed {
				v.Action += " project"
			}
		}
	}
}
