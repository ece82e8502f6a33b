package internal

// The to-do pages (issue 29): /dashboard/todos lists the visitor's todos
// as GET /todos does (the same service call, so the same visibility: a
// todo whose target they can no longer see is left out), and its forms
// mark one or all done as POST /todos/:id/mark_as_done and
// /todos/mark_as_done do. The header's menu shows the pending count.

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

//go:embed all:templates
var pageTemplates embed.FS

// todosPerPage is one page of the to-do list.
const todosPerPage = 20

type todoPages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the to-do pages and the pending count in the menu.
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "collab", Register: func(site *web.Site) {
		pg := &todoPages{site: site, s: s, t: site.Templates(pageTemplates, "templates/todos/*.html")}
		site.AddMenu(web.MenuItem{Label: "To-dos", Path: "/dashboard/todos", Order: 17, SignedIn: true, Count: s.pendingTodoCount})
		site.Handle("GET /dashboard/todos", pg.list)
		site.Handle("POST /dashboard/todos/mark_as_done", pg.markAll)
		site.Handle("POST /dashboard/todos/{id}/mark_as_done", pg.markOne)
	}}
}

// pendingTodoCount is the header's count: the caller's pending todos
// that GET /todos would list. It reads at most web.MaxMenuCount of them
// (the header shows "99+" beyond), and leaves out, as the list does, those
// whose target the caller can no longer see: a project left, an issue
// made confidential. The walk is bounded, and projects are resolved once
// each, so the count costs at most a hundred reads on a page.
func (s *Service) pendingTodoCount(ctx context.Context) int {
	user := auth.FromContext(ctx).UserID()
	if user == 0 {
		return 0
	}
	var list []*Todo
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := todosTable.FirstIDsBy(tx, "user_state", store.IDString(user)+":"+StatePending, web.MaxMenuCount)
		if err != nil {
			return err
		}
		list, err = loadTodos(tx, ids)
		return err
	})
	if err == nil && len(list) == web.MaxMenuCount {
		// More may follow: "99+" whatever the first hundred hold.
		return web.MaxMenuCount
	}
	if err == nil {
		list, err = s.shown(ctx, list)
	}
	if err != nil {
		s.log.Warn("todos: the pending count could not be read", zap.Error(err))
		return 0
	}
	return len(list)
}

// todoRow is a to-do as the list shows it.
type todoRow struct {
	ID                     int64
	Author, AuthorHref     string
	Action                 string
	Reference, Title, Href string
	Project, ProjectHref   string
	Body                   string
	CreatedAt              time.Time
	Pending                bool
	DoneAction             string
}

type todoTab struct {
	Label, Href string
	Current     bool
}

type todoData struct {
	Tabs               []todoTab
	Rows               []todoRow
	Total, Page, Pages int
	PrevHref, NextHref string
	Pending            bool
	MarkAllAction      string
	Empty              string
}

// actionTexts are the todos' actions as the list words them.
var actionTexts = map[string]string{
	string(target.Assigned):          "assigned you",
	string(target.Mentioned):         "mentioned you on",
	string(target.BuildFailed):       "the build failed for",
	string(target.Marked):            "added a to-do for",
	string(target.Unmergeable):       "could not merge",
	string(target.DirectlyAddressed): "addressed you on",
}

// list is the visitor's pending (or done) todos, newest first, 20 a page.
func (pg *todoPages) list(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	q := r.URL.Query()
	state := StatePending
	if q.Get("state") == StateDone {
		state = StateDone
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	list, total, err := pg.s.Todos(ctx, target.TodoFilter{State: state}, target.Page{Offset: (page - 1) * todosPerPage, Limit: todosPerPage})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	stored := make([]*Todo, len(list))
	notes := map[int64]int64{}
	for i, t := range list {
		stored[i] = todoOf(t)
		notes[t.ID] = t.NoteID
	}
	views, err := pg.s.render(ctx, stored)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	link := func(state string, page int) string {
		v := url.Values{}
		if state == StateDone {
			v.Set("state", StateDone)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return pg.site.URL("/dashboard/todos")
		}
		return pg.site.URL("/dashboard/todos?" + v.Encode())
	}
	d := todoData{Total: total, Page: page, Pages: max((total+todosPerPage-1)/todosPerPage, 1), Pending: state == StatePending,
		Tabs: []todoTab{{Label: "To do", Href: link(StatePending, 1), Current: state == StatePending},
			{Label: "Done", Href: link(StateDone, 1), Current: state == StateDone}},
		MarkAllAction: pg.site.URL("/dashboard/todos/mark_as_done")}
	base := api.ExternalURLFrom(ctx)
	for _, v := range views {
		row := todoRow{ID: v.ID, Author: v.Author.Name, AuthorHref: pg.site.URL("/" + url.PathEscape(v.Author.Username)),
			Action: actionTexts[v.ActionName], Project: v.Project.NameWithNamespace,
			ProjectHref: pg.site.URL("/" + web.EscapePath(v.Project.PathWithNamespace)),
			Body:        firstLine(v.Body, 200), CreatedAt: time.Time(v.CreatedAt), Pending: v.State == StatePending,
			DoneAction: pg.site.URL("/dashboard/todos/" + strconv.FormatInt(v.ID, 10) + "/mark_as_done")}
		if row.Action == "" {
			row.Action = v.ActionName
		}
		var head struct {
			IID   int64  `json:"iid"`
			Title string `json:"title"`
		}
		if b, err := json.Marshal(v.Target); err == nil {
			_ = json.Unmarshal(b, &head)
		}
		row.Title = head.Title
		if row.Body == row.Title {
			// A marked or assigned todo's body is the target's title.
			row.Body = ""
		}
		sigil := "#"
		if v.TargetType == "MergeRequest" {
			sigil = "!"
		}
		if head.IID > 0 {
			row.Reference = sigil + strconv.FormatInt(head.IID, 10)
		}
		row.Href = pg.site.URL(pagePath(base, v.Project.PathWithNamespace, v.TargetURL))
		if n := notes[v.ID]; n > 0 {
			row.Href += "#note_" + strconv.FormatInt(n, 10)
		}
		d.Rows = append(d.Rows, row)
	}
	if page > 1 {
		d.PrevHref = link(state, page-1)
	}
	if page < d.Pages {
		d.NextHref = link(state, page+1)
	}
	if state == StateDone {
		d.Empty = "There are no done to-dos."
	} else {
		d.Empty = "You have nothing to do."
	}
	pg.t.Render(w, r, "list", web.Page{Title: "To-dos", Data: d})
}

// pagePath is a target's page under the site's root, from the API's
// target_url ("<external>/group/project/issues/12"): the pages live under
// "/-/" ("/group/project/-/issues/12"). A URL that is not the site's is
// the project's page.
func pagePath(base, project, targetURL string) string {
	full := "/" + web.EscapePath(project)
	rest, ok := strings.CutPrefix(targetURL, strings.TrimRight(base, "/")+"/"+project+"/")
	if !ok || rest == "" {
		return full
	}
	segs := strings.Split(strings.TrimPrefix(rest, "-/"), "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return full + "/-/" + strings.Join(segs, "/")
}

// firstLine is s's first line, at most n runes (a todo's body may be a
// whole note).
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	if cut {
		return s + " …"
	}
	return s
}

// markOne marks one of the visitor's todos done and goes back to the list.
func (pg *todoPages) markOne(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		pg.site.NotFound(w, r)
		return
	}
	if _, err := pg.s.MarkTodoDone(r.Context(), id); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/dashboard/todos")
}

// markAll marks every pending todo of the visitor done.
func (pg *todoPages) markAll(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	if err := pg.s.MarkAllTodosDone(r.Context()); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/dashboard/todos")
}

// fail answers a failed call without its text: another's todo (or none)
// is the 404 page, anything else the 500 page and a log line.
func (pg *todoPages) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrTodoNotFound) {
		pg.site.NotFound(w, r)
		return
	}
	pg.site.Logger().Error("todos page failed", zap.String("path", r.URL.Path), zap.Error(err))
	pg.site.Error(w, r, http.StatusInternalServerError)
}
