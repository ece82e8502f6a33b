package internal

// The history pages of a project: its commits (/-/commits/<ref>/<path>),
// a commit with its diff (/-/commit/<sha>), its branches and tags. They
// read through the same plain methods as the API's handlers (refLog and
// logPage, read.go; the diff of diff.go), with the API's permission
// (ReadCode, through openCode).

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
)

// commitsPageSize is the commits one page of a history lists.
const commitsPageSize = 40

// maxCommitsPage bounds ?page=: a page past it would walk that many
// commits times 40 for one answer.
const maxCommitsPage = 2500

func (pg *pages) registerHistoryPages(s *web.Site) {
	t := s.Templates(pageTemplates, "templates/history/*.html", "templates/_shared.html")
	// The Files tab's rule: always shown, the page answers (ReadCode).
	s.AddProjectTab(web.ProjectTab{Key: "commits", Label: "Commits", Suffix: "/-/commits", Order: 30})
	s.Project("GET commits", func(w http.ResponseWriter, r *http.Request) { pg.commits(w, r, t) })
	s.Project("GET commit", func(w http.ResponseWriter, r *http.Request) { pg.commit(w, r, t) })
	s.AddProjectTab(web.ProjectTab{Key: "branches", Label: "Branches", Suffix: "/-/branches", Order: 40})
	s.Project("GET branches", func(w http.ResponseWriter, r *http.Request) { pg.branches(w, r, t) })
	s.Project("POST branches", pg.deleteBranch)
	s.Project("GET tags", func(w http.ResponseWriter, r *http.Request) { pg.tags(w, r, t) })
	s.Project("GET compare", func(w http.ResponseWriter, r *http.Request) { pg.compare(w, r, t) })
}

// historyCommit is a commit as a row of a history.
type historyCommit struct {
	SHA, Title, Author, Email, Href string
	When                            time.Time
}

func (pg *pages) historyCommit(fullPath string, c *object.Commit) historyCommit {
	return historyCommit{SHA: c.Hash.String(), Title: firstLine(c.Message), Author: c.Author.Name, Email: c.Author.Email,
		When: c.Author.When, Href: pg.site.URL(projectURL(fullPath, "commit", c.Hash.String(), ""))}
}

// commitsPage is the commits page's data.
type commitsPage struct {
	Ref, Path          string
	Commits            []historyCommit
	Page               int
	PrevHref, NextHref string
	Refs               refSwitch
}

// commits is /-/commits/<ref>/<path>: the history of ref (the default
// branch when none), of path when one is given, 40 a page. The pager
// knows only whether a next page exists (one commit past the page is
// read), never the whole history's length.
func (pg *pages) commits(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	if pg.switchRef(w, r, "commits") {
		return
	}
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return
	}
	full := info.PathWithNamespace
	var ref, p string
	var c *object.Commit
	if rest := r.PathValue("rest"); rest == "" {
		var err error
		if c, err = resolveCommit(repo, "", info.DefaultBranch); err != nil {
			// An empty repository: the overview says how to fill it.
			pg.site.Redirect(w, r, projectURL(full, "", "", ""))
			return
		}
		ref = info.DefaultBranch
	} else if ref, p, c, ok = splitRef(repo, rest); !ok {
		pg.site.NotFound(w, r)
		return
	}
	if p, ok = cleanTreePath(p); !ok {
		pg.site.NotFound(w, r)
		return
	}
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	if page > maxCommitsPage {
		pg.site.NotFound(w, r)
		return
	}
	iter, err := refLog(repo, c, p, nil, nil)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	list, more, err := logPage(iter, (page-1)*commitsPageSize, commitsPageSize)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := commitsPage{Ref: visible(ref), Path: visible(p), Page: page, Refs: pg.refSwitcher(repo, full, "commits", ref, p)}
	for _, c := range list {
		d.Commits = append(d.Commits, pg.historyCommit(full, c))
	}
	here := pg.site.URL(projectURL(full, "commits", ref, p))
	if page > 1 {
		d.PrevHref = here + "?page=" + strconv.Itoa(page-1)
	}
	if more {
		d.NextHref = here + "?page=" + strconv.Itoa(page+1)
	}
	title := "Commits · " + visible(ref)
	if p != "" {
		title += " · " + visible(p)
	}
	t.Render(w, r, "commits", web.Page{Title: title + " · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "commits",
		Crumbs: historyCrumbs(info, ref, p), Data: d})
}

// historyCrumbs lead from the project's commits at ref to p's.
func historyCrumbs(info projects.ProjectInfo, ref, p string) []web.Crumb {
	out := []web.Crumb{{Label: info.Path, Href: projectURL(info.PathWithNamespace, "tree", ref, "")}, {Label: "Commits"}}
	if p != "" {
		out[1].Href = projectURL(info.PathWithNamespace, "commits", ref, "")
		out = append(out, web.Crumb{Label: visible(p)})
	}
	return out
}

const (
	// maxDiffFiles bounds the files a diff shows; the rest are counted.
	maxDiffFiles = 500
	// maxDiffLines bounds the lines of one file's diff shown.
	maxDiffLines = 2000
	// collapsedDiffLines: a file's diff longer than this starts collapsed.
	collapsedDiffLines = 300
)

// diffLine is one line of a unified diff: Class is "add", "del", "hunk"
// or "" (context); Old and New its numbers in each side (0: none).
type diffLine struct {
	Class, Text string
	Old, New    int
}

// fileDiff is one changed file of a diff as a page shows it.
type fileDiff struct {
	ID, OldPath, NewPath, Status string
	Renamed, Binary, TooLarge    bool
	Added, Removed               int
	Lines                        []diffLine
	Omitted                      int // lines past maxDiffLines
	Collapsed                    bool
}

// diffView is the diff of a page: its files, bounded.
type diffView struct {
	Files          []fileDiff
	Added, Removed int
	OmittedFiles   int
}

// diffFiles shapes a diff's entries for a page: at most maxDiffFiles
// files and maxDiffLines lines of each; the entries are the module's
// (diff.go), whose blobs over maxDiffBlob come without a diff.
// whitespaceToggle is the "hide whitespace changes" switch of a diff
// page: with ?w=1 the entries lose the changes of whitespace alone
// (withoutWhitespaceChanges) and the files left with none are dropped
// (unless added, deleted, renamed or changed in mode); it returns the
// entries, how many files were dropped, and the link that flips it.
func whitespaceToggle(r *http.Request, entries []DiffView) (out []DiffView, hidden int, hide bool, href string) {
	q := r.URL.Query()
	hide = q.Get("w") == "1"
	if hide {
		q.Del("w")
	} else {
		q.Set("w", "1")
	}
	href = r.URL.EscapedPath()
	if enc := q.Encode(); enc != "" {
		href += "?" + enc
	}
	if !hide {
		return entries, 0, false, href
	}
	for _, e := range entries {
		diff, changed := withoutWhitespaceChanges(e.Diff)
		sameMode := e.AMode == nil || e.BMode == nil || *e.AMode == *e.BMode
		if !changed && e.Diff != "" && !e.NewFile && !e.DeletedFile && !e.RenamedFile && sameMode {
			hidden++
			continue
		}
		e.Diff = diff
		out = append(out, e)
	}
	return out, hidden, true, href
}

func diffFiles(entries []DiffView) diffView {
	var v diffView
	for i, e := range entries {
		if i == maxDiffFiles {
			v.OmittedFiles = len(entries) - maxDiffFiles
			break
		}
		f := fileDiff{ID: "diff-" + strconv.Itoa(i), OldPath: visible(e.OldPath), NewPath: visible(e.NewPath), Renamed: e.RenamedFile}
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
		case e.Diff == "" && !e.RenamedFile && (e.NewFile || e.DeletedFile || (e.AMode != nil && e.BMode != nil && *e.AMode == *e.BMode)):
			// No lines for a change of content: the module's diff left
			// out a blob over its bound (an empty file added or deleted
			// is shown so too: nothing to show either way).
			f.TooLarge = true
		}
		f.Lines, f.Added, f.Removed, f.Omitted = diffLines(e.Diff)
		f.Collapsed = len(f.Lines) > collapsedDiffLines
		v.Added += f.Added
		v.Removed += f.Removed
		v.Files = append(v.Files, f)
	}
	return v
}

// diffLines splits a file's hunks into lines numbered in each side,
// keeping the first maxDiffLines (counted, every line, to the end).
func diffLines(hunks string) (lines []diffLine, added, removed, omitted int) {
	if hunks == "" || strings.HasPrefix(hunks, "Binary files") {
		return nil, 0, 0, 0
	}
	old, nw := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(hunks, "\n"), "\n") {
		d := diffLine{Text: l}
		switch {
		case strings.HasPrefix(l, "@@"):
			d.Class = "hunk"
			old, nw = hunkStart(l)
		case strings.HasPrefix(l, "+"):
			d.Class, d.New = "add", nw
			nw++
			added++
		case strings.HasPrefix(l, "-"):
			d.Class, d.Old = "del", old
			old++
			removed++
		case strings.HasPrefix(l, "\\"):
			d.Class = "hunk" // "\ No newline at end of file"
		default:
			d.Old, d.New = old, nw
			old++
			nw++
		}
		if len(lines) == maxDiffLines {
			omitted++
			continue
		}
		d.Text = visibleLine(d.Text)
		lines = append(lines, d)
	}
	return lines, added, removed, omitted
}

// hunkStart reads a hunk header's first lines: "@@ -3,4 +3,5 @@".
func hunkStart(h string) (old, nw int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(f[1]), num(f[2])
}

// visibleLine is a diff line with its control characters (not tabs)
// shown as pictures, as names are.
func visibleLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return r
		case r < 0x20:
			return 0x2400 + r
		case r == 0x7f:
			return '\u2421'
		}
		return r
	}, s)
}

// parentLink is a parent of a commit.
type parentLink struct{ SHA, Href string }

// commitPage is the commit page's data.
type commitPage struct {
	Commit     historyCommit
	Body       string
	Committer  string
	Parents    []parentLink
	BrowseHref string
	Diff       diffView
	Files      int
	Stats      Stats
	Whitespace whitespaceSwitch
	// Pipeline is the commit's newest pipeline, when CI is loaded and the
	// visitor may see it (web.Site.CommitStatus).
	Pipeline *web.CIStatus
}

// whitespaceSwitch is the diff's whitespace toggle as a page shows it.
type whitespaceSwitch struct {
	Hide   bool
	Href   string
	Hidden int // files with whitespace changes alone, left out
}

// commit is /-/commit/<sha>: the commit's message, author, parents,
// stats and diff against its first parent (bounded by diffFiles).
func (pg *pages) commit(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return
	}
	sha := r.PathValue("rest")
	if sha == "" || strings.Contains(sha, "/") || !validRef(sha) {
		pg.site.NotFound(w, r)
		return
	}
	c, err := resolveCommit(repo, sha, "")
	if err != nil {
		pg.site.NotFound(w, r)
		return
	}
	entries, err := pg.rd.commitDiffEntries(r.Context(), info.ID, c)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	detail, err := pg.rd.detailOf(r.Context(), info.ID, c)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	full := info.PathWithNamespace
	shown, hidden, hide, href := whitespaceToggle(r, entries)
	d := commitPage{Stats: detail.Stats, Commit: pg.historyCommit(full, c), Diff: diffFiles(shown), Files: len(entries),
		Whitespace: whitespaceSwitch{Hide: hide, Href: pg.site.URL(href), Hidden: hidden},
		BrowseHref: pg.site.URL(projectURL(full, "tree", c.Hash.String(), ""))}
	if _, body, ok := strings.Cut(c.Message, "\n"); ok {
		d.Body = strings.TrimSpace(body)
	}
	if c.Committer.Name != c.Author.Name {
		d.Committer = c.Committer.Name
	}
	for _, p := range c.ParentHashes {
		d.Parents = append(d.Parents, parentLink{SHA: p.String(), Href: pg.site.URL(projectURL(full, "commit", p.String(), ""))})
	}
	if st, ok := pg.site.CommitStatus(r.Context(), info.ID, c.Hash.String()); ok {
		d.Pipeline = &st
	}
	t.Render(w, r, "commit", web.Page{Title: d.Commit.Title + " · " + web.ShortSHA(d.Commit.SHA) + " · " + info.NameWithNamespace,
		Project: projectHeader(info), Tab: "commits",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectURL(full, "", "", "")}, {Label: "Commits", Href: projectURL(full, "commits", "", "")},
			{Label: web.ShortSHA(d.Commit.SHA)}}, Data: d})
}

// refsPageSize is the branches, or tags, one page lists.
const refsPageSize = 100

// refRow is a branch or a tag as a row of its page.
type refRow struct {
	Name, Href         string
	Default, Protected bool
	// Ahead and Behind count a branch's commits against the default
	// branch's, when Counted (the page's walk budget allowed it).
	Ahead, Behind int
	Counted       bool
	// Deletable: the visitor may delete the branch (the API's rule); Ref
	// is its name as it is, for the form (Name is shown).
	Deletable               bool
	Ref                     string
	Message                 string
	CommitTitle, CommitHref string
	CommitSHA               string
	When                    time.Time
	// Pipeline is the head commit's newest pipeline (branches only), when
	// CI is loaded and the visitor may see it.
	Pipeline *web.CIStatus
}

// aheadBehindBudget bounds the commits one branches page reads to count
// its branches' divergence from the default branch; the branches past it
// show no counts.
const aheadBehindBudget = 20_000

// refsPage is the branches' or the tags' page's data.
type refsPage struct {
	Rows               []refRow
	DeleteAction       string
	MayDelete          bool
	Page, Pages, Total int
	PrevHref, NextHref string
}

// refWindow is the page'th page of n refs: its bounds and pager.
func (pg *pages) refWindow(r *http.Request, here string, n int) (lo, hi int, d refsPage) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	d = refsPage{Total: n, Pages: max(1, (n+refsPageSize-1)/refsPageSize)}
	d.Page = min(max(page, 1), d.Pages)
	if d.Page > 1 {
		d.PrevHref = here + "?page=" + strconv.Itoa(d.Page-1)
	}
	if d.Page < d.Pages {
		d.NextHref = here + "?page=" + strconv.Itoa(d.Page+1)
	}
	return (d.Page - 1) * refsPageSize, min(d.Page*refsPageSize, n), d
}

func (pg *pages) refRow(full, name string, c CommitView) refRow {
	return refRow{Name: visible(name), Href: pg.site.URL(projectURL(full, "tree", name, "")), CommitTitle: c.Title, CommitSHA: c.ID,
		CommitHref: pg.site.URL(projectURL(full, "commit", c.ID, "")), When: time.Time(c.CommittedDate)}
}

// branches is /-/branches: the branches by name, 100 a page, with the
// default and protected ones marked and their last commits.
func (pg *pages) branches(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return
	}
	if r.PathValue("rest") != "" {
		pg.site.NotFound(w, r)
		return
	}
	refs, err := sortedBranches(repo)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	full := info.PathWithNamespace
	lo, hi, d := pg.refWindow(r, pg.site.URL(projectURL(full, "branches", "", "")), len(refs))
	views, err := pg.rd.branchViews(r.Context(), info, repo, refs[lo:hi])
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	// Deleting takes push access (and neither the default branch nor a
	// protected one), as DELETE /repository/branches/:branch.
	mayPush := false
	if auth.FromContext(r.Context()).User != nil && !info.Archived {
		_, err := pg.rd.access.Require(r.Context(), full, projects.PushCode)
		mayPush = err == nil
	}
	d.DeleteAction, d.MayDelete = pg.site.URL(projectURL(full, "branches", "", "")), mayPush
	var defaultHead plumbing.Hash
	if ref, err := branchRef(repo, info.DefaultBranch); err == nil {
		defaultHead = ref.Hash()
	}
	budget := aheadBehindBudget
	for i, v := range views {
		row := pg.refRow(full, v.Name, v.Commit)
		row.Default, row.Protected = v.Name == info.DefaultBranch, v.Protected
		row.Deletable, row.Ref = mayPush && !row.Default && !row.Protected, v.Name
		// One bounded lookup per row of this page (web.Site.CommitStatus).
		if st, ok := pg.site.CommitStatus(r.Context(), info.ID, v.Commit.ID); ok {
			row.Pipeline = &st
		}
		if !row.Default && !defaultHead.IsZero() {
			row.Ahead, row.Behind, row.Counted, err = aheadBehind(repo, refs[lo+i].Hash(), defaultHead, &budget)
			if err != nil {
				pg.fail(w, r, err)
				return
			}
		}
		d.Rows = append(d.Rows, row)
	}
	t.Render(w, r, "branches", web.Page{Title: "Branches · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "branches",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectURL(full, "", "", "")}, {Label: "Branches"}}, Data: d})
}

// deleteBranch deletes the branch the form names, as DELETE
// /repository/branches/:branch does (push access; not the default branch,
// not a protected one), and comes back to the branches.
func (pg *pages) deleteBranch(w http.ResponseWriter, r *http.Request) {
	full := r.PathValue("owner")
	if r.PathValue("rest") != "" {
		pg.site.NotFound(w, r)
		return
	}
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	branch := r.PostFormValue("branch")
	err := pg.rd.writer.DeleteBranch(r.Context(), full, branch)
	var na *notAllowedError
	switch {
	case err == nil:
		pg.site.Redirect(w, r, projectURL(full, "branches", "", ""))
	case errors.Is(err, ErrBranchNotFound):
		pg.site.NotFound(w, r)
	case errors.As(err, &na):
		pg.site.ErrorMessage(w, r, http.StatusForbidden, "Branch not deleted", na.msg+".")
	case errors.Is(err, projects.ErrForbidden):
		pg.site.Error(w, r, http.StatusForbidden)
	default:
		pg.fail(w, r, err)
	}
}

// tags is /-/tags: the tags in reverse name order, 100 a page, with
// their messages (annotated tags) and commits.
func (pg *pages) tags(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return
	}
	if r.PathValue("rest") != "" {
		pg.site.NotFound(w, r)
		return
	}
	refs, err := sortedTags(repo)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	full := info.PathWithNamespace
	lo, hi, d := pg.refWindow(r, pg.site.URL(projectURL(full, "tags", "", "")), len(refs))
	for _, v := range pg.rd.tagViews(r.Context(), info, repo, refs[lo:hi]) {
		row := pg.refRow(full, v.Name, v.Commit)
		if v.Message != nil {
			row.Message = strings.TrimSpace(*v.Message)
		}
		d.Rows = append(d.Rows, row)
	}
	t.Render(w, r, "tags", web.Page{Title: "Tags · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "branches",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectURL(full, "", "", "")}, {Label: "Tags"}}, Data: d})
}

// maxCompareRows bounds the commits the compare page lists (the newest
// are kept); the comparison itself stops at maxCompareCommits.
const maxCompareRows = 200

// comparePage is the compare page's data.
type comparePage struct {
	Action, From, To string
	Compared         bool
	Same             bool
	Commits          []historyCommit
	MoreCommits      int
	Timeout          bool
	Diff             diffView
	Files            int
	Whitespace       whitespaceSwitch
}

// compare is /-/compare/<from>...<to> (refs may hold slashes, not
// "..."): the commits to has that from has not and the diff from their
// merge base, the commit page's diff partial. Bare, it is a form
// (?from=&to= is redirected to the comparison).
func (pg *pages) compare(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return
	}
	full := info.PathWithNamespace
	rest := r.PathValue("rest")
	d := comparePage{Action: pg.site.URL(projectURL(full, "compare", "", "")), From: info.DefaultBranch}
	page := web.Page{Title: "Compare · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "commits",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectURL(full, "", "", "")}, {Label: "Compare"}}}
	if rest == "" {
		q := r.URL.Query()
		if from, to := q.Get("from"), q.Get("to"); from != "" && to != "" {
			if !validRef(from) || !validRef(to) {
				pg.site.NotFound(w, r)
				return
			}
			pg.site.Redirect(w, r, projectURL(full, "compare", "", "")+"/"+web.EscapePath(from)+"..."+web.EscapePath(to))
			return
		}
		page.Data = d
		t.Render(w, r, "compare", page)
		return
	}
	fromRef, toRef, found := strings.Cut(rest, "...")
	if !found || !validRef(fromRef) || !validRef(toRef) {
		pg.site.NotFound(w, r)
		return
	}
	from, err1 := resolveCommit(repo, fromRef, "")
	to, err2 := resolveCommit(repo, toRef, "")
	if err1 != nil || err2 != nil {
		pg.site.NotFound(w, r)
		return
	}
	d.From, d.To, d.Compared, d.Same = visible(fromRef), visible(toRef), true, from.Hash == to.Hash
	if !d.Same {
		commits, diffs, timeout, err := pg.rd.comparison(r.Context(), info.ID, from, to)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		shown, hidden, hide, href := whitespaceToggle(r, diffs)
		d.Timeout, d.Files, d.Diff = timeout, len(diffs), diffFiles(shown)
		d.Whitespace = whitespaceSwitch{Hide: hide, Href: pg.site.URL(href), Hidden: hidden}
		if len(commits) > maxCompareRows {
			d.MoreCommits = len(commits) - maxCompareRows
			commits = commits[len(commits)-maxCompareRows:]
		}
		for i := len(commits) - 1; i >= 0; i-- {
			d.Commits = append(d.Commits, pg.historyCommit(full, commits[i]))
		}
	}
	page.Title = "Compare " + d.From + "..." + d.To + " · " + info.NameWithNamespace
	page.Data = d
	t.Render(w, r, "compare", page)
}
