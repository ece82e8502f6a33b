package internal

// The issues' web pages (issue 29): a project's list, an issue with its
// timeline, the comment, close and reopen forms, subscriptions, and the
// new issue form. Every read and every change goes through the same
// service calls as the API (List, Get, Create, Update, the collab
// service's notes and subscriptions), so permissions, events, mail and
// webhooks are the API's; the page only decides what to offer.

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/markup"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

//go:embed all:templates
var pageTemplates embed.FS

// issuesPerPage is one page of a project's issue list, as GitLab's.
const issuesPerPage = 20

// notesPerPage bounds the timeline one issue page shows; an issue with
// more has pages of them (each note is rendered Markdown).
const notesPerPage = 500

type issuePages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the issues module's pages and its references (#12).
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "issues", Register: func(site *web.Site) {
		registerReferences(site, s)
		pg := &issuePages{site: site, s: s, t: site.Templates(pageTemplates, "templates/issues/*.html")}
		site.AddProjectTab(web.ProjectTab{Key: "issues", Label: "Issues", Suffix: "/-/issues", Order: 50, Feature: "issues_enabled"})
		site.Project("GET issues", pg.get)
		site.Project("POST issues", pg.post)
		pg.registerLabelPages(site)
		registerDashboard(site, s)
	}}
}

// get serves "/-/issues" (the list), "/-/issues/new" and "/-/issues/12".
func (pg *issuePages) get(w http.ResponseWriter, r *http.Request) {
	switch rest := r.PathValue("rest"); {
	case rest == "":
		pg.list(w, r)
	case rest == "new":
		pg.newForm(w, r, issueForm{}, "")
	default:
		num, sub, _ := strings.Cut(rest, "/")
		iid, ok := parseIID(num)
		switch {
		case !ok:
			pg.site.NotFound(w, r)
		case sub == "":
			pg.show(w, r, iid, "", "")
		case sub == "edit":
			pg.editForm(w, r, iid, nil, "")
		default:
			pg.site.NotFound(w, r)
		}
	}
}

// post serves the forms: "/-/issues" (create), "/-/issues/12" (edit),
// "/-/issues/12/notes", "/close", "/reopen", "/subscribe", "/unsubscribe",
// "/todo" and "/award_emoji".
func (pg *issuePages) post(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("rest")
	if rest == "" {
		pg.create(w, r)
		return
	}
	num, action, _ := strings.Cut(rest, "/")
	iid, ok := parseIID(num)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	switch action {
	case "":
		pg.update(w, r, iid)
	case "todo":
		pg.addTodo(w, r, iid)
	case "award_emoji":
		pg.award(w, r, iid)
	case "notes":
		pg.comment(w, r, iid)
	case "close", "reopen":
		pg.changeState(w, r, iid, issue.StateEvent(action))
	case "subscribe", "unsubscribe":
		pg.subscribe(w, r, iid, action == "subscribe")
	default:
		pg.site.NotFound(w, r)
	}
}

func parseIID(s string) (issue.IID, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return issue.IID(n), err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// refusals sort the issues pages' failed service calls: a project or
// issue the visitor may not see is missing (sign in, or the 404 page), a
// refused change the 403 page, anything else the 500 page with a log line.
var refusals = web.Refusals{Page: "issues page",
	Missing:   []error{projects.ErrNotFound, issue.ErrNotFound, target.ErrNotFound},
	Forbidden: []error{projects.ErrForbidden}}

// fail answers a page whose service call failed, never with the error's
// text (refusals).
func (pg *issuePages) fail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, refusals)
}

// header is the project's header on the issues' pages.
func header(info projects.ProjectInfo) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// issuesURL is the project's issues page (escaped), with suffix
// ("/12", "/12/notes") after it.
func issuesURL(full, suffix string) string {
	return "/" + web.EscapePath(full) + "/-/issues" + suffix
}

// labelChip is a label as the pages show it: its name beside a dot of its
// colour (an SVG fill: the CSP allows no inline style).
type labelChip struct {
	Name, Color, Href string
}

var colorPattern = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}){1,2}$`)

// person is a user as the pages show one.
type person = web.Person

type issueRow struct {
	IID                 int64
	Title, Href         string
	State               string
	Confidential        bool
	Author              person
	CreatedAt           time.Time
	Labels              []labelChip
	Milestone, Assignee string
	DueDate             string
	Notes               int
}

type stateTab struct {
	Key, Label, Href string
	Count            int
	Current          bool
}

type sortOption struct {
	Key, Label string
	Selected   bool
}

type listData struct {
	Action, NewHref           string
	LabelsHref                string
	MilestonesHref            string
	States                    []stateTab
	State, Search, Label      string
	Milestone                 string
	Sorts                     []sortOption
	Rows                      []issueRow
	Total, Page, Pages        int
	PrevHref, NextHref, Empty string
}

// issueSorts are the list's orders: the API's order_by and sort.
var issueSorts = []struct{ key, label, orderBy, sort string }{
	{"created_desc", "Newest", "created_at", "desc"},
	{"created_asc", "Oldest", "created_at", "asc"},
	{"updated_desc", "Recently updated", "updated_at", "desc"},
	{"updated_asc", "Least recently updated", "updated_at", "asc"},
}

// list is a project's issues: a state's tab (with each state's count),
// search, a label and a milestone filter, an order, 20 a page.
func (pg *issuePages) list(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case "opened", "closed", "all":
	default:
		state = "opened"
	}
	search := strings.TrimSpace(q.Get("search"))
	label := strings.TrimSpace(q.Get("label_name"))
	milestone := strings.TrimSpace(q.Get("milestone_title"))
	sortKey := q.Get("sort")
	orderBy, sortDir := "created_at", "desc"
	found := false
	for _, s := range issueSorts {
		if s.key == sortKey {
			orderBy, sortDir, found = s.orderBy, s.sort, true
		}
	}
	if !found {
		sortKey = issueSorts[0].key
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	base := issue.ListQuery{Search: search, Milestone: milestone, OrderBy: orderBy, Sort: sortDir}
	if label != "" {
		base.Labels = []string{label}
	}
	link := func(state string, page int) string {
		v := url.Values{}
		v.Set("state", state)
		for k, val := range map[string]string{"search": search, "label_name": label, "milestone_title": milestone} {
			if val != "" {
				v.Set(k, val)
			}
		}
		if sortKey != issueSorts[0].key {
			v.Set("sort", sortKey)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		return pg.site.URL(issuesURL(full, "") + "?" + v.Encode())
	}
	d := listData{Action: pg.site.URL(issuesURL(full, "")), LabelsHref: pg.site.URL(labelsURL(full, "")),
		MilestonesHref: pg.site.URL(milestonesURL(full, "")), State: state, Search: search, Label: label, Milestone: milestone, Page: page}
	if auth.FromContext(ctx).User != nil && !info.Archived {
		d.NewHref = pg.site.URL(issuesURL(full, "/new"))
	}
	for _, st := range []struct{ key, label string }{{"opened", "Open"}, {"closed", "Closed"}, {"all", "All"}} {
		cq := base
		cq.State, cq.Limit = st.key, 1
		_, n, err := pg.s.List(ctx, full, cq)
		if err != nil {
			pg.listFailed(w, r, err)
			return
		}
		d.States = append(d.States, stateTab{Key: st.key, Label: st.label, Count: n, Current: st.key == state, Href: link(st.key, 1)})
	}
	for _, s := range issueSorts {
		d.Sorts = append(d.Sorts, sortOption{Key: s.key, Label: s.label, Selected: s.key == sortKey})
	}
	lq := base
	lq.State, lq.Offset, lq.Limit = state, (page-1)*issuesPerPage, issuesPerPage
	list, total, err := pg.s.List(ctx, full, lq)
	if err != nil {
		pg.listFailed(w, r, err)
		return
	}
	d.Total, d.Pages = total, max((total+issuesPerPage-1)/issuesPerPage, 1)
	if d.Rows, err = pg.rows(ctx, info, list); err != nil {
		pg.fail(w, r, err)
		return
	}
	if page > 1 {
		d.PrevHref = link(state, page-1)
	}
	if page < d.Pages {
		d.NextHref = link(state, page+1)
	}
	switch {
	case search != "" || label != "" || milestone != "":
		d.Empty = "No issues match these filters."
	case state == "closed":
		d.Empty = "There are no closed issues."
	default:
		d.Empty = "There are no issues to show."
	}
	pg.t.Render(w, r, "list", web.Page{Title: "Issues · " + info.NameWithNamespace, Project: header(info), Tab: "issues",
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Issues"}}, Data: d})
}

// listFailed answers a filter the service refused (a value it does not
// know) as a 400 page, and anything else as fail does.
func (pg *issuePages) listFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, issue.ErrInvalidValue) || errors.Is(err, issue.ErrInvalidParam) {
		pg.site.ErrorMessage(w, r, http.StatusBadRequest, "Invalid filter", "A filter of this list has a value it may not have.")
		return
	}
	pg.fail(w, r, err)
}

// rows are the list's issues as rows: their labels, milestone, assignee
// and comment counts read in one transaction.
func (pg *issuePages) rows(ctx context.Context, info projects.ProjectInfo, list []issue.Issue) ([]issueRow, error) {
	var out []issueRow
	err := pg.s.db.View(ctx, func(tx *store.Tx) error {
		views, err := pg.s.renderer(ctx).views(tx, list)
		if err != nil {
			return err
		}
		chips := map[int64]labelChip{}
		for n, i := range list {
			v := views[n]
			row := issueRow{IID: int64(i.IID), Title: i.Title, Href: pg.site.URL(issuesURL(info.PathWithNamespace, "/"+strconv.FormatInt(int64(i.IID), 10))),
				State: string(i.State), Confidential: i.Confidential, Author: pg.person(v.Author.Name, v.Author.Username),
				CreatedAt: i.CreatedAt, DueDate: i.DueDate, Notes: v.UserNotesCount}
			if row.Labels, err = pg.chips(tx, info, i.LabelIDs, chips); err != nil {
				return err
			}
			if v.Milestone != nil {
				row.Milestone = v.Milestone.Title
			}
			if v.Assignee != nil {
				row.Assignee = v.Assignee.Name
			}
			out = append(out, row)
		}
		return nil
	})
	return out, err
}

// chips are an issue's labels, sorted by name, each linking to the list
// filtered by it; seen caches them across issues.
func (pg *issuePages) chips(tx *store.Tx, info projects.ProjectInfo, ids []issue.LabelID, seen map[int64]labelChip) ([]labelChip, error) {
	var out []labelChip
	for _, lid := range ids {
		c, ok := seen[int64(lid)]
		if !ok {
			l, err := labels.Get(tx, int64(lid))
			if errors.Is(err, store.ErrNotFound) {
				seen[int64(lid)] = c
				continue
			}
			if err != nil {
				return nil, err
			}
			c = labelChip{Name: l.Name, Color: "#888888",
				Href: pg.site.URL(issuesURL(info.PathWithNamespace, "") + "?" + url.Values{"label_name": {l.Name}}.Encode())}
			if colorPattern.MatchString(l.Color) {
				c.Color = l.Color
			}
			seen[int64(lid)] = c
		}
		if c.Name != "" {
			out = append(out, c)
		}
	}
	sortChips(out)
	return out, nil
}

func sortChips(c []labelChip) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && strings.ToLower(c[j].Name) < strings.ToLower(c[j-1].Name); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

func (pg *issuePages) person(name, username string) person {
	return person{Name: name, Username: username, Href: pg.site.URL("/" + url.PathEscape(username))}
}

type showData struct {
	Issue                     issueRow
	Description               template.HTML
	Awards                    *web.Awards
	Timeline                  web.Timeline
	NotesTotal                int
	SignedIn                  bool
	MayChangeState            bool
	Subscribed                bool
	StateHref                 string
	SubscribeHref, SignInHref string
	EditHref, TodoHref        string
	Open                      bool
	UpdatedAt                 time.Time
}

// show is an issue: its fields, its timeline (comments and system notes,
// oldest first, each with its anchor), and the forms the visitor may use.
// draft and preview keep a comment being written (the Preview button,
// which needs no JavaScript), problem says why one was refused.
func (pg *issuePages) show(w http.ResponseWriter, r *http.Request, iid issue.IID, draft, problem string) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	i, err := pg.s.Get(ctx, issue.Ref{Project: full, IID: iid})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	rows, err := pg.rows(ctx, info, []issue.Issue{i})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pr := auth.FromContext(ctx)
	resolver := pg.site.Resolver(nil)
	render := func(src string) template.HTML {
		return markup.Render(ctx, []byte(src), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: info.PathWithNamespace, Resolver: resolver})
	}
	self := issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10))
	d := showData{Issue: rows[0], Description: render(i.Description), SignedIn: pr.User != nil, Open: i.State != issue.Closed,
		UpdatedAt: i.UpdatedAt, SignInHref: pg.site.URL("/users/sign_in?return_to=" + url.QueryEscape(pg.site.Prefix()+self)),
		Timeline: web.Timeline{Noun: "activity"}}
	if d.SignedIn {
		if !info.Archived {
			d.Timeline.Comment = &web.CommentForm{Action: pg.site.URL(self + "/notes"), CSRF: pg.site.CSRFToken(w, r), Draft: draft, Problem: problem}
			if draft != "" && problem == "" {
				d.Timeline.Comment.Preview = render(draft)
			}
		}
		d.MayChangeState = !info.Archived && mayUpdate(info, &Issue{AuthorID: i.AuthorID, AssigneeIDs: i.AssigneeIDs}, pr.UserID())
		if d.Subscribed, err = pg.s.collab.Subscribed(ctx, noteableOf(i), pr.UserID()); err != nil {
			pg.fail(w, r, err)
			return
		}
		if d.Open {
			d.StateHref = pg.site.URL(self + "/close")
		} else {
			d.StateHref = pg.site.URL(self + "/reopen")
		}
		if d.MayChangeState {
			d.EditHref = pg.site.URL(self + "/edit")
		}
		d.TodoHref = pg.site.URL(self + "/todo")
		if d.Subscribed {
			d.SubscribeHref = pg.site.URL(self + "/unsubscribe")
		} else {
			d.SubscribeHref = pg.site.URL(self + "/subscribe")
		}
	} else {
		d.Timeline.SignInHref = d.SignInHref
	}
	notesPage, _ := strconv.Atoi(r.URL.Query().Get("notes_page"))
	notesPage = max(notesPage, 1)
	where := target.Where{Type: issue.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	notes, total, err := pg.s.collab.Notes(ctx, where, target.Page{Offset: (notesPage - 1) * notesPerPage, Limit: notesPerPage})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.NotesTotal = total
	if notesPage > 1 {
		d.Timeline.EarlierHref = pg.site.URL(self + "?notes_page=" + strconv.Itoa(notesPage-1))
	}
	if notesPage*notesPerPage < total {
		d.Timeline.LaterHref = pg.site.URL(self + "?notes_page=" + strconv.Itoa(notesPage+1))
	}
	authors := map[int64]int64{0: i.AuthorID}
	for _, n := range notes {
		authors[n.ID] = n.AuthorID
	}
	aw := pg.awarder(w, r, info, where, authors)
	if d.Awards, err = aw.Awards(ctx, 0); err != nil {
		pg.fail(w, r, err)
		return
	}
	var commented []int64
	for _, n := range notes {
		if !n.System {
			commented = append(commented, n.ID)
		}
	}
	noteAwards, err := pg.noteAwards(ctx, aw, commented)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	users := pg.s.renderer(ctx)
	for _, n := range notes {
		a := users.user(n.AuthorID)
		nv := web.Note{ID: n.ID, Anchor: web.NoteAnchor(n.ID), Author: pg.person(a.Name, a.Username),
			System: n.System, CreatedAt: n.CreatedAt, Edited: !n.System && n.UpdatedAt.Sub(n.CreatedAt) > time.Second}
		if n.System {
			// System notes are Fennec's own sentences, with Markdown
			// emphasis ("changed title from **a** to **b**").
			nv.Body = markup.Render(ctx, []byte(n.Body), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: info.PathWithNamespace})
		} else {
			nv.Body, nv.Awards = render(n.Body), noteAwards[n.ID]
		}
		d.Timeline.Entries = append(d.Timeline.Entries, web.Entry{ID: n.DiscussionID, Notes: []web.Note{nv}})
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "show", web.Page{Title: i.Title + " (#" + strconv.FormatInt(int64(iid), 10) + ") · Issues · " + info.NameWithNamespace,
		Project: header(info), Tab: "issues", Status: status,
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Issues", Href: issuesURL(full, "")},
			{Label: "#" + strconv.FormatInt(int64(iid), 10)}}, Data: d})
}

// comment posts the form's comment (or, with the Preview button, shows the
// issue again with the comment rendered under the form, unsaved).
func (pg *issuePages) comment(w http.ResponseWriter, r *http.Request, iid issue.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	body := r.PostFormValue("note")
	if r.PostFormValue("preview") != "" {
		pg.show(w, r, iid, body, "")
		return
	}
	if strings.TrimSpace(body) == "" {
		pg.show(w, r, iid, body, "A comment cannot be empty.")
		return
	}
	where := target.Where{Type: issue.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	posted, err := pg.s.collab.CreateNote(ctx, where, target.NoteInput{Body: &body})
	if err != nil {
		var invalid *target.InvalidError
		if errors.As(err, &invalid) || errors.Is(err, target.ErrInvalid) {
			pg.show(w, r, iid, body, "The comment was not saved: "+invalidText(err))
			return
		}
		pg.fail(w, r, err)
		return
	}
	anchor := ""
	if posted.Note != nil {
		anchor = "#note_" + strconv.FormatInt(posted.Note.ID, 10)
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10))+anchor)
}

// invalidText is a refused text's reason in words the page may show (the
// service's own validation messages, never an internal error's text).
func invalidText(err error) string {
	var invalid *target.InvalidError
	if errors.As(err, &invalid) {
		return invalid.Error()
	}
	return "it is not valid."
}

// changeState closes or reopens the issue, as PUT state_event does.
func (pg *issuePages) changeState(w http.ResponseWriter, r *http.Request, iid issue.IID, ev issue.StateEvent) {
	full := r.PathValue("owner")
	if _, err := pg.s.Update(r.Context(), issue.Ref{Project: full, IID: iid}, issue.Fields{}, ev); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10)))
}

// subscribe subscribes the visitor to the issue's notifications, or
// unsubscribes them.
func (pg *issuePages) subscribe(w http.ResponseWriter, r *http.Request, iid issue.IID, on bool) {
	ctx, full := r.Context(), r.PathValue("owner")
	i, err := pg.s.Get(ctx, issue.Ref{Project: full, IID: iid})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	if _, err := pg.s.collab.Subscribe(ctx, noteableOf(i), auth.FromContext(ctx).UserID(), on); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10)))
}

// issueForm is the new issue form's fields, kept when it is refused.
type issueForm struct {
	Title, Description, Labels string
	Confidential               bool
}

type newData struct {
	Form            issueForm
	Labels          web.LabelPicker
	Action, Problem string
	CancelHref      string
}

// newForm is the new issue form; problem says why the last one was
// refused.
func (pg *issuePages) newForm(w http.ResponseWriter, r *http.Request, f issueForm, problem string) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	info, err := pg.s.writeProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	labels, err := pg.labelPicker(ctx, info, splitLabels(f.Labels))
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "new", web.Page{Title: "New issue · " + info.NameWithNamespace, Project: header(info), Tab: "issues", Status: status,
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Issues", Href: issuesURL(full, "")}, {Label: "New"}},
		Data: newData{Form: f, Labels: labels, Problem: problem, Action: pg.site.URL(issuesURL(full, "")),
			CancelHref: pg.site.URL(issuesURL(full, ""))}})
}

// labelPicker is a form's labels: a box for each label the project sees
// (the first maxLabelChoices), checked for those in current.
func (pg *issuePages) labelPicker(ctx context.Context, info projects.ProjectInfo, current []string) (web.LabelPicker, error) {
	available, err := pg.s.Available(ctx, info.ID, maxLabelChoices)
	if err != nil {
		return web.LabelPicker{}, err
	}
	choices := make([]web.LabelChoice, len(available))
	for i, l := range available {
		choices[i] = web.LabelChoice{Name: l.Name, Color: l.Color}
	}
	return web.NewLabelPicker("issue-labels", current, choices...), nil
}

// create opens the issue the form describes, as POST /issues does.
func (pg *issuePages) create(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	names, _ := web.PostedLabels(r)
	f := issueForm{Title: r.PostFormValue("title"), Description: r.PostFormValue("description"),
		Labels: strings.Join(names, ", "), Confidential: r.PostFormValue("confidential") != ""}
	in := issue.Fields{Title: &f.Title, Description: &f.Description, Confidential: &f.Confidential}
	if len(names) > 0 {
		in.Labels = &names
	}
	i, err := pg.s.Create(ctx, full, in)
	if err != nil {
		var params *issue.ParamsError
		switch {
		case errors.As(err, &params) || errors.Is(err, issue.ErrMissing):
			pg.newForm(w, r, f, "The title is missing.")
		case errors.Is(err, issue.ErrInvalid) || errors.Is(err, issue.ErrInvalidParam) || errors.Is(err, issue.ErrInvalidValue):
			pg.newForm(w, r, f, "The issue was not created: "+invalidText(err))
		default:
			pg.fail(w, r, err)
		}
		return
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+strconv.FormatInt(int64(i.IID), 10)))
}

// addTodo adds the issue to the visitor's todos (POST .../todo); one that
// is there already is left as it is.
func (pg *issuePages) addTodo(w http.ResponseWriter, r *http.Request, iid issue.IID) {
	full := r.PathValue("owner")
	if _, err := pg.s.collab.MarkTodo(r.Context(), issue.NoteableType, full, int64(iid)); err != nil && !errors.Is(err, target.ErrTodoExists) {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10)))
}

// maxAssignees bounds the assignee choices the edit form lists.
const maxAssignees = 500

// maxLabelChoices bounds the edit form's label boxes; labels past them
// are typed in its text field.
const maxLabelChoices = 200

type choice struct {
	Value, Label string
	Selected     bool
}

type editData struct {
	Form                  issueForm
	DueDate               string
	MayAdmin              bool
	Milestones, Assignees []choice
	Labels                web.LabelPicker
	Action, CancelHref    string
	Problem               string
}

// editForm is the issue's edit form: title, description, confidential,
// and for Reporters and above the labels, milestone, assignee and due
// date (the fields the API takes from them only). f, when set, is a
// refused form's input, shown again with problem.
func (pg *issuePages) editForm(w http.ResponseWriter, r *http.Request, iid issue.IID, f *editInput, problem string) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	info, err := pg.s.writeProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	i, err := pg.s.Get(ctx, issue.Ref{Project: full, IID: iid})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	if !mayUpdate(info, &Issue{AuthorID: i.AuthorID, AssigneeIDs: i.AssigneeIDs}, auth.FromContext(ctx).UserID()) {
		pg.site.Error(w, r, http.StatusForbidden)
		return
	}
	rows, err := pg.rows(ctx, info, []issue.Issue{i})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	in := editInput{Title: i.Title, Description: i.Description, Confidential: i.Confidential, DueDate: i.DueDate,
		Milestone: strconv.FormatInt(int64(i.MilestoneID), 10)}
	for _, l := range rows[0].Labels {
		in.Labels = append(in.Labels, l.Name)
	}
	if len(i.AssigneeIDs) > 0 {
		in.Assignee = strconv.FormatInt(i.AssigneeIDs[0], 10)
	}
	if f != nil {
		in = *f
	}
	self := issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10))
	d := editData{Form: issueForm{Title: in.Title, Description: in.Description, Labels: strings.Join(in.Labels, ", "), Confidential: in.Confidential},
		DueDate: in.DueDate, MayAdmin: mayAdmin(info), Action: pg.site.URL(self), CancelHref: pg.site.URL(self), Problem: problem}
	if d.MayAdmin {
		if d.Milestones, err = pg.milestoneChoices(ctx, full, in.Milestone); err != nil {
			pg.fail(w, r, err)
			return
		}
		if d.Assignees, err = pg.assigneeChoices(ctx, info, in.Assignee); err != nil {
			pg.fail(w, r, err)
			return
		}
		if d.Labels, err = pg.labelPicker(ctx, info, in.Labels); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "edit", web.Page{Title: "Edit #" + strconv.FormatInt(int64(iid), 10) + " · " + info.NameWithNamespace,
		Project: header(info), Tab: "issues", Status: status,
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Issues", Href: issuesURL(full, "")},
			{Label: "#" + strconv.FormatInt(int64(iid), 10), Href: self}, {Label: "Edit"}}, Data: d})
}

// milestoneChoices are the project's active milestones (and the one the
// issue has, even if closed), with "None" first.
func (pg *issuePages) milestoneChoices(ctx context.Context, full, current string) ([]choice, error) {
	list, _, err := pg.s.Milestones(ctx, full, issue.MilestoneQuery{Limit: 1000})
	if err != nil {
		return nil, err
	}
	out := []choice{{Value: "0", Label: "None", Selected: current == "0" || current == ""}}
	for _, m := range list {
		id := strconv.FormatInt(int64(m.ID), 10)
		if m.State != "active" && id != current {
			continue
		}
		out = append(out, choice{Value: id, Label: m.Title, Selected: id == current})
	}
	return out, nil
}

// assigneeChoices are the project's team (members, its groups' and the
// namespace owner), at most maxAssignees, with "Unassigned" first.
func (pg *issuePages) assigneeChoices(ctx context.Context, info projects.ProjectInfo, current string) ([]choice, error) {
	_, ids, err := pg.s.teams.ProjectTeam(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	out := []choice{{Value: "0", Label: "Unassigned", Selected: current == "0" || current == ""}}
	users := pg.s.renderer(ctx)
	for n, id := range ids {
		if n == maxAssignees {
			break
		}
		u := users.user(id)
		v := strconv.FormatInt(id, 10)
		out = append(out, choice{Value: v, Label: u.Name + " (@" + u.Username + ")", Selected: v == current})
	}
	return out, nil
}

// editInput is the edit form as posted.
type editInput struct {
	Title, Description, DueDate string
	Labels                      []string
	Milestone, Assignee         string
	Confidential                bool
}

// update saves the edit form, as PUT /issues/:iid does.
func (pg *issuePages) update(w http.ResponseWriter, r *http.Request, iid issue.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	in := editInput{Title: r.PostFormValue("title"), Description: r.PostFormValue("description"),
		Confidential: r.PostFormValue("confidential") != "", DueDate: strings.TrimSpace(r.PostFormValue("due_date")),
		Milestone: r.PostFormValue("milestone_id"), Assignee: r.PostFormValue("assignee_id")}
	labels, labelsGiven := web.PostedLabels(r)
	in.Labels = labels
	f := issue.Fields{Title: &in.Title, Description: &in.Description, Confidential: &in.Confidential}
	// The fields only Reporters and above may set are sent only when the
	// form had them; the service ignores them from others, as the API.
	if labelsGiven {
		f.Labels = &labels
	}
	if _, ok := r.PostForm["due_date"]; ok {
		f.DueDate = &in.DueDate
	}
	if _, ok := r.PostForm["milestone_id"]; ok {
		m, err := strconv.ParseInt(in.Milestone, 10, 64)
		if err != nil || m < 0 {
			pg.editForm(w, r, iid, &in, "The milestone is not one of the project's.")
			return
		}
		f.MilestoneID = &m
	}
	if _, ok := r.PostForm["assignee_id"]; ok {
		a, err := strconv.ParseInt(in.Assignee, 10, 64)
		if err != nil || a < 0 {
			pg.editForm(w, r, iid, &in, "The assignee is not one of the project's team.")
			return
		}
		ids := []int64{}
		if a > 0 {
			ids = append(ids, a)
		}
		f.AssigneeIDs = &ids
	}
	if _, err := pg.s.Update(ctx, issue.Ref{Project: full, IID: iid}, f, ""); err != nil {
		switch {
		case errors.Is(err, issue.ErrInvalid) || errors.Is(err, issue.ErrInvalidParam) || errors.Is(err, issue.ErrInvalidValue):
			pg.editForm(w, r, iid, &in, "The issue was not saved: "+invalidText(err))
		default:
			pg.fail(w, r, err)
		}
		return
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+strconv.FormatInt(int64(iid), 10)))
}
