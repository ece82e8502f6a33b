package internal

// The merge requests' web pages (issue 29): a project's list, a merge
// request's Overview (description, timeline, merge box, comment form),
// Commits, Changes (with line comments) and Pipelines tabs. Every read
// and every change goes through the same service calls as the API (List,
// Get, Merge, SetAutoMerge, CancelAutoMerge, Update, the collab service's
// notes, threads and subscriptions), so permissions, events, mail and
// webhooks are the API's; the page only decides what to offer, and the
// merge box's reasons are the service's own answers (decide, head).

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
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
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

//go:embed all:templates
var pageTemplates embed.FS

// mrsPerPage is one page of a project's list, as GitLab's.
const mrsPerPage = 20

// threadsPerPage bounds the timeline one page shows (each note is
// rendered Markdown); more are on later pages.
const threadsPerPage = 500

type mrPages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the merge requests' pages and their references
// (!12).
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "mergerequests", Register: func(site *web.Site) {
		registerReferences(site, s)
		pg := &mrPages{site: site, s: s, t: site.Templates(pageTemplates, "templates/mergerequests/*.html")}
		// The Changes tab's one script (httppagesdiff.go).
		site.AddAsset("diffs.js", diffsScript)
		site.AddProjectTab(web.ProjectTab{Key: "merge_requests", Label: "Merge requests", Suffix: "/-/merge_requests", Order: 55,
			Feature: "merge_requests_enabled"})
		site.Project("GET merge_requests", pg.get)
		site.Project("POST merge_requests", pg.post)
		registerDashboard(site, pg)
		site.SetBranchMergeRequests(pg.branchMergeRequests)
	}}
}

// get serves "/-/merge_requests" (the list), "/-/merge_requests/12" and
// its tabs "/commits", "/diffs", "/pipelines".
func (pg *mrPages) get(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("rest")
	switch rest {
	case "":
		pg.list(w, r)
		return
	case "new":
		pg.newPage(w, r, nil, "")
		return
	}
	num, sub, _ := strings.Cut(rest, "/")
	iid, ok := parseIID(num)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	switch sub {
	case "":
		pg.show(w, r, iid, "", "", 0)
	case "commits":
		pg.commits(w, r, iid)
	case "diffs":
		pg.changes(w, r, iid, nil)
	case "pipelines":
		pg.pipelines(w, r, iid)
	case "edit":
		pg.editForm(w, r, iid, nil, "")
	default:
		pg.site.NotFound(w, r)
	}
}

// post serves the new merge request form ("/-/merge_requests") and the
// forms of a merge request: "/12/notes", "/12/discussions"
// (a line comment), "/12/merge", "/12/cancel_auto_merge", "/12/close",
// "/12/reopen", "/12/subscribe", "/12/unsubscribe", "/12/todo",
// "/12/resolve" (a thread) and "/12/award_emoji".
func (pg *mrPages) post(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("rest") == "" {
		pg.create(w, r)
		return
	}
	num, action, _ := strings.Cut(r.PathValue("rest"), "/")
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
	case "notes":
		pg.comment(w, r, iid)
	case "discussions":
		pg.lineComment(w, r, iid)
	case "reply":
		pg.reply(w, r, iid)
	case "edit":
		pg.update(w, r, iid)
	case "merge":
		pg.merge(w, r, iid)
	case "cancel_auto_merge":
		pg.cancelAutoMerge(w, r, iid)
	case "close", "reopen":
		pg.changeState(w, r, iid, mergerequest.StateEvent(action))
	case "subscribe", "unsubscribe":
		pg.subscribe(w, r, iid, action == "subscribe")
	case "todo":
		pg.addTodo(w, r, iid)
	case "resolve":
		pg.resolve(w, r, iid)
	case "award_emoji":
		pg.award(w, r, iid)
	default:
		pg.site.NotFound(w, r)
	}
}

func parseIID(s string) (mergerequest.IID, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return mergerequest.IID(n), err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// refusals sort the merge request pages' failed service calls: what the
// visitor may not see is missing (sign in, or the 404 page), a refused
// change the 403 page, anything else the 500 page with a log line.
var refusals = web.Refusals{Page: "merge requests page",
	Missing:   []error{projects.ErrNotFound, mergerequest.ErrNotFound, target.ErrNotFound},
	Forbidden: []error{projects.ErrForbidden, auth.ErrUnauthorized}}

// fail answers a page whose service call failed, never with the error's
// text (refusals).
func (pg *mrPages) fail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, refusals)
}

func header(info projects.ProjectInfo) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// mrsURL is the project's merge requests page (escaped), with suffix
// ("/12", "/12/diffs") after it.
func mrsURL(full, suffix string) string {
	return "/" + web.EscapePath(full) + "/-/merge_requests" + suffix
}

func mrURL(full string, iid mergerequest.IID, suffix string) string {
	return mrsURL(full, "/"+strconv.FormatInt(int64(iid), 10)+suffix)
}

// labelChip is a label as the lists show it: in its colour (Color, a
// checked "#rgb" or "#rrggbb"); Dark asks for light text on it.
type labelChip struct {
	Name, Href, Color string
	Dark              bool
}

type person struct{ Name, Username, Href string }

func (pg *mrPages) person(name, username string) person {
	return person{Name: name, Username: username, Href: pg.site.URL("/" + url.PathEscape(username))}
}

// mrRow is a merge request as the list and the page's header show it.
type mrRow struct {
	IID                        int64
	Title, Href, State         string
	WIP                        bool
	Author                     person
	CreatedAt                  time.Time
	SourceBranch, TargetBranch string
	Labels                     []labelChip
	Milestone, Assignee        string
	Pipeline                   string // the head pipeline's status, "" for none
	PipelineHref               string // the merge request's Pipelines tab
	Notes                      int
}

func stateOf(key string) mergerequest.State {
	switch key {
	case "opened":
		return mergerequest.Opened
	case "merged":
		return mergerequest.Merged
	case "closed":
		return mergerequest.Closed
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// rows are merge requests as rows: the API's views (users, labels,
// milestone, head pipeline, comment counts) read in one transaction.
func (pg *mrPages) rows(ctx context.Context, info projects.ProjectInfo, list []mergerequest.MergeRequest) ([]mrRow, error) {
	var out []mrRow
	err := pg.s.DB.View(ctx, func(tx *store.Tx) error {
		views, err := pg.s.renderer(ctx).views(tx, list)
		if err != nil {
			return err
		}
		colors := map[int64]target.LabelColor{}
		for n, m := range list {
			v := views[n]
			row := mrRow{IID: int64(m.IID), Title: m.Title, Href: pg.site.URL(mrURL(info.PathWithNamespace, m.IID, "")),
				State: string(m.State), WIP: m.WorkInProgress, Author: pg.person(v.Author.Name, v.Author.Username), CreatedAt: m.CreatedAt,
				SourceBranch: m.SourceBranch, TargetBranch: m.TargetBranch, Notes: v.UserNotesCount}
			if row.Labels, err = pg.chips(tx.Context(), info, m.LabelIDs, v.Labels, colors); err != nil {
				return err
			}
			if m.MilestoneID != 0 && pg.s.Milestones != nil {
				if ms, err := pg.s.Milestones.Assignable(tx.Context(), info.ID, m.MilestoneID); err == nil {
					row.Milestone = ms.Title
				}
			}
			if v.Assignee != nil {
				row.Assignee = v.Assignee.Name
			}
			if v.Pipeline != nil {
				row.Pipeline = v.Pipeline.Status
				row.PipelineHref = pg.site.URL(mrURL(info.PathWithNamespace, m.IID, "/pipelines"))
				if m.SourceProjectID == info.ID {
					// The pipeline's own page (CI's); a fork's runs in the
					// fork, whose path this page does not read.
					row.PipelineHref = pg.site.URL("/" + web.EscapePath(info.PathWithNamespace) + "/-/pipelines/" + itoa(v.Pipeline.ID))
				}
			}
			out = append(out, row)
		}
		return nil
	})
	return out, err
}

// mrTab is a tab of a merge request's page.
type mrTab struct {
	Label, Href string
	Count       int
	Counted     bool
	Current     bool
}

// mrHead is what every tab of a merge request shows above its content.
type mrHead struct {
	MR   mrRow
	Tabs []mrTab
}

// loadHead reads the project and the merge request (its merge status
// computed, as GET does) and the tabs; tab is the current one's key.
func (pg *mrPages) loadHead(ctx context.Context, full string, iid mergerequest.IID, tab string) (projects.ProjectInfo, mergerequest.MergeRequest, mrHead, error) {
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		return info, mergerequest.MergeRequest{}, mrHead{}, err
	}
	m, err := pg.s.Get(ctx, mergerequest.Ref{Project: full, IID: iid})
	if err != nil {
		return info, m, mrHead{}, err
	}
	rows, err := pg.rows(ctx, info, []mergerequest.MergeRequest{m})
	if err != nil {
		return info, m, mrHead{}, err
	}
	h := mrHead{MR: rows[0]}
	for _, t := range []struct{ key, label, suffix string }{{"", "Overview", ""}, {"commits", "Commits", "/commits"},
		{"diffs", "Changes", "/diffs"}, {"pipelines", "Pipelines", "/pipelines"}} {
		h.Tabs = append(h.Tabs, mrTab{Label: t.label, Href: pg.site.URL(mrURL(full, iid, t.suffix)), Current: t.key == tab})
	}
	return info, m, h, nil
}

func (pg *mrPages) crumbs(info projects.ProjectInfo, iid mergerequest.IID) []web.Crumb {
	full := info.PathWithNamespace
	return []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Merge requests", Href: mrsURL(full, "")},
		{Label: "!" + strconv.FormatInt(int64(iid), 10)}}
}

func pageTitle(m mergerequest.MergeRequest, info projects.ProjectInfo, tab string) string {
	t := m.Title + " (!" + strconv.FormatInt(int64(m.IID), 10) + ")"
	if tab != "" {
		t += " · " + tab
	}
	return t + " · Merge requests · " + info.NameWithNamespace
}

// threadView is one entry of the timeline: a note by itself (a comment or
// a system note) or a thread, a line comment's with its place (Line,
// which the Overview shows as the entry's Head, "thread-head").
type threadView struct {
	web.Entry
	Line *lineRef
}

// lineRef is a line comment's place as the timeline shows it; Outdated
// ones carry the lines of the diff they were made on.
type lineRef struct {
	Path, Href string
	Line       string // "line 12" or "old line 3"
	Outdated   bool
	Hunk       []diffLine
}

// mergeBox is whether the merge request can be merged and what the
// visitor may do about it.
type mergeBox struct {
	State             string // opened, merged, closed, locked
	MergedBy          person
	MergedAt          *time.Time
	MergeCommit       string
	MergeCommitHref   string
	Reason            string // why it cannot be merged now ("" when it can)
	CanMerge          bool
	OfferAutoMerge    bool // a pipeline runs: Merge when pipeline succeeds
	OnlyAutoMerge     bool // and the project merges only once it succeeds
	AutoMergeSet      bool
	MayCancel         bool
	Pipeline          string
	PipelineWarning   string
	HeadSHA           string
	RemoveSource      bool
	Action            string
	CancelAction      string
	Problem           string
	SourceBranch      string
	TargetBranch      string
	SignInHref        string
	SourceBranchMoved bool
}

type showData struct {
	Head        mrHead
	Description template.HTML
	Awards      *web.Awards
	Box         mergeBox
	Timeline    web.Timeline
	// Resolution counts the threads that can be resolved.
	Resolution                web.Resolution
	ThreadsTotal              int
	SignedIn                  bool
	MayChangeState, Open      bool
	Subscribed                bool
	StateHref                 string
	SubscribeHref, SignInHref string
	TodoHref, EditHref        string
}

// show is the Overview tab. draft and preview keep a comment being
// written, problem says why one was refused; boxProblem why a merge was
// refused (status: the page's answer).
func (pg *mrPages) show(w http.ResponseWriter, r *http.Request, iid mergerequest.IID, draft, problem string, status int) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, m, head, err := pg.loadHead(ctx, full, iid, "")
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pr := auth.FromContext(ctx)
	self := mrURL(full, iid, "")
	render := pg.renderer(ctx, info)
	d := showData{Head: head, Description: render(m.Description), SignedIn: pr.User != nil, Open: m.State.Open(),
		SignInHref: pg.site.URL("/users/sign_in?return_to=" + url.QueryEscape(pg.site.Prefix()+self)), Timeline: web.Timeline{Noun: "activity"}}
	commentProblem := problem
	if status == http.StatusConflict || status == http.StatusForbidden || status == http.StatusMethodNotAllowed {
		commentProblem = ""
	}
	if d.Box, err = pg.mergeBox(ctx, info, m, head.MR.Pipeline); err != nil {
		pg.fail(w, r, err)
		return
	}
	d.Box.SignInHref = d.SignInHref
	if status == http.StatusConflict || status == http.StatusForbidden || status == http.StatusMethodNotAllowed {
		d.Box.Problem = problem
	}
	mayComment := d.SignedIn && !info.Archived && m.State != mergerequest.Locked
	if mayComment {
		d.Timeline.Comment = &web.CommentForm{Action: pg.site.URL(self + "/notes"), CSRF: pg.site.CSRFToken(w, r), Draft: draft, Problem: commentProblem,
			Threads: true}
		if draft != "" && commentProblem == "" {
			d.Timeline.Comment.Preview = render(draft)
		}
	}
	if !d.SignedIn {
		d.Timeline.SignInHref = d.SignInHref
	}
	if d.SignedIn {
		d.MayChangeState = !info.Archived && info.Level >= int(projects.Developer) && m.State != mergerequest.Merged && m.State != mergerequest.Locked
		if pg.s.Collab != nil {
			if d.Subscribed, err = pg.s.Collab.Subscribed(ctx, noteableOf(m), pr.UserID()); err != nil {
				pg.fail(w, r, err)
				return
			}
			d.TodoHref = pg.site.URL(self + "/todo")
			if d.Subscribed {
				d.SubscribeHref = pg.site.URL(self + "/unsubscribe")
			} else {
				d.SubscribeHref = pg.site.URL(self + "/subscribe")
			}
		}
		if d.MayChangeState {
			d.EditHref = pg.site.URL(self + "/edit")
		}
		if d.Open {
			d.StateHref = pg.site.URL(self + "/close")
		} else {
			d.StateHref = pg.site.URL(self + "/reopen")
		}
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("notes_page"))
	page = max(page, 1)
	if pg.s.Collab != nil {
		where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
		threads, total, err := pg.s.Collab.Threads(ctx, where, target.Page{Offset: (page - 1) * threadsPerPage, Limit: threadsPerPage})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		d.ThreadsTotal = total
		if page > 1 {
			d.Timeline.EarlierHref = pg.site.URL(self + "?notes_page=" + strconv.Itoa(page-1))
		}
		if page*threadsPerPage < total {
			d.Timeline.LaterHref = pg.site.URL(self + "?notes_page=" + strconv.Itoa(page+1))
		}
		lines := newLineIndex(pg, ctx, info, m)
		aw := pg.awarder(w, r, info, where, m.AuthorID, threads, mayComment)
		if d.Awards, err = aw.Awards(ctx, 0); err != nil {
			pg.fail(w, r, err)
			return
		}
		for _, t := range threads {
			tv := pg.threadView(ctx, info, t, render, lines)
			if mayComment {
				pg.offerReply(w, r, &tv, "")
			}
			pg.offerResolve(w, r, info, m, t, &tv)
			if err := pg.noteAwards(ctx, aw, tv.Notes); err != nil {
				pg.fail(w, r, err)
				return
			}
			e := tv.Entry
			if tv.Line != nil {
				e.Head = tv.Line
			}
			d.Timeline.Entries = append(d.Timeline.Entries, e)
		}
		if d.Resolution, err = pg.resolution(ctx, where, total, d.Timeline.Entries); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	if status == 0 {
		status = http.StatusOK
		if problem != "" {
			status = http.StatusUnprocessableEntity
		}
	}
	pg.t.Render(w, r, "show", web.Page{Title: pageTitle(m, info, ""), Project: header(info), Tab: "merge_requests", Status: status,
		Crumbs: pg.crumbs(info, iid), Data: d})
}

// renderer renders Markdown of the project's merge requests, with
// references resolved as the visitor may see them.
func (pg *mrPages) renderer(ctx context.Context, info projects.ProjectInfo) func(string) template.HTML {
	resolver := pg.site.Resolver(nil)
	return func(src string) template.HTML {
		return markup.Render(ctx, []byte(src), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: info.PathWithNamespace, Resolver: resolver})
	}
}

// threadView shapes one thread of the timeline.
func (pg *mrPages) threadView(ctx context.Context, info projects.ProjectInfo, t target.Thread, render func(string) template.HTML, lines *lineIndex) threadView {
	users := pg.s.renderer(ctx)
	tv := threadView{Entry: web.Entry{ID: t.ID, Thread: !t.Individual, Resolved: len(t.Notes) > 0}}
	for _, n := range t.Notes {
		a := users.user(n.AuthorID)
		nv := web.Note{ID: n.ID, Anchor: web.NoteAnchor(n.ID), Author: web.Person(pg.person(a.Name, a.Username)),
			System: n.System, CreatedAt: n.CreatedAt, Edited: !n.System && n.UpdatedAt.Sub(n.CreatedAt) > time.Second}
		if n.System {
			// System notes are Fennec's own sentences, with Markdown emphasis.
			nv.Body = markup.Render(ctx, []byte(n.Body), markup.Context{BaseURL: api.ExternalURLFrom(ctx), Project: info.PathWithNamespace})
		} else {
			nv.Body = render(n.Body)
		}
		tv.Resolvable = tv.Resolvable || n.Resolvable
		tv.Resolved = tv.Resolved && n.Resolvable && n.Resolved
		if n.Resolved && tv.ResolvedBy == "" {
			tv.ResolvedBy = users.user(n.ResolvedBy).Name
		}
		tv.Notes = append(tv.Notes, nv)
	}
	if !tv.Resolved {
		tv.ResolvedBy = ""
	}
	if len(t.Notes) > 0 && t.Notes[0].Position != nil {
		tv.Line = lines.ref(*t.Notes[0].Position, t.Notes[0].ID)
	}
	return tv
}

// mergeBox answers "can it be merged, and why not" with the service's own
// rules: the question the merge asks (decide: permission, state, work in
// progress, unresolved threads) and the source branch's head (head), then
// the merge status the service computed (conflicts).
func (pg *mrPages) mergeBox(ctx context.Context, info projects.ProjectInfo, m mergerequest.MergeRequest, pipeline string) (mergeBox, error) {
	full := info.PathWithNamespace
	b := mergeBox{State: string(m.State), Pipeline: pipeline, HeadSHA: m.SHA, SourceBranch: m.SourceBranch, TargetBranch: m.TargetBranch,
		RemoveSource: m.ForceRemoveSourceBranch || m.ShouldRemoveSourceBranch, AutoMergeSet: m.MergeWhenPipelineSucceeds,
		Action: pg.site.URL(mrURL(full, m.IID, "/merge")), CancelAction: pg.site.URL(mrURL(full, m.IID, "/cancel_auto_merge"))}
	switch m.State {
	case mergerequest.Merged:
		if m.MergedByID != 0 {
			u := pg.s.renderer(ctx).user(m.MergedByID)
			b.MergedBy = pg.person(u.Name, u.Username)
		}
		b.MergedAt, b.MergeCommit = m.MergedAt, m.MergeCommitSHA
		if m.MergeCommitSHA != "" {
			b.MergeCommitHref = pg.site.URL("/" + web.EscapePath(full) + "/-/commit/" + m.MergeCommitSHA)
		}
		return b, nil
	case mergerequest.Closed:
		return b, nil
	case mergerequest.Locked:
		b.Reason = "This merge request is being merged."
		return b, nil
	}
	// Only one of the merge's rules depends on the pipeline: the project's
	// only_allow_merge_if_pipeline_succeeds (the service's
	// pipelineSucceeded). Without it a failed pipeline is a warning.
	mustSucceed := info.OnlyAllowMergeIfPipelineSucceeds && pipeline != ""
	switch {
	case mustSucceed && pipeline != "success" && pipeline != "skipped" && !pipelineActive(pipeline):
		b.Reason = "This project merges only when the pipeline succeeds, and the pipeline of the source branch's head " + pipeline + "."
	case pipeline == "failed":
		b.PipelineWarning = "The pipeline of the source branch's head failed."
	}
	if auth.FromContext(ctx).User == nil {
		b.Reason = "Sign in to merge."
		return b, nil
	}
	ref := mergerequest.Ref{Project: full, IID: m.IID}
	dec, err := pg.s.decide(ctx, ref, nil)
	switch {
	case errors.Is(err, mergerequest.ErrMergeNotAllowed):
		b.Reason = "You are not allowed to merge into " + m.TargetBranch + "."
		return b, nil
	case errors.Is(err, mergerequest.ErrNotOpen):
		b.Reason = "This merge request is not open."
		return b, nil
	case errors.Is(err, mergerequest.ErrNotMergeable):
		if m.WorkInProgress {
			b.Reason = "This merge request is a work in progress: remove WIP from its title to merge it."
		} else {
			b.Reason = "This project merges only when all threads are resolved, and some are not."
		}
		return b, nil
	case err != nil:
		return b, err
	}
	b.MayCancel = m.MergeWhenPipelineSucceeds
	if _, err := pg.s.head(ctx, dec.m, mergerequest.MergeInput{}); errors.Is(err, mergerequest.ErrNotMergeable) {
		b.Reason = "The source branch " + m.SourceBranch + " does not exist."
		return b, nil
	} else if err != nil {
		return b, err
	}
	if b.Reason != "" {
		return b, nil
	}
	if m.MergeStatus == mergerequest.CannotBeMerged {
		b.Reason = "There are merge conflicts: resolve them on the source branch, then merge."
		return b, nil
	}
	if m.MergeWhenPipelineSucceeds {
		return b, nil
	}
	b.CanMerge = true
	b.OfferAutoMerge = pipelineActive(pipeline)
	b.OnlyAutoMerge = mustSucceed && b.OfferAutoMerge
	return b, nil
}

// merge merges (or, with the Merge when pipeline succeeds button, sets
// the automatic merge) as PUT .../merge does; the head the page showed is
// the one merged (sha), so a push meanwhile is reviewed first.
func (pg *mrPages) merge(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	sha := r.PostFormValue("sha")
	remove := r.PostFormValue("should_remove_source_branch") != ""
	in := mergerequest.MergeInput{RemoveSourceBranch: &remove, WhenPipelineSucceeds: r.PostFormValue("merge_when_pipeline_succeeds") != ""}
	if sha != "" {
		in.SHA = &sha
	}
	_, err := pg.s.Merge(ctx, mergerequest.Ref{Project: full, IID: iid}, in)
	switch {
	case err == nil:
		pg.site.Redirect(w, r, mrURL(full, iid, ""))
	case errors.Is(err, mergerequest.ErrMergeNotAllowed):
		pg.show(w, r, iid, "", "You are not allowed to merge this merge request.", http.StatusForbidden)
	case errors.Is(err, mergerequest.ErrNotOpen):
		pg.show(w, r, iid, "", "Not merged: this merge request was merged, closed or is being merged by someone else meanwhile.", http.StatusConflict)
	case errors.Is(err, mergerequest.ErrSHAMismatch):
		pg.show(w, r, iid, "", "Not merged: the source branch changed since this page was loaded. Review the new changes, then merge again.", http.StatusConflict)
	case errors.Is(err, mergerequest.ErrTargetMoved):
		pg.show(w, r, iid, "", "Not merged: the target branch kept moving while merging. Try again.", http.StatusConflict)
	case errors.Is(err, mergerequest.ErrPipelineMustSucceed):
		pg.show(w, r, iid, "", "Not merged: this project merges only when the pipeline succeeds.", http.StatusMethodNotAllowed)
	case errors.Is(err, mergerequest.ErrNotMergeable):
		pg.show(w, r, iid, "", "Not merged: the branch cannot be merged as it is.", http.StatusMethodNotAllowed)
	default:
		pg.fail(w, r, err)
	}
}

// cancelAutoMerge drops the automatic merge, as PUT
// .../cancel_merge_when_pipeline_succeeds does.
func (pg *mrPages) cancelAutoMerge(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	full := r.PathValue("owner")
	_, err := pg.s.CancelAutoMerge(r.Context(), mergerequest.Ref{Project: full, IID: iid})
	switch {
	case err == nil, errors.Is(err, mergerequest.ErrNoAutoMerge):
		pg.site.Redirect(w, r, mrURL(full, iid, ""))
	case errors.Is(err, mergerequest.ErrMergeNotAllowed):
		pg.show(w, r, iid, "", "You are not allowed to cancel the automatic merge.", http.StatusForbidden)
	case errors.Is(err, mergerequest.ErrNotChangeable):
		pg.show(w, r, iid, "", "This merge request is not open.", http.StatusConflict)
	default:
		pg.fail(w, r, err)
	}
}

// comment posts the form's comment (or, with Preview, shows the page
// again with it rendered, unsaved).
func (pg *mrPages) comment(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	body := r.PostFormValue("note")
	if r.PostFormValue("preview") != "" {
		pg.show(w, r, iid, body, "", 0)
		return
	}
	if strings.TrimSpace(body) == "" {
		pg.show(w, r, iid, body, "A comment cannot be empty.", 0)
		return
	}
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	var posted target.Posted
	var err error
	if r.PostFormValue("thread") != "" {
		// Start a thread (POST .../discussions): one that can be resolved.
		var t target.Thread
		if t, err = pg.s.Collab.StartThread(ctx, where, target.NoteInput{Body: &body}, nil); err == nil && len(t.Notes) > 0 {
			posted.Note = &t.Notes[0]
		}
	} else {
		posted, err = pg.s.Collab.CreateNote(ctx, where, target.NoteInput{Body: &body})
	}
	if err != nil {
		if refused(err) {
			pg.show(w, r, iid, body, "The comment was not saved: "+invalidReason(err), 0)
			return
		}
		pg.fail(w, r, err)
		return
	}
	anchor := ""
	if posted.Note != nil {
		anchor = "#note_" + strconv.FormatInt(posted.Note.ID, 10)
	}
	pg.site.Redirect(w, r, mrURL(full, iid, "")+anchor)
}

// refused says whether a note's error is the visitor's input (shown with
// the form again) rather than a failure.
func refused(err error) bool {
	var invalid *target.InvalidError
	return errors.As(err, &invalid) || errors.Is(err, target.ErrMissing) || errors.Is(err, target.ErrBadParam) ||
		errors.Is(err, target.ErrBadPosition) || errors.Is(err, target.ErrBadRequest)
}

// invalidReason is a refused note's reason in words the page may show
// (the service's validation message, never an internal error's text).
func invalidReason(err error) string {
	var invalid *target.InvalidError
	if errors.As(err, &invalid) {
		return invalid.Error()
	}
	if errors.Is(err, target.ErrBadPosition) {
		return "the line is no longer in the diff."
	}
	return "it is not valid."
}

// changeState closes or reopens, as PUT state_event does.
func (pg *mrPages) changeState(w http.ResponseWriter, r *http.Request, iid mergerequest.IID, ev mergerequest.StateEvent) {
	full := r.PathValue("owner")
	_, err := pg.s.Update(r.Context(), mergerequest.Ref{Project: full, IID: iid}, mergerequest.Fields{}, ev)
	switch {
	case err == nil:
		pg.site.Redirect(w, r, mrURL(full, iid, ""))
	case errors.Is(err, mergerequest.ErrNotChangeable):
		pg.show(w, r, iid, "", "A merged merge request cannot be closed or reopened.", http.StatusConflict)
	case errors.Is(err, mergerequest.ErrExists):
		pg.show(w, r, iid, "", "Not reopened: another open merge request has the same branches.", http.StatusConflict)
	default:
		pg.fail(w, r, err)
	}
}

// subscribe subscribes the visitor to the merge request's notifications,
// or unsubscribes them.
func (pg *mrPages) subscribe(w http.ResponseWriter, r *http.Request, iid mergerequest.IID, on bool) {
	ctx, full := r.Context(), r.PathValue("owner")
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	_, _, err := pg.s.Collab.SubscribeTo(ctx, mergerequest.NoteableType, full, int64(iid), on)
	if err != nil && !errors.Is(err, target.ErrUnchanged) {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, mrURL(full, iid, ""))
}

// addTodo adds the merge request to the visitor's todos; one that is
// there already is left as it is.
func (pg *mrPages) addTodo(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	full := r.PathValue("owner")
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	if _, err := pg.s.Collab.MarkTodo(r.Context(), mergerequest.NoteableType, full, int64(iid)); err != nil && !errors.Is(err, target.ErrTodoExists) {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, mrURL(full, iid, ""))
}

// offerReply gives a thread of users' notes its reply form; back is the
// tab the reply returns to ("" the Overview, "diffs").
func (pg *mrPages) offerReply(w http.ResponseWriter, r *http.Request, tv *threadView, back string) {
	if !tv.Thread || len(tv.Notes) == 0 || tv.Notes[0].System {
		return
	}
	tv.Reply = &web.ReplyForm{Action: pg.site.URL(mrURL(r.PathValue("owner"), mustIID(r), "/reply")), CSRF: pg.site.CSRFToken(w, r), Return: back}
}

// mustIID is the merge request's iid of a page already dispatched.
func mustIID(r *http.Request) mergerequest.IID {
	num, _, _ := strings.Cut(r.PathValue("rest"), "/")
	iid, _ := parseIID(num)
	return iid
}

// reply adds the form's note to a thread (POST .../discussions/:id/notes)
// and returns to the tab the form was on.
func (pg *mrPages) reply(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	body, id := r.PostFormValue("note"), r.PostFormValue("discussion_id")
	back := mrURL(full, iid, "")
	if r.PostFormValue("return") == "diffs" {
		back = mrURL(full, iid, "/diffs")
	}
	if strings.TrimSpace(body) == "" {
		pg.show(w, r, iid, "", "A reply cannot be empty.", 0)
		return
	}
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	note, err := pg.s.Collab.Reply(ctx, where, id, target.NoteInput{Body: &body})
	switch {
	case err == nil:
		pg.site.Redirect(w, r, back+"#note_"+strconv.FormatInt(note.ID, 10))
	case errors.Is(err, target.ErrDiscussionNotFound):
		pg.site.NotFound(w, r)
	case refused(err):
		pg.show(w, r, iid, "", "The reply was not saved: "+invalidReason(err), 0)
	default:
		pg.fail(w, r, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
