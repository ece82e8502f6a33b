package internal

// The Commits, Changes and Pipelines tabs of a merge request, and its
// line comments: a link under each line of the Changes tab opens a
// comment form there (no JavaScript: ?line=<file>_<old>_<new>#line-form),
// whose post starts a thread with the position of that line in the
// merge request's current diff (target.Service.StartThread, as POST
// .../discussions with position), checked by the module's own
// checkPosition. A line comment whose line a later push changed is
// outdated: the timeline shows it with the lines it was made on.

import (
	"context"
	_ "embed" // diffs.js
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/markup"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// diffsScript loads the Changes tab's collapsed files in place: an
// enhancement, their links work without it.
//
//go:embed static/diffs.js
var diffsScript []byte

const (
	// maxDiffFiles bounds the files the Changes tab shows; the rest are
	// counted.
	maxDiffFiles = 1000
	// maxDiffLines bounds the lines of one file's diff shown.
	maxDiffLines = 2000
	// collapsedDiffLines: a file's diff longer than this starts collapsed
	// (<details> closed).
	collapsedDiffLines = 300
	// maxPipelineRows bounds the commits the Pipelines tab asks CI about.
	maxPipelineRows = 100
	// maxLineThreads bounds the threads read to place line comments.
	maxLineThreads = 5000
	// renderedFiles and renderedLines are the Changes tab's budget: files
	// are rendered in full, in order, until either is reached, and every
	// later one is a collapsed entry (about 250 bytes) whose diff loads
	// on demand. A highlighted diff line is about 550 bytes of HTML and
	// most of the page's server time, so the budget is in lines; the file
	// count bounds a page of many small files. 50 files or 1,000 lines
	// keep the diffs within about 600 KB (a tenth of that sent
	// compressed) while a usual review still shows whole.
	renderedFiles = 50
	renderedLines = 1000
	// maxFileParam bounds the ?file= path looked for: no changed path is
	// longer (git's own limit is 4096).
	maxFileParam = 4096
)

// diffLine is one line of a unified diff: Class is "add", "del", "hunk"
// or "" (context), Old and New its numbers in each side (0: none), Code
// the line without its +/-/space prefix.
type diffLine struct {
	Class, Prefix, Code string
	HTML                template.HTML
	Old, New            int
}

// parseDiff splits a file's hunks into numbered lines, keeping at most
// limit (0: all); omitted counts the rest.
func parseDiff(hunks string, limit int) (lines []diffLine, added, removed, omitted int) {
	if hunks == "" || strings.HasPrefix(hunks, "Binary files") {
		return nil, 0, 0, 0
	}
	old, nw := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(hunks, "\n"), "\n") {
		d := diffLine{}
		switch {
		case strings.HasPrefix(l, "@@"):
			d.Class, d.Code = "hunk", l
			o, n, _ := hunkStarts(l)
			old, nw = o, n
		case strings.HasPrefix(l, "+"):
			d.Class, d.Prefix, d.Code, d.New = "add", "+", l[1:], nw
			nw++
			added++
		case strings.HasPrefix(l, "-"):
			d.Class, d.Prefix, d.Code, d.Old = "del", "-", l[1:], old
			old++
			removed++
		case strings.HasPrefix(l, "\\"):
			d.Class, d.Code = "hunk", l
		default:
			d.Prefix, d.Old, d.New = " ", old, nw
			if l != "" {
				d.Code = l[1:]
			}
			old++
			nw++
		}
		if limit > 0 && len(lines) == limit {
			omitted++
			continue
		}
		lines = append(lines, d)
	}
	return lines, added, removed, omitted
}

// highlightLines gives each line its HTML: the old side (context and
// removed lines) and the new side (context and added lines) are each
// highlighted as one text, so tokens spanning lines come out right.
func highlightLines(path string, lines []diffLine) {
	var oldText, newText strings.Builder
	for _, l := range lines {
		if l.Class == "del" || l.Class == "" {
			oldText.WriteString(l.Code + "\n")
		}
		if l.Class == "add" || l.Class == "" {
			newText.WriteString(l.Code + "\n")
		}
	}
	oldHTML := markup.Highlight(path, []byte(oldText.String()))
	newHTML := markup.Highlight(path, []byte(newText.String()))
	oi, ni := 0, 0
	for i := range lines {
		l := &lines[i]
		switch l.Class {
		case "del":
			if oi < len(oldHTML) {
				l.HTML = oldHTML[oi]
			}
			oi++
		case "add":
			if ni < len(newHTML) {
				l.HTML = newHTML[ni]
			}
			ni++
		case "":
			if ni < len(newHTML) {
				l.HTML = newHTML[ni]
			}
			oi++
			ni++
		default:
			l.HTML = template.HTML(template.HTMLEscapeString(l.Code)) //nolint:gosec // escaped
		}
	}
}

// lineKey names a line of a file's diff: the file's new path and both
// numbers.
func lineKey(newPath string, old, nw int) string {
	return newPath + "\x00" + strconv.Itoa(old) + "\x00" + strconv.Itoa(nw)
}

func posKey(p target.Position) string {
	o, n := 0, 0
	if p.OldLine != nil {
		o = *p.OldLine
	}
	if p.NewLine != nil {
		n = *p.NewLine
	}
	return lineKey(p.NewPath, o, n)
}

// lineIndex answers, for the line comments of one merge request, where
// they are in its current diff and whether they are outdated; the diffs
// are read once each, when first needed.
type lineIndex struct {
	pg      *mrPages
	ctx     context.Context
	info    projects.ProjectInfo
	m       mergerequest.MergeRequest
	current map[string]diffLine // by lineKey
	files   map[string]int      // new path -> file index in the current diff
	loaded  bool
	old     map[string][]repository.DiffView // by start+head
}

func newLineIndex(pg *mrPages, ctx context.Context, info projects.ProjectInfo, m mergerequest.MergeRequest) *lineIndex {
	return &lineIndex{pg: pg, ctx: ctx, info: info, m: m, old: map[string][]repository.DiffView{}}
}

// withCurrent sets the current diff (the Changes tab read it already).
func (x *lineIndex) withCurrent(diffs []repository.DiffView) {
	x.current, x.files, x.loaded = map[string]diffLine{}, map[string]int{}, true
	for i, d := range diffs {
		x.files[d.NewPath] = i
		lines, _, _, _ := parseDiff(d.Diff, 0)
		for _, l := range lines {
			if l.Class != "hunk" {
				x.current[lineKey(d.NewPath, l.Old, l.New)] = l
			}
		}
	}
}

func (x *lineIndex) load() {
	if x.loaded {
		return
	}
	x.loaded = true
	_, diffs, err := x.pg.s.Changes(x.ctx, mergerequest.Ref{Project: x.info.PathWithNamespace, IID: x.m.IID})
	if err != nil {
		// Without the current diff every line comment reads as current:
		// nothing is claimed outdated that may not be.
		x.current = nil
		return
	}
	x.withCurrent(diffs)
}

// madeOn is the line of the diff a comment was made on, with the lines
// before it (its hunk as GitLab shows an outdated one).
func (x *lineIndex) madeOn(p target.Position) (diffLine, []diffLine, bool) {
	key := p.StartSHA + ".." + p.HeadSHA
	diffs, ok := x.old[key]
	if !ok {
		var err error
		if diffs, err = x.pg.s.Merges.Diffs(x.ctx, x.info.ID, p.StartSHA, p.HeadSHA); err != nil {
			diffs = nil
		}
		x.old[key] = diffs
	}
	for _, d := range diffs {
		if d.NewPath != p.NewPath {
			continue
		}
		lines, _, _, _ := parseDiff(d.Diff, 0)
		for i, l := range lines {
			if l.Class != "hunk" && lineKey(d.NewPath, l.Old, l.New) == posKey(p) {
				from := max(0, i-3)
				hunk := append([]diffLine(nil), lines[from:i+1]...)
				highlightLines(p.NewPath, hunk)
				return l, hunk, true
			}
		}
	}
	return diffLine{}, nil, false
}

// outdated says whether a later push changed the comment's line: its head
// is no longer the merge request's and the current diff has not the same
// line there.
func (x *lineIndex) outdated(p target.Position) bool {
	if p.HeadSHA == x.m.SHA {
		return false
	}
	x.load()
	if x.current == nil {
		return false
	}
	cur, ok := x.current[posKey(p)]
	if !ok {
		return true
	}
	was, _, ok := x.madeOn(p)
	return !ok || was.Code != cur.Code || was.Class != cur.Class
}

// ref is the timeline's view of a line comment's place.
func (x *lineIndex) ref(p target.Position, noteID int64) *lineRef {
	lr := &lineRef{Path: p.NewPath}
	switch {
	case p.NewLine != nil:
		lr.Line = "line " + strconv.Itoa(*p.NewLine)
	case p.OldLine != nil:
		lr.Line = "old line " + strconv.Itoa(*p.OldLine)
	}
	if x.outdated(p) {
		lr.Outdated = true
		_, lr.Hunk, _ = x.madeOn(p)
		return lr
	}
	lr.Href = x.pg.site.URL(mrURL(x.info.PathWithNamespace, x.m.IID, "/diffs")) + "#note_" + strconv.FormatInt(noteID, 10)
	return lr
}

// commitRow is a commit of the Commits and Pipelines tabs.
type commitRow struct {
	SHA, Title, Author, Email, Href string
	When                            time.Time
	Pipeline                        string
	PipelineID                      int64
	PipelineHref                    string // the pipeline's page, when it runs in this project
}

type commitsData struct {
	Head    mrHead
	Commits []commitRow
}

func (pg *mrPages) commitRows(ctx context.Context, info projects.ProjectInfo, m mergerequest.MergeRequest) ([]commitRow, error) {
	list, err := pg.s.Commits(ctx, mergerequest.Ref{Project: info.PathWithNamespace, IID: m.IID})
	if err != nil {
		return nil, err
	}
	var out []commitRow
	for _, c := range list {
		title, _, _ := strings.Cut(c.Message, "\n")
		out = append(out, commitRow{SHA: c.ID, Title: strings.TrimRight(title, "\r"), Author: c.Author.Name, Email: c.Author.Email,
			When: c.Author.When, Href: pg.site.URL("/" + web.EscapePath(info.PathWithNamespace) + "/-/commit/" + c.ID)})
	}
	return out, nil
}

// commits is the Commits tab: the source's commits not in the target,
// newest first.
func (pg *mrPages) commits(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, m, head, err := pg.loadHead(ctx, full, iid, "commits")
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := commitsData{Head: head}
	if d.Commits, err = pg.commitRows(ctx, info, m); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.t.Render(w, r, "commits", web.Page{Title: pageTitle(m, info, "Commits"), Project: header(info), Tab: "merge_requests",
		Crumbs: pg.crumbs(info, iid), Data: d})
}

// pipelines is the Pipelines tab: the newest pipeline of each of the
// merge request's commits (the first maxPipelineRows), as CI answers.
func (pg *mrPages) pipelines(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, m, head, err := pg.loadHead(ctx, full, iid, "pipelines")
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := commitsData{Head: head}
	rows, err := pg.commitRows(ctx, info, m)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	if pg.s.CI != nil {
		for i, c := range rows {
			if i == maxPipelineRows {
				break
			}
			p, ok, err := pg.s.CI.Latest(ctx, m.SourceProjectID, c.SHA)
			if err != nil {
				pg.fail(w, r, err)
				return
			}
			if ok {
				c.Pipeline, c.PipelineID = p.Status, int64(p.ID)
				if m.SourceProjectID == info.ID {
					c.PipelineHref = pg.site.URL("/" + web.EscapePath(info.PathWithNamespace) + "/-/pipelines/" + itoa(int64(p.ID)))
				}
				d.Commits = append(d.Commits, c)
			}
		}
	}
	pg.t.Render(w, r, "pipelines", web.Page{Title: pageTitle(m, info, "Pipelines"), Project: header(info), Tab: "merge_requests",
		Crumbs: pg.crumbs(info, iid), Data: d})
}

// lineView is a line of the Changes tab with its comments and, when it is
// the one asked for, the comment form.
type lineView struct {
	diffLine
	ID          string
	CommentHref string
	Threads     []threadView
	Form        bool
}

type fileView struct {
	Index                     int
	ID, OldPath, NewPath      string
	Status                    string
	Renamed, Binary, TooLarge bool
	Collapsed                 bool
	// Deferred: past the page's budget, the file is a collapsed entry
	// whose diff LoadHref shows (the same tab with ?file=, anchored).
	Deferred                bool
	LoadHref                string
	Added, Removed, Omitted int
	Lines                   []lineView
	Rows                    []parallelRow // ?view=parallel
}

// lineForm is the comment form under a line, with the position it posts.
type lineForm struct {
	Action                     string
	BaseSHA, StartSHA, HeadSHA string
	OldPath, NewPath           string
	OldLine, NewLine           string
	Line                       string
	Draft, Problem             string
}

type changesData struct {
	Head           mrHead
	Files          []fileView
	FileCount      int
	OmittedFiles   int
	Added, Removed int
	Form           *lineForm
	SignedIn       bool
	MayComment     bool
	SignInHref     string
	Outdated       int
	// Deferred counts the files past the budget, loaded on demand.
	Deferred int
	// Single: the page shows one file (?file=); AllHref is the whole tab
	// at that file's entry.
	Single  bool
	AllHref string
	// The switches: whitespace changes hidden (Hidden files left out),
	// side by side; the links that flip each.
	HideSpace, Parallel          bool
	Hidden                       int
	SpaceHref, ViewHref, Unified string
}

// refusedLine is a line comment the service refused, shown again in its
// form.
type refusedLine struct {
	line, draft, problem string
}

// fileIndex is the index in diffs of the file path names (its new path,
// else its old one: a deleted file's), or -1.
func fileIndex(diffs []repository.DiffView, path string) int {
	if path == "" || len(path) > maxFileParam {
		return -1
	}
	for i, e := range diffs {
		if e.NewPath == path {
			return i
		}
	}
	for i, e := range diffs {
		if e.OldPath == path {
			return i
		}
	}
	return -1
}

// diffSize is what a file's diff costs the budget, in lines (at most
// maxDiffLines are ever shown), and its added and removed lines, counted
// without parsing it into lines.
func diffSize(hunks string) (lines, added, removed int) {
	if hunks == "" || strings.HasPrefix(hunks, "Binary files") {
		return 0, 0, 0
	}
	for rest := hunks; rest != ""; {
		l := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		lines++
		switch {
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return min(lines, maxDiffLines), added, removed
}

// changes is the Changes tab: the diff against the merge base
// (Service.Changes), highlighted, large files collapsed, with each line's
// comments and the comment links. Only the files within the budget
// (renderedFiles, renderedLines) are rendered; the others are entries
// whose diff loads on demand: ?file=<path> is this tab showing that file
// alone, which diffs.js fetches and puts in place of the entry.
func (pg *mrPages) changes(w http.ResponseWriter, r *http.Request, iid mergerequest.IID, refusal *refusedLine) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, m, head, err := pg.loadHead(ctx, full, iid, "diffs")
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	ref := mergerequest.Ref{Project: full, IID: iid}
	cm, diffs, err := pg.s.Changes(ctx, ref)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pr := auth.FromContext(ctx)
	self := mrURL(full, iid, "/diffs")
	d := changesData{Head: head, SignedIn: pr.User != nil, MayComment: pr.User != nil && !info.Archived && m.State != mergerequest.Locked && pg.s.Collab != nil,
		SignInHref: pg.site.URL("/users/sign_in?return_to=" + url.QueryEscape(pg.site.Prefix()+self))}
	q := r.URL.Query()
	d.HideSpace, d.Parallel = q.Get("w") == "1", q.Get("view") == "parallel"
	d.SpaceHref, d.ViewHref = pg.site.URL(self)+switchQuery(q, "w", "1"), pg.site.URL(self)+switchQuery(q, "view", "parallel")
	whole := diffs
	if d.HideSpace {
		diffs, d.Hidden = withoutWhitespace(diffs)
		// Line comments name lines of the whole diff.
		d.MayComment = false
	}
	if len(diffs) > maxDiffFiles {
		d.OmittedFiles = len(diffs) - maxDiffFiles
		diffs = diffs[:maxDiffFiles]
	}
	d.FileCount = len(diffs)
	only := -1
	if q.Has("file") {
		// An unknown path (a traversal, a file of another merge request,
		// one the whitespace switch hides, anything) is a 404, whatever
		// its size: it is only ever compared, never opened.
		if only = fileIndex(diffs, q.Get("file")); only < 0 {
			pg.site.ErrorMessage(w, r, http.StatusNotFound, "No such changed file",
				"This merge request changes no file at that path (with these switches).")
			return
		}
		d.Single = true
		d.AllHref = pg.site.URL(self) + fileQuery(q, "") + "#diff-" + strconv.Itoa(only)
	}
	asked := q.Get("line")
	draft, problem := "", ""
	if refusal != nil {
		asked, draft, problem = refusal.line, refusal.draft, refusal.problem
	}
	// Which files are rendered: the one asked for alone; else those
	// within the budget, and past it those with line comments (their
	// threads are linked from the timeline by anchor) and the one whose
	// line form is asked for.
	var threads []target.Thread
	if pg.s.Collab != nil {
		where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
		if threads, _, err = pg.s.Collab.Threads(ctx, where, target.Page{Limit: maxLineThreads}); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	commented := map[string]bool{}
	for _, t := range threads {
		if len(t.Notes) > 0 && t.Notes[0].Position != nil {
			commented[t.Notes[0].Position.NewPath] = true
		}
	}
	rendered := make([]bool, len(diffs))
	renderedPaths := map[string]bool{}
	files, lines := 0, 0
	for i, e := range diffs {
		size, _, _ := diffSize(e.Diff)
		switch {
		case only >= 0:
			rendered[i] = i == only
		case files < renderedFiles && lines < renderedLines, commented[e.NewPath],
			strings.HasPrefix(asked, strconv.Itoa(i)+"_"), size == 0:
			rendered[i] = true
		}
		if rendered[i] {
			files++
			lines += size
			renderedPaths[e.NewPath] = true
		}
	}
	// The line comments at their lines: those not outdated.
	atLine := map[string][]threadView{}
	if len(commented) > 0 {
		idx := newLineIndex(pg, ctx, info, cm)
		// Outdated or not is a question of the whole diff, whatever is shown.
		idx.withCurrent(whole)
		render := pg.renderer(ctx, info)
		for _, t := range threads {
			if len(t.Notes) == 0 || t.Notes[0].Position == nil {
				continue
			}
			p := *t.Notes[0].Position
			if idx.outdated(p) {
				d.Outdated++
				continue
			}
			if !renderedPaths[p.NewPath] {
				// Rendered with its file, when that is loaded.
				continue
			}
			tv := pg.threadView(ctx, info, target.Thread{ID: t.ID, Individual: t.Individual, Notes: t.Notes}, render, idx)
			tv.Line = nil
			if d.MayComment {
				pg.offerReply(w, r, &tv, "diffs")
			}
			atLine[posKey(p)] = append(atLine[posKey(p)], tv)
		}
	}
	var base, start string
	if d.MayComment {
		if mr, err := pg.s.load(ctx, info.ID, int64(iid)); err == nil {
			start = pg.s.baseOf(ctx, mr)
			base = pg.s.mergeBase(ctx, info.ID, start, cm.SHA)
		}
	}
	// The comment links keep the page's view (and its file, alone).
	linePrefix := pg.site.URL(self) + "?"
	if d.Single {
		linePrefix += "file=" + url.QueryEscape(diffs[only].NewPath) + "&"
	}
	if d.Parallel {
		linePrefix += "view=parallel&"
	}
	for i, e := range diffs {
		if d.Single && i != only {
			continue
		}
		f := fileView{Index: i, ID: "diff-" + strconv.Itoa(i), OldPath: e.OldPath, NewPath: e.NewPath, Renamed: e.RenamedFile}
		switch {
		case e.NewFile:
			f.Status = "added"
		case e.DeletedFile:
			f.Status = "deleted"
		case e.RenamedFile:
			f.Status = "renamed"
		default:
			f.Status = "modified"
		}
		switch {
		case strings.HasPrefix(e.Diff, "Binary files"):
			f.Binary = true
		case e.Diff == "" && !e.RenamedFile:
			f.TooLarge = true
		}
		if !rendered[i] {
			_, f.Added, f.Removed = diffSize(e.Diff)
			f.Deferred, f.Collapsed = true, true
			f.LoadHref = pg.site.URL(self) + fileQuery(q, e.NewPath) + "#" + f.ID
			d.Added += f.Added
			d.Removed += f.Removed
			d.Deferred++
			d.Files = append(d.Files, f)
			continue
		}
		lines, added, removed, omitted := parseDiff(e.Diff, maxDiffLines)
		highlightLines(e.NewPath, lines)
		f.Added, f.Removed, f.Omitted = added, removed, omitted
		// A file shown alone was asked for: it is open.
		f.Collapsed = len(lines) > collapsedDiffLines && !d.Single
		d.Added += added
		d.Removed += removed
		for _, l := range lines {
			lv := lineView{diffLine: l}
			if l.Class != "hunk" {
				lv.ID = "L" + strconv.Itoa(i) + "_" + strconv.Itoa(l.Old) + "_" + strconv.Itoa(l.New)
				lv.Threads = atLine[lineKey(e.NewPath, l.Old, l.New)]
				if len(lv.Threads) > 0 {
					f.Collapsed = false
				}
				if d.MayComment {
					key := strconv.Itoa(i) + "_" + strconv.Itoa(l.Old) + "_" + strconv.Itoa(l.New)
					lv.CommentHref = linePrefix + "line=" + key + "#line-form"
					if key == asked && start != "" {
						lv.Form = true
						f.Collapsed = false
						d.Form = &lineForm{Action: pg.site.URL(mrURL(full, iid, "/discussions")), BaseSHA: base, StartSHA: start,
							HeadSHA: cm.SHA, OldPath: e.OldPath, NewPath: e.NewPath, Line: key, Draft: draft, Problem: problem}
						if l.Class != "add" {
							d.Form.OldLine = strconv.Itoa(l.Old)
						}
						if l.Class != "del" {
							d.Form.NewLine = strconv.Itoa(l.New)
						}
					}
				}
			}
			f.Lines = append(f.Lines, lv)
		}
		if d.Parallel {
			f.Rows = parallelRows(f.Lines)
		}
		d.Files = append(d.Files, f)
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	title := "Changes"
	if d.Single {
		title = diffs[only].NewPath + " · Changes"
	}
	pg.t.Render(w, r, "changes", web.Page{Title: pageTitle(m, info, title), Project: header(info), Tab: "merge_requests", Status: status,
		Crumbs: pg.crumbs(info, iid), Data: d})
}

// fileQuery is the query of the tab showing file alone ("": every file),
// with q's switches (whitespace, side by side) kept.
func fileQuery(q url.Values, file string) string {
	v := url.Values{}
	for _, k := range []string{"w", "view"} {
		if q.Has(k) {
			v.Set(k, q.Get(k))
		}
	}
	if file != "" {
		v.Set("file", file)
	}
	if enc := v.Encode(); enc != "" {
		return "?" + enc
	}
	return ""
}

// switchQuery is the query that flips one switch (key=on) of q, the
// rest kept but the line asked for.
func switchQuery(q url.Values, key, on string) string {
	v := url.Values{}
	for k, vals := range q {
		if k != "line" {
			v[k] = vals
		}
	}
	if v.Get(key) == on {
		v.Del(key)
	} else {
		v.Set(key, on)
	}
	if enc := v.Encode(); enc != "" {
		return "?" + enc
	}
	return ""
}

// lineComment starts a line comment's thread with the posted position, as
// POST .../discussions with position does; a refused one shows the form
// again with the text kept.
func (pg *mrPages) lineComment(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	body := r.PostFormValue("note")
	line := r.PostFormValue("line")
	if strings.TrimSpace(body) == "" {
		pg.changes(w, r, iid, &refusedLine{line: line, draft: body, problem: "A comment cannot be empty."})
		return
	}
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	pos := &target.Position{BaseSHA: r.PostFormValue("base_sha"), StartSHA: r.PostFormValue("start_sha"), HeadSHA: r.PostFormValue("head_sha"),
		PositionType: "text", OldPath: r.PostFormValue("old_path"), NewPath: r.PostFormValue("new_path")}
	for field, dst := range map[string]**int{"old_line": &pos.OldLine, "new_line": &pos.NewLine} {
		if v := r.PostFormValue(field); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				pg.changes(w, r, iid, &refusedLine{line: line, draft: body, problem: "The comment was not saved: the line is not in the diff."})
				return
			}
			*dst = &n
		}
	}
	where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	t, err := pg.s.Collab.StartThread(ctx, where, target.NoteInput{Body: &body}, pos)
	if err != nil {
		if refused(err) {
			pg.changes(w, r, iid, &refusedLine{line: line, draft: body, problem: "The comment was not saved: " + invalidReason(err)})
			return
		}
		pg.fail(w, r, err)
		return
	}
	anchor := ""
	if len(t.Notes) > 0 {
		anchor = "#note_" + strconv.FormatInt(t.Notes[0].ID, 10)
	}
	pg.site.Redirect(w, r, mrURL(full, iid, "/diffs")+anchor)
}
