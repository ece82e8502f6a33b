package internal

// The snippets' web pages (issue 29): a project's snippets under
// "/<project>/-/snippets", the visitor's personal ones under "/snippets",
// the public ones on "/explore/snippets". Each page reads and changes
// through the Service (and the collab module's notes for comments), so
// what a visitor sees and may do is exactly what the API lets them; the
// page only decides which forms to offer.

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/markup"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

//go:embed all:templates
var pageTemplates embed.FS

// snippetsPerPage is one page of a snippet list.
const snippetsPerPage = 20

// notesPerPage bounds the comments one snippet page shows; more are on
// further pages (each is rendered Markdown).
const notesPerPage = 500

type pages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the snippets' pages and their Markdown references
// ($12).
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "snippets", Register: func(site *web.Site) {
		registerReferences(site, s)
		pg := &pages{site: site, s: s, t: site.Templates(pageTemplates, "templates/snippets/*.html")}
		site.AddProjectTab(web.ProjectTab{Key: "snippets", Label: "Snippets", Suffix: "/-/snippets", Order: 80, Feature: "snippets_enabled"})
		site.Project("GET snippets", pg.projectGet)
		site.Project("POST snippets", pg.projectPost)
		site.Handle("GET /snippets", pg.ownList)
		site.Handle("GET /explore/snippets", pg.explore)
		site.Handle("GET /snippets/new", func(w http.ResponseWriter, r *http.Request) { pg.form(w, r, personal(), 0, nil, "") })
		site.Handle("GET /snippets/{id}", pg.personalGet)
		site.Handle("GET /snippets/{id}/{action}", pg.personalGet)
		site.Handle("POST /snippets", func(w http.ResponseWriter, r *http.Request) { pg.save(w, r, personal(), 0) })
		site.Handle("POST /snippets/{id}", pg.personalPost)
		site.Handle("POST /snippets/{id}/{action}", pg.personalPost)
	}}
}

// scope is where a page's snippets are: a project (its full path, and
// the visitor's view of it), or the personal snippets (project "").
type scope struct {
	project string
	info    projects.ProjectInfo
}

func personal() scope { return scope{} }

// base is the scope's snippets page, escaped: "/g/p/-/snippets" or
// "/snippets".
func (sc scope) base() string {
	if sc.project == "" {
		return "/snippets"
	}
	return "/" + web.EscapePath(sc.project) + "/-/snippets"
}

func (sc scope) href(id snippet.ID, suffix string) string {
	return sc.base() + "/" + strconv.FormatInt(int64(id), 10) + suffix
}

// header is the project's header above a project snippet's page.
func (sc scope) header() *web.Project {
	if sc.project == "" {
		return nil
	}
	i := sc.info
	return &web.Project{FullPath: i.PathWithNamespace, Name: i.NameWithNamespace, Visibility: i.Visibility,
		Archived: i.Archived, Level: i.Level, Features: i.Features.Map(), Stars: i.StarCount, Forks: i.ForksCount}
}

// crumbs lead from the project (or the personal list) to a page.
func (sc scope) crumbs(more ...web.Crumb) []web.Crumb {
	var out []web.Crumb
	if sc.project != "" {
		out = append(out, web.Crumb{Label: sc.info.Path, Href: "/" + web.EscapePath(sc.project)})
	}
	out = append(out, web.Crumb{Label: "Snippets", Href: sc.base()})
	return append(out, more...)
}

// listCrumbs are a project's list's (none for the personal lists, which
// have tabs).
func (sc scope) listCrumbs() []web.Crumb {
	if sc.project == "" {
		return nil
	}
	return []web.Crumb{{Label: sc.info.Path, Href: "/" + web.EscapePath(sc.project)}, {Label: "Snippets"}}
}

func (sc scope) title(s string) string {
	if sc.project == "" {
		return s
	}
	return s + " · " + sc.info.NameWithNamespace
}

// projectScope resolves the page's project as the snippets API does: read
// access and the snippets feature on.
func (pg *pages) projectScope(ctx context.Context, full string) (scope, error) {
	info, err := pg.s.access.Require(ctx, full, projects.ReadSnippets)
	return scope{project: full, info: info}, err
}

func parseID(s string) (snippet.ID, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return snippet.ID(n), err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// refusals sort the snippets pages' failed service calls: an anonymous
// visitor where the API wants one signed in is sent to sign in, a snippet
// or project the visitor may not see is missing, a refused change the 403
// page, anything else the 500 page and a log line.
var refusals = web.Refusals{Page: "snippets page", SignIn: []error{auth.ErrUnauthorized},
	Missing:   []error{projects.ErrNotFound, snippet.ErrNotFound, target.ErrNotFound},
	Forbidden: []error{projects.ErrForbidden}}

// fail answers a page whose service call failed, never with the error's
// text (refusals).
func (pg *pages) fail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, refusals)
}

// projectGet serves "/-/snippets", "/-/snippets/new", "/-/snippets/12" and
// its "/raw", "/edit" and "/delete".
func (pg *pages) projectGet(w http.ResponseWriter, r *http.Request) {
	sc, err := pg.projectScope(r.Context(), r.PathValue("owner"))
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	switch rest := r.PathValue("rest"); rest {
	case "":
		pg.list(w, r, sc, "")
	case "new":
		pg.form(w, r, sc, 0, nil, "")
	default:
		num, action, _ := strings.Cut(rest, "/")
		pg.snippetGet(w, r, sc, num, action)
	}
}

// projectPost serves the project's forms: "/-/snippets" (create),
// "/-/snippets/12" (edit), "/12/delete" and "/12/notes".
func (pg *pages) projectPost(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	sc, err := pg.projectScope(r.Context(), r.PathValue("owner"))
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	rest := r.PathValue("rest")
	if rest == "" {
		pg.save(w, r, sc, 0)
		return
	}
	num, action, _ := strings.Cut(rest, "/")
	pg.snippetPost(w, r, sc, num, action)
}

func (pg *pages) personalGet(w http.ResponseWriter, r *http.Request) {
	pg.snippetGet(w, r, personal(), r.PathValue("id"), r.PathValue("action"))
}

func (pg *pages) personalPost(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	pg.snippetPost(w, r, personal(), r.PathValue("id"), r.PathValue("action"))
}

func (pg *pages) snippetGet(w http.ResponseWriter, r *http.Request, sc scope, num, action string) {
	id, ok := parseID(num)
	switch {
	case !ok:
		pg.site.NotFound(w, r)
	case action == "":
		pg.show(w, r, sc, id, "", "")
	case action == "raw":
		pg.raw(w, r, sc, id)
	case action == "edit":
		pg.form(w, r, sc, id, nil, "")
	case action == "delete":
		pg.confirmDelete(w, r, sc, id)
	default:
		pg.site.NotFound(w, r)
	}
}

func (pg *pages) snippetPost(w http.ResponseWriter, r *http.Request, sc scope, num, action string) {
	id, ok := parseID(num)
	switch {
	case !ok:
		pg.site.NotFound(w, r)
	case action == "":
		pg.save(w, r, sc, id)
	case action == "delete":
		pg.remove(w, r, sc, id)
	case action == "notes" && sc.project != "":
		pg.comment(w, r, sc, id)
	default:
		pg.site.NotFound(w, r)
	}
}

// read is a snippet of the scope with its content.
func (pg *pages) read(ctx context.Context, sc scope, id snippet.ID) (snippet.Snippet, []byte, error) {
	if sc.project == "" {
		return pg.s.PersonalSnippetContent(ctx, id)
	}
	return pg.s.ProjectSnippetContent(ctx, sc.project, id)
}

// mayChange is the Service's rule for an update or a delete: the author
// or a Master of the project, not archived; for a personal snippet its
// author or an administrator.
func (pg *pages) mayChange(ctx context.Context, sc scope, sn snippet.Snippet) bool {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return false
	}
	if sc.project == "" {
		return ownsOrAdmin(p, &Snippet{AuthorID: sn.AuthorID})
	}
	return canChange(p, sc.info, &Snippet{AuthorID: sn.AuthorID})
}

// person is a user as the pages show one.
type person = web.Person

// people looks authors up once per page.
type people struct {
	pg    *pages
	ctx   context.Context
	known map[int64]person
}

func (pg *pages) people(ctx context.Context) *people {
	return &people{pg: pg, ctx: ctx, known: map[int64]person{}}
}

// of is user id as the pages show it; a user who is gone, or cannot be
// read, is the ghost user (the page still shows the snippet).
func (pp *people) of(id int64) person {
	if p, ok := pp.known[id]; ok {
		return p
	}
	u, err := pp.pg.s.users.UserByID(pp.ctx, id)
	if err != nil {
		if !errors.Is(err, identity.ErrUserNotFound) {
			pp.pg.site.Logger().Warn("snippets page: an author could not be read", zap.Int64("user", id), zap.Error(err))
		}
		u.Name, u.Username = "Ghost User", "ghost"
	}
	p := person{Name: u.Name, Username: u.Username, Href: pp.pg.site.URL("/" + url.PathEscape(u.Username))}
	pp.known[id] = p
	return p
}

// row is a snippet in a list, or the head of its page.
type row struct {
	ID                  int64
	Title, FileName     string
	Visibility          string
	Href                string
	Author              person
	CreatedAt, Updated  time.Time
	Size                int64
	Project, ProjectURL string
}

func (pg *pages) row(sc scope, pp *people, sn snippet.Snippet) row {
	return row{ID: int64(sn.ID), Title: sn.Title, FileName: sn.FileName, Visibility: string(sn.Visibility),
		Href: pg.site.URL(sc.href(sn.ID, "")), Author: pp.of(sn.AuthorID), CreatedAt: sn.CreatedAt, Updated: sn.UpdatedAt, Size: int64(sn.Size)}
}

type listData struct {
	Heading, NewHref, Empty string
	Tabs                    []tab
	Rows                    []row
	Total, Page, Pages      int
	PrevHref, NextHref      string
}

type tab struct {
	Label, Href string
	Current     bool
}

// list is a scope's snippets, 20 a page; which is "" for a project's,
// "own" or "explore" for the personal ones.
func (pg *pages) list(w http.ResponseWriter, r *http.Request, sc scope, which string) {
	ctx := r.Context()
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	offset := (page - 1) * snippetsPerPage
	var list []snippet.Snippet
	var total int
	var err error
	switch which {
	case "own":
		list, total, err = pg.s.OwnSnippets(ctx, offset, snippetsPerPage)
	case "explore":
		list, total, err = pg.s.PublicSnippets(ctx, offset, snippetsPerPage)
	default:
		list, total, err = pg.s.ProjectSnippets(ctx, sc.project, offset, snippetsPerPage)
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	self := sc.base()
	if which == "explore" {
		self = "/explore/snippets"
	}
	d := listData{Heading: "Snippets", Total: total, Page: page, Pages: max((total+snippetsPerPage-1)/snippetsPerPage, 1),
		Empty: "There are no snippets to show."}
	p := auth.FromContext(ctx)
	if sc.project == "" {
		d.Tabs = []tab{{Label: "Your snippets", Href: pg.site.URL("/snippets"), Current: which == "own"},
			{Label: "Public snippets", Href: pg.site.URL("/explore/snippets"), Current: which == "explore"}}
		if p.User != nil && !p.User.External {
			d.NewHref = pg.site.URL("/snippets/new")
		}
	} else if _, err := pg.s.access.Require(ctx, sc.project, projects.CreateSnippet); err == nil && p.User != nil {
		d.NewHref = pg.site.URL(sc.base() + "/new")
	}
	pp := pg.people(ctx)
	for _, sn := range list {
		d.Rows = append(d.Rows, pg.row(sc, pp, sn))
	}
	if page > 1 {
		d.PrevHref = pg.site.URL(self + "?page=" + strconv.Itoa(page-1))
	}
	if page < d.Pages {
		d.NextHref = pg.site.URL(self + "?page=" + strconv.Itoa(page+1))
	}
	pg.t.Render(w, r, "list", web.Page{Title: sc.title("Snippets"), Project: sc.header(), Tab: "snippets",
		Crumbs: sc.listCrumbs(), Data: d})
}

func (pg *pages) ownList(w http.ResponseWriter, r *http.Request) { pg.list(w, r, personal(), "own") }
func (pg *pages) explore(w http.ResponseWriter, r *http.Request) {
	pg.list(w, r, personal(), "explore")
}

// lineView is a line of a snippet's file, highlighted.
type lineView struct {
	N    int
	HTML template.HTML
}

type showData struct {
	Snippet                       row
	Description                   template.HTML
	Lines                         []lineView
	RawHref, EditHref, DeleteHref string
	// Comments: a project snippet's timeline is shown.
	Comments bool
	Timeline web.Timeline
}

// show is a snippet: its title, description, highlighted file and, for a
// project snippet, its comments with the comment form. draft and preview
// keep a comment being written (Preview needs no JavaScript), problem
// says why one was refused.
func (pg *pages) show(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID, draft, problem string) {
	ctx := r.Context()
	sn, code, err := pg.read(ctx, sc, id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	resolver := pg.site.Resolver(nil)
	render := func(src string) template.HTML {
		return markup.Render(ctx, []byte(src), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: sc.project, Resolver: resolver})
	}
	pp := pg.people(ctx)
	self := sc.href(id, "")
	d := showData{Snippet: pg.row(sc, pp, sn), RawHref: pg.site.URL(self + "/raw"), Timeline: web.Timeline{Noun: "comments"}}
	signedIn := auth.FromContext(ctx).User != nil
	if sn.Description != nil {
		d.Description = render(*sn.Description)
	}
	// Highlight bounds its own work (markup.MaxHighlightBytes and
	// MaxHighlightLines: beyond them the lines are plain escaped text);
	// the content is at most 1 MiB (the Service's bound).
	for n, l := range markup.Highlight(sn.FileName, code) {
		d.Lines = append(d.Lines, lineView{N: n + 1, HTML: l})
	}
	if pg.mayChange(ctx, sc, sn) {
		d.EditHref, d.DeleteHref = pg.site.URL(self+"/edit"), pg.site.URL(self+"/delete")
	}
	if sc.project != "" && pg.s.collab != nil {
		d.Comments = true
		switch {
		case !signedIn:
			d.Timeline.SignInHref = pg.site.URL("/users/sign_in?return_to=" + url.QueryEscape(pg.site.Prefix()+self))
		case !sc.info.Archived:
			d.Timeline.Comment = &web.CommentForm{Action: pg.site.URL(self + "/notes"), CSRF: pg.site.CSRFToken(w, r), Draft: draft, Problem: problem}
			if draft != "" && problem == "" {
				d.Timeline.Comment.Preview = render(draft)
			}
		}
		notesPage, _ := strconv.Atoi(r.URL.Query().Get("notes_page"))
		notesPage = max(notesPage, 1)
		where := target.Where{Type: snippet.NoteableType, Project: sc.project, Ref: strconv.FormatInt(int64(id), 10)}
		notes, total, err := pg.s.collab.Notes(ctx, where, target.Page{Offset: (notesPage - 1) * notesPerPage, Limit: notesPerPage})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		if notesPage > 1 {
			d.Timeline.EarlierHref = pg.site.URL(self + "?notes_page=" + strconv.Itoa(notesPage-1))
		}
		if notesPage*notesPerPage < total {
			d.Timeline.LaterHref = pg.site.URL(self + "?notes_page=" + strconv.Itoa(notesPage+1))
		}
		for _, n := range notes {
			nv := web.Note{ID: n.ID, Anchor: web.NoteAnchor(n.ID), Author: pp.of(n.AuthorID), System: n.System,
				CreatedAt: n.CreatedAt, Edited: !n.System && n.UpdatedAt.Sub(n.CreatedAt) > time.Second, Body: render(n.Body)}
			d.Timeline.Entries = append(d.Timeline.Entries, web.Entry{ID: n.DiscussionID, Notes: []web.Note{nv}})
		}
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "show", web.Page{Title: sc.title(sn.Title + " ($" + strconv.FormatInt(int64(id), 10) + ")"),
		Project: sc.header(), Tab: "snippets", Status: status,
		Crumbs: sc.crumbs(web.Crumb{Label: "$" + strconv.FormatInt(int64(id), 10)}), Data: d})
}

// raw is the snippet's content as plain text, as the API's raw endpoint
// serves it: never sniffed, named by its file name, and sandboxed by its
// CSP like the repository's raw files, so it can never run as this site's
// page.
func (pg *pages) raw(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID) {
	sn, code, err := pg.read(r.Context(), sc, id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("Content-Disposition", contentDisposition(sn.FileName))
	hdr.Set("Content-Length", strconv.Itoa(len(code)))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "sandbox")
	hdr.Set("Cache-Control", "private, no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(code)
	}
}

// comment posts the form's comment on a project snippet, or with the
// Preview button shows the snippet again with it rendered, unsaved.
func (pg *pages) comment(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID) {
	body := r.PostFormValue("note")
	if r.PostFormValue("preview") != "" {
		pg.show(w, r, sc, id, body, "")
		return
	}
	if strings.TrimSpace(body) == "" {
		pg.show(w, r, sc, id, body, "A comment cannot be empty.")
		return
	}
	if pg.s.collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	where := target.Where{Type: snippet.NoteableType, Project: sc.project, Ref: strconv.FormatInt(int64(id), 10)}
	posted, err := pg.s.collab.CreateNote(r.Context(), where, target.NoteInput{Body: &body})
	if err != nil {
		var invalid *target.InvalidError
		if errors.As(err, &invalid) {
			pg.show(w, r, sc, id, body, "The comment was not saved: "+invalid.Error())
			return
		}
		if errors.Is(err, target.ErrInvalid) {
			pg.show(w, r, sc, id, body, "The comment was not saved: it is not valid.")
			return
		}
		pg.fail(w, r, err)
		return
	}
	anchor := ""
	if posted.Note != nil {
		anchor = "#note_" + strconv.FormatInt(posted.Note.ID, 10)
	}
	pg.site.Redirect(w, r, sc.href(id, "")+anchor)
}

// snippetForm is the new and edit forms' fields, kept when refused.
type snippetForm struct {
	Title, FileName, Description, Content string
	Visibility                            string
}

type formData struct {
	Form               snippetForm
	Visibilities       []tab
	Action, CancelHref string
	Problem            string
	New                bool
}

// form is the new snippet form (id 0) or a snippet's edit form; f, when
// set, is a refused form's input, shown again with problem.
func (pg *pages) form(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID, f *snippetForm, problem string) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	in := snippetForm{Visibility: string(snippet.Private)}
	if sc.project == "" {
		in.Visibility = string(snippet.Internal)
	}
	action, cancel := sc.base(), sc.base()
	if id == 0 {
		if sc.project != "" {
			if _, err := pg.s.access.Require(ctx, sc.project, projects.CreateSnippet); err != nil {
				pg.fail(w, r, err)
				return
			}
		} else if auth.FromContext(ctx).User.External {
			pg.site.Error(w, r, http.StatusForbidden)
			return
		}
	} else {
		sn, code, err := pg.read(ctx, sc, id)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		if !pg.mayChange(ctx, sc, sn) {
			pg.site.Error(w, r, http.StatusForbidden)
			return
		}
		in = snippetForm{Title: sn.Title, FileName: sn.FileName, Content: string(code), Visibility: string(sn.Visibility)}
		if sn.Description != nil {
			in.Description = *sn.Description
		}
		action, cancel = sc.href(id, ""), sc.href(id, "")
	}
	if f != nil {
		in = *f
	}
	d := formData{Form: in, Action: pg.site.URL(action), CancelHref: pg.site.URL(cancel), Problem: problem, New: id == 0}
	for _, v := range []snippet.Visibility{snippet.Private, snippet.Internal, snippet.Public} {
		d.Visibilities = append(d.Visibilities, tab{Label: string(v), Current: string(v) == in.Visibility})
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	title, crumb := "New snippet", []web.Crumb{{Label: "New"}}
	if id != 0 {
		title = "Edit $" + strconv.FormatInt(int64(id), 10)
		crumb = []web.Crumb{{Label: "$" + strconv.FormatInt(int64(id), 10), Href: sc.href(id, "")}, {Label: "Edit"}}
	}
	pg.t.Render(w, r, "form", web.Page{Title: sc.title(title), Project: sc.header(), Tab: "snippets", Status: status,
		Crumbs: sc.crumbs(crumb...), Data: d})
}

// save creates (id 0) or updates a snippet from the form, as POST and PUT
// .../snippets do.
func (pg *pages) save(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	// A browser sends a textarea's line ends as CRLF whatever the text
	// had: the file keeps LF ends, as one written through the API would.
	f := snippetForm{Title: r.PostFormValue("title"), FileName: r.PostFormValue("file_name"),
		Description: r.PostFormValue("description"), Content: strings.ReplaceAll(r.PostFormValue("content"), "\r\n", "\n"),
		Visibility: r.PostFormValue("visibility")}
	vis := snippet.Visibility(f.Visibility)
	in := snippet.Fields{Title: &f.Title, FileName: &f.FileName, Content: &f.Content, Description: &f.Description, Visibility: &vis}
	var sn snippet.Snippet
	var err error
	switch {
	case id == 0 && sc.project == "":
		sn, err = pg.s.CreatePersonalSnippet(ctx, in)
	case id == 0:
		sn, err = pg.s.CreateProjectSnippet(ctx, sc.project, in)
	case sc.project == "":
		sn, err = pg.s.UpdatePersonalSnippet(ctx, id, in)
	default:
		sn, err = pg.s.UpdateProjectSnippet(ctx, sc.project, id, in)
	}
	if err != nil {
		if text := refusal(err); text != "" {
			pg.form(w, r, sc, id, &f, text)
			return
		}
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, sc.href(sn.ID, ""))
}

// refusal is why the Service refused a form, in words the page may show
// (its own validation messages, never an internal error's text); "" for
// an error that is not about the input.
func refusal(err error) string {
	var params *snippet.ParamsError
	var invalid *snippet.InvalidError
	switch {
	case errors.As(err, &invalid):
		names := make([]string, 0, len(invalid.Fields))
		for f := range invalid.Fields {
			names = append(names, f)
		}
		slices.Sort(names)
		var parts []string
		for _, n := range names {
			for _, text := range invalid.Fields[n] {
				parts = append(parts, strings.ReplaceAll(n, "_", " ")+" "+text)
			}
		}
		return "The snippet was not saved: " + strings.Join(parts, "; ") + "."
	case errors.As(err, &params):
		return "The snippet was not saved: " + strings.ReplaceAll(strings.Join(params.Params, ", "), "_", " ") + " missing."
	case errors.Is(err, snippet.ErrInvalidVisibility):
		return "The snippet was not saved: choose a visibility."
	case errors.Is(err, snippet.ErrInvalid), errors.Is(err, snippet.ErrMissing), errors.Is(err, snippet.ErrNothingGiven):
		return "The snippet was not saved: it is not valid."
	}
	return ""
}

type deleteData struct {
	Snippet            row
	Action, CancelHref string
}

// confirmDelete asks before a snippet is deleted (the form posts to the
// same path).
func (pg *pages) confirmDelete(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	sn, _, err := pg.read(ctx, sc, id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	if !pg.mayChange(ctx, sc, sn) {
		pg.site.Error(w, r, http.StatusForbidden)
		return
	}
	d := deleteData{Snippet: pg.row(sc, pg.people(ctx), sn), Action: pg.site.URL(sc.href(id, "/delete")), CancelHref: pg.site.URL(sc.href(id, ""))}
	pg.t.Render(w, r, "delete", web.Page{Title: sc.title("Delete $" + strconv.FormatInt(int64(id), 10)), Project: sc.header(), Tab: "snippets",
		Crumbs: sc.crumbs(web.Crumb{Label: "$" + strconv.FormatInt(int64(id), 10), Href: sc.href(id, "")}, web.Crumb{Label: "Delete"}), Data: d})
}

// remove deletes the snippet, as DELETE .../snippets/:id does, and goes
// back to the list.
func (pg *pages) remove(w http.ResponseWriter, r *http.Request, sc scope, id snippet.ID) {
	ctx := r.Context()
	var err error
	if sc.project == "" {
		err = pg.s.DeletePersonalSnippet(ctx, id)
	} else {
		var gone *snippet.Snippet
		if gone, err = pg.s.DeleteProjectSnippet(ctx, sc.project, id); err == nil && gone == nil {
			err = snippet.ErrNotFound
		}
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, sc.base())
}
