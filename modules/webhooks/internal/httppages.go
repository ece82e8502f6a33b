package internal

// The webhooks' settings pages (issue 30): a project's hooks under
// "/<project>/-/hooks" (the project settings' "Webhooks", Masters) and
// the system hooks under "/admin/hooks" (administrators), each with its
// delivery log, one entry of it with the request and the response, a
// test and a resend. Every read and change is a call of the service with
// the browser's principal, so the pages' permissions are the API's; a
// hook's secret token is written, never shown.

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/project"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

//go:embed all:templates
var pageTemplates embed.FS

// logPerPage is one page of a hook's delivery log.
const logPerPage = 20

// shownBody bounds a request or response body on an entry's page; the
// log keeps at most what the delivery sent and maxResponseBody back.
const shownBody = 64 << 10

type hookPages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the project hooks' and system hooks' pages and their
// entries in the project settings' and the admin area's navigation.
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "webhooks", Register: func(site *web.Site) {
		pg := &hookPages{site: site, s: s, t: site.Templates(pageTemplates, "templates/hooks/*.html")}
		site.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "hooks", Label: "Webhooks", Path: "/-/hooks",
			Order: 50, MinLevel: int(projects.Master)})
		site.AddSection(web.Section{Area: web.AreaAdmin, Key: "hooks", Label: "System Hooks", Path: "/admin/hooks", Order: 60})
		site.Project("GET hooks", pg.projectGet)
		site.Project("POST hooks", pg.projectPost)
		site.Admin("GET /admin/hooks", pg.systemList)
		site.Admin("POST /admin/hooks", pg.systemAdd)
		site.Admin("GET /admin/hooks/{id}/edit", pg.systemEdit)
		site.Admin("GET /admin/hooks/{id}/delete", pg.systemDeleteForm)
		site.Admin("POST /admin/hooks/{id}/delete", pg.systemDelete)
		site.Admin("POST /admin/hooks/{id}/test", pg.systemTest)
		site.Admin("GET /admin/hooks/{id}/hook_logs/{log}", pg.systemEntry)
		site.Admin("POST /admin/hooks/{id}/hook_logs/{log}/retry", pg.systemResend)
	}}
}

// refusals sort the pages' failed service calls. A project's settings
// are not for its Developers: a refusal is the missing page, as for a
// project the visitor may not see, so the page tells them nothing.
var refusals = web.Refusals{Page: "webhooks page", SignIn: []error{auth.ErrUnauthorized},
	Missing: []error{projects.ErrNotFound, projects.ErrForbidden, projects.ErrHookNotFound,
		webhook.ErrAttemptNotFound, webhook.ErrSystemHookNotFound, webhook.ErrAdminOnly}}

func (pg *hookPages) fail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, refusals)
}

// header is the project's header above its settings pages.
func header(info projects.ProjectInfo) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// parseID is a positive decimal id in its one spelling ("12", not "012").
func parseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// --- view models ---

// eventBox is one event checkbox of a hook's form.
type eventBox struct {
	Name, Label, Hint string
	Checked           bool
}

// hookForm is the add or edit form of a hook.
type hookForm struct {
	Action   string
	URL      string
	SSL      bool
	Events   []eventBox
	HasToken bool // the hook has a secret token (never shown)
	Submit   string
}

// hookRow is a hook in a list.
type hookRow struct {
	ID         int64
	URL        string
	Events     []string
	SSL        bool
	EditHref   string
	DeleteHref string
}

// logRow is an entry of a delivery log.
type logRow struct {
	ID       int64
	Outcome  string
	OK       bool
	Status   int
	Trigger  string
	Event    string
	URL      string
	At       time.Time
	Duration string
	Href     string
}

type pager struct {
	Page, Pages        int
	PrevHref, NextHref string
}

type listData struct {
	Heading, Intro string
	Problem        string
	Form           hookForm
	Rows           []hookRow
}

type editData struct {
	Hook       hookRow
	Form       *hookForm // nil for a system hook (the API edits none)
	Problem    string
	Notice     string
	TestAction string
	Triggers   []eventBox
	Log        []logRow
	Total      int
	Pager      pager
	BackHref   string
}

type headerLine struct{ Name, Value string }

type entryData struct {
	Entry          logRow
	Attempt        int
	Error          string
	RequestHeaders []headerLine
	RequestBody    string
	Answered       bool
	Headers        []headerLine
	ResponseBody   string
	Truncated      bool
	ResendAction   string
	BackHref       string
}

type deleteData struct {
	Hook       hookRow
	Action     string
	CancelHref string
}

// projectEvents are a project hook's switches, in the API's names.
var projectEvents = []struct{ name, label, hint string }{
	{"push_events", "Push events", "A push to the repository"},
	{"tag_push_events", "Tag push events", "A tag is pushed or removed"},
	{"note_events", "Comments", "A comment is added on an issue, a merge request, a commit or a snippet"},
	{"issues_events", "Issues events", "An issue is opened, changed or closed"},
	{"merge_requests_events", "Merge request events", "A merge request is opened, changed, merged or closed"},
	{"job_events", "Job events", "A job's status changes"},
	{"pipeline_events", "Pipeline events", "A pipeline's status changes"},
	{"wiki_page_events", "Wiki page events", "A wiki page is created or changed"},
}

// projectHookEvents are a stored hook's switches by name.
func projectHookEvents(h projects.Hook) map[string]bool {
	return map[string]bool{"push_events": h.PushEvents, "tag_push_events": h.TagPushEvents, "note_events": h.NoteEvents,
		"issues_events": h.IssuesEvents, "merge_requests_events": h.MergeRequestsEvents, "job_events": h.JobEvents,
		"pipeline_events": h.PipelineEvents, "wiki_page_events": h.WikiPageEvents}
}

func eventBoxes(on map[string]bool) []eventBox {
	out := make([]eventBox, 0, len(projectEvents))
	for _, e := range projectEvents {
		out = append(out, eventBox{Name: e.name, Label: e.label, Hint: e.hint, Checked: on[e.name]})
	}
	return out
}

func labelsOf(on map[string]bool) []string {
	var out []string
	for _, e := range projectEvents {
		if on[e.name] {
			out = append(out, e.label)
		}
	}
	return out
}

// triggerBoxes are the samples a project hook's test may send.
func triggerBoxes() []eventBox {
	out := make([]eventBox, 0, len(triggers))
	for i, t := range triggers {
		label := t.Name
		if j := slices.IndexFunc(projectEvents, func(e struct{ name, label, hint string }) bool { return e.name == t.Name }); j >= 0 {
			label = projectEvents[j].label
		}
		out = append(out, eventBox{Name: t.Name, Label: label, Checked: i == 0})
	}
	return out
}

func logRowOf(a webhook.Attempt, href string) logRow {
	return logRow{ID: a.ID, Outcome: string(a.Outcome), OK: a.Outcome == webhook.Delivered, Status: a.ResponseStatus,
		Trigger: a.Trigger, Event: a.Event, URL: a.URL, At: a.CreatedAt, Duration: durationText(a.Duration), Href: href}
}

// durationText is a delivery's time in milliseconds ("12 ms"), or in
// seconds with two decimals past one second.
func durationText(d time.Duration) string {
	if d >= time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

func headerLines(h map[string]string) []headerLine {
	out := make([]headerLine, 0, len(h))
	for k, v := range h {
		out = append(out, headerLine{Name: k, Value: v})
	}
	slices.SortFunc(out, func(a, b headerLine) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// bodyText is a body as its page shows it: JSON indented, at most
// shownBody bytes (cut at a character's start), and whether it was cut.
func bodyText(raw []byte) (string, bool) {
	var buf bytes.Buffer
	if json.Valid(raw) && json.Indent(&buf, raw, "", "  ") == nil {
		raw = buf.Bytes()
	}
	if len(raw) <= shownBody {
		return strings.ToValidUTF8(string(raw), "\uFFFD"), false
	}
	cut := shownBody
	for cut > 0 && raw[cut]&0xC0 == 0x80 {
		cut--
	}
	return strings.ToValidUTF8(string(raw[:cut]), "\uFFFD"), true
}

func entryDataOf(a webhook.Attempt, resend, back string) entryData {
	d := entryData{Entry: logRowOf(a, ""), Attempt: a.Number, Error: a.Error, RequestHeaders: headerLines(a.RequestHeaders),
		Answered: a.Answered(), Headers: headerLines(a.ResponseHeaders), ResendAction: resend, BackHref: back}
	d.RequestBody, _ = bodyText(a.RequestBody)
	d.ResponseBody, d.Truncated = bodyText([]byte(a.ResponseBody))
	return d
}

// pageParam is the ?page= of a list (1 when absent or not a number).
func pageParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 || n > 1<<20 {
		return 1
	}
	return n
}

func pagerOf(base string, page, total int) pager {
	pages := max(1, (total+logPerPage-1)/logPerPage)
	p := pager{Page: page, Pages: pages}
	if page > 1 {
		p.PrevHref = base + "?page=" + strconv.Itoa(page-1)
	}
	if page < pages {
		p.NextHref = base + "?page=" + strconv.Itoa(page+1)
	}
	return p
}

// checked reads a checkbox of a posted form.
func checked(r *http.Request, name string) *bool {
	v := r.PostForm.Get(name) != ""
	return &v
}

// --- project hooks ---

// projectBase is the project's hooks page, escaped, without the prefix.
func projectBase(info projects.ProjectInfo) string {
	return "/" + web.EscapePath(info.PathWithNamespace) + "/-/hooks"
}

func (pg *hookPages) projectPage(info projects.ProjectInfo, title string, data any, status int, crumbs ...web.Crumb) web.Page {
	c := append([]web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(info.PathWithNamespace)},
		{Label: "Webhooks", Href: projectBase(info)}}, crumbs...)
	return web.Page{Title: title + " · " + info.NameWithNamespace, Project: header(info), Tab: "settings",
		Area: web.AreaProjectSettings, Section: "hooks", Crumbs: c, Status: status, Data: data}
}

// projectGet serves the hooks list, a hook's edit page with its log, an
// entry of the log and the delete confirmation.
func (pg *hookPages) projectGet(w http.ResponseWriter, r *http.Request) {
	owner, rest := r.PathValue("owner"), r.PathValue("rest")
	if rest == "" {
		pg.projectList(w, r, owner, hookForm{SSL: true, Events: eventBoxes(map[string]bool{"push_events": true})}, "", http.StatusOK)
		return
	}
	parts := strings.Split(rest, "/")
	id, ok := parseID(parts[0])
	switch {
	case !ok:
	case len(parts) == 2 && parts[1] == "edit":
		pg.projectEdit(w, r, owner, id, nil, "", http.StatusOK)
		return
	case len(parts) == 2 && parts[1] == "delete":
		info, h, err := pg.s.ProjectHookSettings(r.Context(), owner, id)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		row := pg.projectRow(info, h)
		pg.t.Render(w, r, "delete", pg.projectPage(info, "Delete webhook", deleteData{Hook: row,
			Action: pg.site.URL(projectBase(info) + "/" + strconv.FormatInt(id, 10) + "/delete"), CancelHref: row.EditHref}, 0,
			web.Crumb{Label: "Delete"}))
		return
	case len(parts) == 3 && parts[1] == "hook_logs":
		logID, ok := parseID(parts[2])
		if !ok {
			break
		}
		info, _, err := pg.s.ProjectHookSettings(r.Context(), owner, id)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		a, err := pg.s.ProjectHookAttempt(r.Context(), owner, id, logID)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		hookHref := projectBase(info) + "/" + strconv.FormatInt(id, 10)
		d := entryDataOf(a, pg.site.URL(hookHref+"/hook_logs/"+strconv.FormatInt(logID, 10)+"/retry"), pg.site.URL(hookHref+"/edit"))
		pg.t.Render(w, r, "entry", pg.projectPage(info, "Webhook delivery", d, 0,
			web.Crumb{Label: "Hook " + strconv.FormatInt(id, 10), Href: hookHref + "/edit"}, web.Crumb{Label: "Delivery " + strconv.FormatInt(logID, 10)}))
		return
	}
	pg.site.NotFound(w, r)
}

func (pg *hookPages) projectRow(info projects.ProjectInfo, h projects.Hook) hookRow {
	base := projectBase(info) + "/" + strconv.FormatInt(h.ID, 10)
	return hookRow{ID: h.ID, URL: h.URL, Events: labelsOf(projectHookEvents(h)), SSL: h.EnableSSLVerification,
		EditHref: pg.site.URL(base + "/edit"), DeleteHref: pg.site.URL(base + "/delete")}
}

func (pg *hookPages) projectList(w http.ResponseWriter, r *http.Request, owner string, form hookForm, problem string, status int) {
	info, list, err := pg.s.ProjectHooks(r.Context(), owner)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := listData{Heading: "Webhooks", Problem: problem,
		Intro: "Webhooks send a POST request with a JSON payload to a URL of yours when something happens in this project."}
	form.Action, form.Submit = pg.site.URL(projectBase(info)), "Add webhook"
	d.Form = form
	for _, h := range list {
		d.Rows = append(d.Rows, pg.projectRow(info, h))
	}
	pg.t.Render(w, r, "list", pg.projectPage(info, "Webhooks", d, status))
}

// projectEdit is a hook's page: its form, the test form and its log.
func (pg *hookPages) projectEdit(w http.ResponseWriter, r *http.Request, owner string, id int64, form *hookForm, problem string, status int) {
	ctx := r.Context()
	info, h, err := pg.s.ProjectHookSettings(ctx, owner, id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	page := pageParam(r)
	log, total, err := pg.s.ProjectHookAttempts(ctx, owner, id, (page-1)*logPerPage, logPerPage)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	base := projectBase(info) + "/" + strconv.FormatInt(id, 10)
	if form == nil {
		form = &hookForm{URL: h.URL, SSL: h.EnableSSLVerification, Events: eventBoxes(projectHookEvents(h))}
	}
	form.Action, form.Submit, form.HasToken = pg.site.URL(base), "Save changes", h.Token != ""
	d := editData{Hook: pg.projectRow(info, h), Form: form, Problem: problem, TestAction: pg.site.URL(base + "/test"),
		Triggers: triggerBoxes(), Total: total, Pager: pagerOf(pg.site.URL(base+"/edit"), page, total),
		BackHref: pg.site.URL(projectBase(info))}
	for _, a := range log {
		d.Log = append(d.Log, logRowOf(a, pg.site.URL(base+"/hook_logs/"+strconv.FormatInt(a.ID, 10))))
	}
	pg.t.Render(w, r, "edit", pg.projectPage(info, "Edit webhook", d, status, web.Crumb{Label: "Hook " + strconv.FormatInt(id, 10)}))
}

// projectFields reads a hook's form; a blank secret token keeps the one
// the hook has (it is never shown, so it cannot be filled in again).
func projectFields(r *http.Request) (project.HookFields, hookForm) {
	in := project.HookFields{URL: strings.TrimSpace(r.PostForm.Get("url")), EnableSSLVerification: checked(r, "enable_ssl_verification"),
		PushEvents: checked(r, "push_events"), TagPushEvents: checked(r, "tag_push_events"), NoteEvents: checked(r, "note_events"),
		IssuesEvents: checked(r, "issues_events"), MergeRequestsEvents: checked(r, "merge_requests_events"),
		JobEvents: checked(r, "job_events"), PipelineEvents: checked(r, "pipeline_events"), WikiPageEvents: checked(r, "wiki_page_events")}
	if tok := r.PostForm.Get("token"); tok != "" {
		in.Token = &tok
	}
	on := map[string]bool{}
	for _, e := range projectEvents {
		on[e.name] = r.PostForm.Get(e.name) != ""
	}
	return in, hookForm{URL: in.URL, SSL: *in.EnableSSLVerification, Events: eventBoxes(on)}
}

// hookProblem is the text of a refused hook form, or "" when err is not
// a refusal of its input.
func hookProblem(err error) string {
	var ue *webhook.InvalidURLError
	switch {
	case errors.Is(err, project.ErrInvalidHookURL):
		return "The URL is not valid: give an absolute http or https URL of a host this server may reach."
	case errors.Is(err, webhook.ErrURLMissing):
		return "The URL is missing."
	case errors.As(err, &ue):
		return "The URL " + ue.Problem + "."
	}
	return ""
}

// projectPost adds, saves, deletes, tests a hook and resends a log entry.
func (pg *hookPages) projectPost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	owner, rest := r.PathValue("owner"), r.PathValue("rest")
	if rest == "" {
		in, form := projectFields(r)
		h, err := pg.s.AddProjectHook(ctx, owner, in)
		if p := hookProblem(err); p != "" {
			pg.projectList(w, r, owner, form, p, http.StatusUnprocessableEntity)
			return
		}
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.site.Redirect(w, r, "/"+web.EscapePath(owner)+"/-/hooks#hook_"+strconv.FormatInt(h.ID, 10))
		return
	}
	parts := strings.Split(rest, "/")
	id, ok := parseID(parts[0])
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	base := "/" + web.EscapePath(owner) + "/-/hooks/" + parts[0]
	switch {
	case len(parts) == 1:
		in, form := projectFields(r)
		_, err := pg.s.UpdateProjectHook(ctx, owner, id, in)
		if p := hookProblem(err); p != "" {
			pg.projectEdit(w, r, owner, id, &form, p, http.StatusUnprocessableEntity)
			return
		}
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.site.Redirect(w, r, base+"/edit")
	case len(parts) == 2 && parts[1] == "delete":
		if err := pg.s.DeleteProjectHook(ctx, owner, id); err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.site.Redirect(w, r, "/"+web.EscapePath(owner)+"/-/hooks")
	case len(parts) == 2 && parts[1] == "test":
		a, err := pg.s.TestProjectHook(ctx, owner, id, r.PostForm.Get("trigger"))
		pg.afterSend(w, r, owner, id, base, a, err)
	case len(parts) == 4 && parts[1] == "hook_logs" && parts[3] == "retry":
		logID, ok := parseID(parts[2])
		if !ok {
			pg.site.NotFound(w, r)
			return
		}
		a, err := pg.s.Resend(ctx, owner, id, logID)
		pg.afterSend(w, r, owner, id, base, a, err)
	default:
		pg.site.NotFound(w, r)
	}
}

// afterSend shows the attempt a test or a resend made: its entry's page,
// also when no answer came (the attempt is logged all the same). A test
// the project has no sample for shows the hook's page with the reason.
func (pg *hookPages) afterSend(w http.ResponseWriter, r *http.Request, owner string, id int64, base string, a webhook.Attempt, err error) {
	var none *webhook.NoAnswerError
	var sample webhook.NoSampleError
	switch {
	case errors.As(err, &none):
		a, err = none.Attempt, nil
	case errors.As(err, &sample):
		pg.projectEdit(w, r, owner, id, nil, "The test was not sent: "+sample.Error(), http.StatusUnprocessableEntity)
		return
	case errors.Is(err, webhook.ErrUnknownTrigger):
		pg.projectEdit(w, r, owner, id, nil, "The test was not sent: choose one of the events offered.", http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, base+"/hook_logs/"+strconv.FormatInt(a.ID, 10))
}

// --- system hooks ---

const systemBase = "/admin/hooks"

var systemEvents = []struct{ name, label, hint string }{
	{"push_events", "Push events", "A push to any project's repository"},
	{"tag_push_events", "Tag push events", "A tag pushed to any project"},
}

func systemRow(site *web.Site, h webhook.SystemHook) hookRow {
	base := systemBase + "/" + strconv.FormatInt(h.ID, 10)
	row := hookRow{ID: h.ID, URL: h.URL, SSL: h.EnableSSLVerification,
		EditHref: site.URL(base + "/edit"), DeleteHref: site.URL(base + "/delete")}
	if h.PushEvents {
		row.Events = append(row.Events, "Push events")
	}
	if h.TagPushEvents {
		row.Events = append(row.Events, "Tag push events")
	}
	return row
}

func systemBoxes(on map[string]bool) []eventBox {
	out := make([]eventBox, 0, len(systemEvents))
	for _, e := range systemEvents {
		out = append(out, eventBox{Name: e.name, Label: e.label, Hint: e.hint, Checked: on[e.name]})
	}
	return out
}

func (pg *hookPages) adminPage(title string, data any, status int, crumbs ...web.Crumb) web.Page {
	c := append([]web.Crumb{{Label: "Admin area", Href: "/admin"}, {Label: "System Hooks", Href: systemBase}}, crumbs...)
	return web.Page{Title: title, Area: web.AreaAdmin, Section: "hooks", Crumbs: c, Status: status, Data: data}
}

func (pg *hookPages) systemList(w http.ResponseWriter, r *http.Request) {
	pg.systemListWith(w, r, hookForm{SSL: true, Events: systemBoxes(map[string]bool{"push_events": true})}, "", http.StatusOK)
}

func (pg *hookPages) systemListWith(w http.ResponseWriter, r *http.Request, form hookForm, problem string, status int) {
	list, _, err := pg.s.SystemHooks(r.Context(), 0, 1000)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := listData{Heading: "System Hooks", Problem: problem,
		Intro: "System hooks send a POST request with a JSON payload to a URL of yours on events of the whole instance (projects, users, groups, pushes)."}
	form.Action, form.Submit = pg.site.URL(systemBase), "Add system hook"
	d.Form = form
	for _, h := range list {
		d.Rows = append(d.Rows, systemRow(pg.site, h))
	}
	pg.t.Render(w, r, "list", pg.adminPage("System Hooks", d, status))
}

func (pg *hookPages) systemAdd(w http.ResponseWriter, r *http.Request) {
	in := webhook.SystemHookFields{URL: strings.TrimSpace(r.PostForm.Get("url")), PushEvents: checked(r, "push_events"),
		TagPushEvents: checked(r, "tag_push_events"), EnableSSLVerification: checked(r, "enable_ssl_verification")}
	if tok := r.PostForm.Get("token"); tok != "" {
		in.Token = &tok
	}
	h, err := pg.s.AddSystemHook(r.Context(), in)
	if p := hookProblem(err); p != "" {
		form := hookForm{URL: in.URL, SSL: *in.EnableSSLVerification,
			Events: systemBoxes(map[string]bool{"push_events": *in.PushEvents, "tag_push_events": *in.TagPushEvents})}
		pg.systemListWith(w, r, form, p, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, systemBase+"#hook_"+strconv.FormatInt(h.ID, 10))
}

// systemID is the hook id of the path, or the 404 page.
func (pg *hookPages) systemID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
	}
	return id, ok
}

func (pg *hookPages) systemEdit(w http.ResponseWriter, r *http.Request) {
	id, ok := pg.systemID(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	h, err := pg.s.SystemHook(ctx, id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	page := pageParam(r)
	log, total, err := pg.s.SystemHookAttempts(ctx, id, (page-1)*logPerPage, logPerPage)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	base := systemBase + "/" + strconv.FormatInt(id, 10)
	d := editData{Hook: systemRow(pg.site, h), TestAction: pg.site.URL(base + "/test"), Total: total,
		Pager: pagerOf(pg.site.URL(base+"/edit"), page, total), BackHref: pg.site.URL(systemBase)}
	for _, a := range log {
		d.Log = append(d.Log, logRowOf(a, pg.site.URL(base+"/hook_logs/"+strconv.FormatInt(a.ID, 10))))
	}
	pg.t.Render(w, r, "edit", pg.adminPage("System hook", d, 0, web.Crumb{Label: "Hook " + strconv.FormatInt(id, 10)}))
}

func (pg *hookPages) systemDeleteForm(w http.ResponseWriter, r *http.Request) {
	id, ok := pg.systemID(w, r)
	if !ok {
		return
	}
	h, err := pg.s.SystemHook(r.Context(), id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	row := systemRow(pg.site, h)
	pg.t.Render(w, r, "delete", pg.adminPage("Delete system hook", deleteData{Hook: row,
		Action: pg.site.URL(systemBase + "/" + strconv.FormatInt(id, 10) + "/delete"), CancelHref: pg.site.URL(systemBase)}, 0,
		web.Crumb{Label: "Delete"}))
}

func (pg *hookPages) systemDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pg.systemID(w, r)
	if !ok {
		return
	}
	if err := pg.s.DeleteSystemHook(r.Context(), id); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, systemBase)
}

// systemTest sends the sample and shows the hook's page, whose log has
// the attempt first.
func (pg *hookPages) systemTest(w http.ResponseWriter, r *http.Request) {
	id, ok := pg.systemID(w, r)
	if !ok {
		return
	}
	if _, err := pg.s.TestSystemHook(r.Context(), id); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, systemBase+"/"+strconv.FormatInt(id, 10)+"/edit")
}

func (pg *hookPages) systemEntry(w http.ResponseWriter, r *http.Request) {
	id, ok := pg.systemID(w, r)
	if !ok {
		return
	}
	logID, ok := parseID(r.PathValue("log"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	a, err := pg.s.SystemHookAttempt(r.Context(), id, logID)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	base := systemBase + "/" + strconv.FormatInt(id, 10)
	d := entryDataOf(a, pg.site.URL(base+"/hook_logs/"+strconv.FormatInt(logID, 10)+"/retry"), pg.site.URL(base+"/edit"))
	pg.t.Render(w, r, "entry", pg.adminPage("System hook delivery", d, 0,
		web.Crumb{Label: "Hook " + strconv.FormatInt(id, 10), Href: base + "/edit"}, web.Crumb{Label: "Delivery " + strconv.FormatInt(logID, 10)}))
}

func (pg *hookPages) systemResend(w http.ResponseWriter, r *http.Request) {
	id, ok := pg.systemID(w, r)
	if !ok {
		return
	}
	logID, ok := parseID(r.PathValue("log"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	a, err := pg.s.ResendSystemHook(r.Context(), id, logID)
	var none *webhook.NoAnswerError
	if errors.As(err, &none) {
		a, err = none.Attempt, nil
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, systemBase+"/"+strconv.FormatInt(id, 10)+"/hook_logs/"+strconv.FormatInt(a.ID, 10))
}
