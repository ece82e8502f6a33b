package internal

// A job's pages (issue 30): the job with its live log and its actions
// (/:ns/:p/-/jobs/:id), the raw trace (/raw), the log's next lines for the
// page's script (/trace.json) and the artifacts browser
// (httppagesartifacts.go). Reads and commands are the API's cicd.Service
// calls with the browser's principal; the buttons shown are those the
// same rules allow.

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

//go:embed static/joblog.js
var jobLogScript []byte

//go:embed static/joblog.css
var jobLogStyle []byte

// traceWindow is how much of a long trace the page renders: its last
// 512 KiB (about 0.1 s of rendering, 1 MiB of HTML); the whole trace is
// the raw link's. A 4 MiB trace rendered whole is about a second and
// 9 MiB of HTML, too slow to follow live.
const traceWindow = 512 << 10

// traceChunkMax bounds one answer of trace.json: a page far behind
// catches up in steps of this size.
const traceChunkMax = 256 << 10

// jobRefusals add the job pages' own refusals to the module's: a missing
// trace, archive or file is missing, an action the job's state refuses
// is refused (as the API's 403).
var jobRefusals = web.Refusals{Page: "ci job page",
	Missing: append(append([]error{}, refusals.Missing...), cicd.ErrNoTrace, cicd.ErrNoArtifacts,
		cicd.ErrArtifactFileNotFound, cicd.ErrInvalidArtifactPath),
	Forbidden: append(append([]error{}, refusals.Forbidden...), cicd.ErrNotRetryable, cicd.ErrNotPlayable,
		cicd.ErrNotScheduled, cicd.ErrNotErasable, cicd.ErrMayNotErase)}

type jobPages struct {
	*ciPages
	t *web.Templates
}

// registerJobPages adds the job pages to the site.
func registerJobPages(site *web.Site, pg *ciPages) {
	jp := &jobPages{ciPages: pg, t: site.Templates(pageTemplates, "templates/jobs/*.html")}
	site.AddAsset("joblog.js", jobLogScript)
	site.AddAsset("joblog.css", jobLogStyle)
	site.Project("GET jobs", jp.get)
	site.Project("POST jobs", jp.post)
}

func (jp *jobPages) failed(w http.ResponseWriter, r *http.Request, err error) {
	jp.site.Fail(w, r, err, jobRefusals)
}

// get routes /-/jobs/:id[/...].
func (jp *jobPages) get(w http.ResponseWriter, r *http.Request) {
	idText, sub, _ := strings.Cut(r.PathValue("rest"), "/")
	id, ok := parseID(idText)
	if !ok {
		jp.site.NotFound(w, r)
		return
	}
	job := cicd.JobID(id)
	switch {
	case sub == "":
		jp.show(w, r, job)
	case sub == "raw":
		jp.raw(w, r, job)
	case sub == "trace.json":
		jp.traceChunk(w, r, job)
	case sub == "artifacts/download":
		jp.download(w, r, job)
	case sub == "artifacts/browse" || strings.HasPrefix(sub, "artifacts/browse/"):
		jp.browse(w, r, job, strings.TrimPrefix(strings.TrimPrefix(sub, "artifacts/browse"), "/"))
	case strings.HasPrefix(sub, "artifacts/file/"):
		jp.file(w, r, job, strings.TrimPrefix(sub, "artifacts/file/"))
	case strings.HasPrefix(sub, "artifacts/raw/"): // GitLab's other spelling of a file's link
		jp.file(w, r, job, strings.TrimPrefix(sub, "artifacts/raw/"))
	default:
		jp.site.NotFound(w, r)
	}
}

// jobCommand is one of the job's actions, the API's command.
type jobCommand func(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error)

// commands are the job's actions by the path that posts them.
func (jp *jobPages) commands() map[string]jobCommand {
	s := jp.s
	return map[string]jobCommand{"retry": s.RetryJob, "cancel": s.CancelJob, "play": s.PlayJob, "erase": s.EraseJob,
		"unschedule": s.UnscheduleJob, "artifacts/keep": s.KeepArtifacts}
}

// post runs an action (POST /-/jobs/:id/retry...) and goes back to the
// job's page, the new job's after a retry.
func (jp *jobPages) post(w http.ResponseWriter, r *http.Request) {
	idText, action, _ := strings.Cut(r.PathValue("rest"), "/")
	id, ok := parseID(idText)
	command := jp.commands()[action]
	if !ok || command == nil {
		jp.site.NotFound(w, r)
		return
	}
	owner := r.PathValue("owner")
	if auth.FromContext(r.Context()).User == nil {
		jp.site.Missing(w, r)
		return
	}
	j, err := command(r.Context(), owner, cicd.JobID(id))
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	info, err := jp.s.access.Require(r.Context(), owner, projects.ReadJobs)
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	jp.site.Redirect(w, r, jobPageURL(info.PathWithNamespace, j.ID))
}

// jobView is the job page's data.
type jobView struct {
	Job          cicd.Job
	Status       web.CIStatus
	Href         string
	PipelineHref string
	CommitHref   string
	Runner       string
	Duration     string
	QueuedAt     *time.Time
	Erased       bool
	Coverage     string
	Actions      []jobAction
	// MayErase shows the erase button, behind its confirmation.
	MayErase  bool
	EraseHref string
	Artifacts *artifactsView
	Trace     traceView
}

// jobAction is a button posting a command.
type jobAction struct {
	Label, Action, Class string
}

type artifactsView struct {
	Size                     int64
	Expires                  string // "expires in 3 days", "kept", "" without expiry
	BrowseHref, DownloadHref string
	KeepAction               string // "" when the visitor may not keep them
}

// traceView is the rendered log and what the page's script needs to
// follow it.
type traceView struct {
	HTML      []tracePart
	None      bool   // no trace (yet, or erased)
	Live      bool   // the job runs: the script follows the log
	Offset    int64  // where the next lines start
	State     string // traceState.encode()
	PollURL   string
	RawHref   string
	Skipped   int64 // bytes before the shown window
	Shown     int64 // bytes shown
	TotalSize int64
}

func (jp *jobPages) show(w http.ResponseWriter, r *http.Request, id cicd.JobID) {
	ctx := r.Context()
	owner := r.PathValue("owner")
	info, raw, p, err := jp.s.loadJob(ctx, owner, id, projects.ReadJobs)
	if err == nil && raw.Bridge {
		err = cicd.ErrJobNotFound
	}
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	j := jobRecord(raw, p)
	full := info.PathWithNamespace
	href := jobPageURL(full, j.ID)
	v := jobView{Job: j, Href: jp.site.URL(href), Status: web.CIStatus{Status: j.Status},
		PipelineHref: jp.site.URL(pipelinePageURL(full, j.PipelineID)),
		CommitHref:   jp.site.URL(projectPageURL(full, "/-/commit/"+j.SHA)),
		QueuedAt:     raw.QueuedAt, Erased: raw.ErasedAt != nil}
	if run, ok := jp.s.runnerBrief(ctx, j.RunnerID); ok {
		v.Runner = fmt.Sprintf("#%d (%s)", run.ID, run.Description)
	} else if raw.Executor != "" {
		v.Runner = "executor " + raw.Executor
	}
	if j.StartedAt != nil {
		end := time.Now()
		if j.FinishedAt != nil {
			end = *j.FinishedAt
		}
		v.Duration = humanDuration(end.Sub(*j.StartedAt))
	}
	if j.Coverage != nil {
		v.Coverage = strconv.FormatFloat(*j.Coverage, 'f', -1, 64) + "%"
	}
	jp.allowed(r, info, raw, href, &v)
	v.Trace = jp.trace(r, owner, j, href)
	jp.t.Render(w, r, "job", web.Page{Title: j.Name + " · Job #" + strconv.FormatInt(int64(j.ID), 10), Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: "Pipelines", Href: jp.site.URL(projectPageURL(full, "/-/pipelines"))},
			{Label: "#" + strconv.FormatInt(int64(j.PipelineID), 10), Href: v.PipelineHref}, {Label: j.Name}}, Data: v})
}

// allowed sets the buttons the API would let the visitor use: Developer,
// the protected ref's rule, and each command's own state and rule.
func (jp *jobPages) allowed(r *http.Request, info projects.ProjectInfo, raw *Job, href string, v *jobView) {
	ctx := r.Context()
	if raw.Artifacts != nil {
		v.Artifacts = &artifactsView{Size: raw.Artifacts.Size, BrowseHref: jp.site.URL(href + "/artifacts/browse"),
			DownloadHref: jp.site.URL(href + "/artifacts/download")}
		switch {
		case raw.Artifacts.Kept:
			v.Artifacts.Expires = "kept"
		case raw.Artifacts.ExpireAt != nil:
			v.Artifacts.Expires = expiresIn(time.Until(*raw.Artifacts.ExpireAt))
		}
	}
	if _, err := jp.s.access.Require(ctx, info.PathWithNamespace, projects.PushCode); err != nil {
		return
	}
	if jp.s.mayControlRef(ctx, info.ID, raw.Ref, raw.Tag) != nil {
		return
	}
	action := func(label, path, class string) {
		v.Actions = append(v.Actions, jobAction{Label: label, Action: jp.site.URL(href + "/" + path), Class: class})
	}
	switch {
	case raw.Status == StatusManual:
		action("Run", "play", "primary")
	case raw.Status == StatusScheduled:
		action("Run now", "play", "primary")
		action("Unschedule", "unschedule", "")
	case active(raw.Status):
		action("Cancel", "cancel", "")
	case retryable(raw):
		action("Retry", "retry", "primary")
	}
	if v.Artifacts != nil && !raw.Artifacts.Kept && raw.Artifacts.ExpireAt != nil {
		v.Artifacts.KeepAction = jp.site.URL(href + "/artifacts/keep")
	}
	if finished(raw.Status) && raw.ErasedAt == nil && (raw.Artifacts != nil || raw.TraceBytes > 0) && eraser(ctx, info, raw) == nil {
		v.MayErase, v.EraseHref = true, jp.site.URL(href+"/erase")
	}
}

// trace renders the log's last traceWindow bytes, from a line's start.
func (jp *jobPages) trace(r *http.Request, owner string, j cicd.Job, href string) traceView {
	tv := traceView{RawHref: jp.site.URL(href + "/raw"), PollURL: jp.site.URL(href + "/trace.json"), Live: logLive(j.Status)}
	// The window's start is taken from the size a first open reads: a
	// growing trace only adds lines after it.
	f, err := jp.s.TraceFrom(r.Context(), owner, j.ID, 0)
	if err == nil && f.Size > traceWindow {
		f.Content.Close()
		tv.Skipped = f.Size - traceWindow
		f, err = jp.s.TraceFrom(r.Context(), owner, j.ID, tv.Skipped)
	}
	if err != nil {
		// A job that has not started has no trace yet: its page waits for
		// the first lines.
		tv.None = !tv.Live
		return tv
	}
	defer f.Content.Close()
	tv.TotalSize = f.Size
	data, err := io.ReadAll(io.LimitReader(f.Content, traceWindow))
	if err != nil {
		tv.None = true
		return tv
	}
	if tv.Skipped > 0 {
		// From the first whole line of the window.
		cut := strings.IndexByte(string(data[:min(len(data), 64<<10)]), '\n') + 1
		data, tv.Skipped = data[cut:], tv.Skipped+int64(cut)
	}
	parts, n, st := renderTrace(data, traceState{}, !tv.Live)
	tv.HTML, tv.Offset, tv.State = parts, tv.Skipped+int64(n), st.encode()
	tv.None = f.Size == 0 && !tv.Live
	tv.Shown = f.Size - tv.Skipped
	return tv
}

// traceChunkView is trace.json's answer.
type traceChunkView struct {
	Parts    []tracePart `json:"parts"`
	Offset   int64       `json:"offset"`
	State    string      `json:"state"`
	Status   string      `json:"status"`
	Complete bool        `json:"complete"`
	// More: the answer stopped at traceChunkMax; ask again at once.
	More bool `json:"more"`
}

// traceChunk answers the log's complete lines from ?offset= (where the
// page's last answer ended, with its ?state=), at most traceChunkMax
// bytes, the job's status and whether the log is complete.
//
// With wait=1 a request with nothing new to answer (no line past the
// offset, the job still running and its status the ?status= the page
// shows) waits for the job's trace to grow or its status to change, at
// most the service's limit or until the visitor leaves, then answers as
// without it. When the process already has its most waiters, or the
// server is stopping, it answers at once: the page then asks again a
// second later.
func (jp *jobPages) traceChunk(w http.ResponseWriter, r *http.Request, id cicd.JobID) {
	ctx := r.Context()
	q := r.URL.Query()
	offset, err := strconv.ParseInt(q.Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		jp.site.ErrorMessage(w, r, http.StatusBadRequest, "Invalid request", "The offset is not a number of bytes.")
		return
	}
	owner, state := r.PathValue("owner"), q.Get("state")
	wait := q.Get("wait") == "1"
	var limit <-chan time.Time
	if wait {
		timer := time.NewTimer(jp.s.traceWaits.limit)
		defer timer.Stop()
		limit = timer.C
	}
	var out traceChunkView
	for {
		changed, release, waiting := (<-chan struct{})(nil), func() {}, false
		if wait {
			// Watching before the read: a change between the read and
			// the wait still wakes it. The job's id is checked by the read.
			changed, release, waiting = jp.s.traceWaits.watch(int64(id))
		}
		out, err = jp.readChunk(ctx, owner, id, offset, state)
		if err != nil || !waiting || len(out.Parts) > 0 || out.Complete || (q.Get("status") != "" && q.Get("status") != out.Status) {
			release()
			break
		}
		// Nothing new (or half a line): wait for a change, then read
		// again, until the limit.
		select {
		case <-changed:
			release()
			continue
		case <-limit:
		case <-jp.s.traceWaits.stopping: // the server stops: answer now
		case <-ctx.Done():
		}
		release()
		if ctx.Err() != nil {
			return // the visitor left: nobody reads an answer
		}
		break
	}
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_ = json.NewEncoder(w).Encode(out)
}

// readChunk is trace.json's answer from offset with the page's state,
// read as the visitor (the job's permission checked each time).
func (jp *jobPages) readChunk(ctx context.Context, owner string, id cicd.JobID, offset int64, state string) (traceChunkView, error) {
	j, err := jp.s.Job(ctx, owner, id)
	if err != nil {
		return traceChunkView{}, err
	}
	out := traceChunkView{Offset: offset, State: state, Status: j.Status, Complete: !logLive(j.Status),
		Parts: []tracePart{}}
	f, err := jp.s.TraceFrom(ctx, owner, id, offset)
	switch {
	case errors.Is(err, cicd.ErrNoTrace):
		return out, nil
	case err != nil:
		return traceChunkView{}, err
	}
	defer f.Content.Close()
	if offset < f.Size {
		data, err := io.ReadAll(io.LimitReader(f.Content, traceChunkMax))
		if err != nil {
			return traceChunkView{}, err
		}
		out.More = len(data) == traceChunkMax && offset+int64(len(data)) < f.Size
		last := out.Complete && offset+int64(len(data)) >= f.Size
		parts, n, st := renderTrace(data, decodeTraceState(out.State), last)
		if n > 0 {
			out.Parts, out.Offset, out.State = parts, offset+int64(n), st.encode()
		}
		// Not complete until the page has every line.
		out.Complete = out.Complete && out.Offset >= f.Size
	}
	return out, nil
}

// raw serves the whole trace as text, as GitLab's raw log.
func (jp *jobPages) raw(w http.ResponseWriter, r *http.Request, id cicd.JobID) {
	f, err := jp.s.Trace(r.Context(), r.PathValue("owner"), id)
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	defer f.Content.Close()
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, f.Content)
}

// logLive: a job in this status may still write to its log (a manual
// or a delayed job waits for someone, and its page for a reload).
func logLive(status string) bool {
	return active(status) && status != StatusManual && status != StatusScheduled
}

// humanDuration is a job's duration as GitLab shows it: "42 seconds",
// "3 minutes 5 seconds", "1 hour 2 minutes".
func humanDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return web.Plural(int(s), "second")
	case s < 3600:
		return web.Plural(int(s/60), "minute") + " " + web.Plural(int(s%60), "second")
	}
	return web.Plural(int(s/3600), "hour") + " " + web.Plural(int(s/60%60), "minute")
}

// expiresIn says when artifacts expire: "expire in 3 days".
func expiresIn(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d < time.Hour:
		return "expire in " + web.Plural(max(int(d/time.Minute), 1), "minute")
	case d < 48*time.Hour:
		return "expire in " + web.Plural(int(d/time.Hour), "hour")
	}
	return "expire in " + web.Plural(int((d+12*time.Hour)/(24*time.Hour)), "day")
}
