package internal

// The new merge request page: the source branch (of this project, which
// may be a fork) and the target (a branch of this project or of the one
// it was forked from), the commits and the diff before creating, and the
// title and description prefilled from the commits as GitLab does: a
// single commit's title and body, else the source branch's name made
// readable. Creating is Service.Create, as POST /merge_requests.

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxNewCommits bounds the commits the new merge request page lists.
const maxNewCommits = 100

// newForm is the new merge request form's fields, kept when refused.
type newForm struct {
	SourceBranch, TargetBranch string
	TargetProjectID            int64
	Title, Description         string
	RemoveSource               bool
}

type projectChoice struct {
	ID       int64
	Label    string
	Selected bool
}

type newData struct {
	Form       newForm
	Targets    []projectChoice
	Compared   bool
	Commits    []commitRow
	Files      []fileView
	Added      int
	Removed    int
	Action     string
	Problem    string
	CancelHref string
}

// humanise is a branch name as a title: "fix-login_page" is "Fix login
// page", as GitLab's new merge request does with several commits.
func humanise(branch string) string {
	s := strings.TrimSpace(strings.NewReplacer("-", " ", "_", " ", "/", " ").Replace(branch))
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return ""
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// newPage shows the form; with both branches given, the commits and the
// diff the merge request would have, and the title and description
// prefilled unless the form gave them (refused: its input, and problem).
func (pg *mrPages) newPage(w http.ResponseWriter, r *http.Request, f *newForm, problem string) {
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
	prefill := f == nil
	if f == nil {
		q := r.URL.Query()
		f = &newForm{SourceBranch: strings.TrimSpace(q.Get("source_branch")), TargetBranch: strings.TrimSpace(q.Get("target_branch")),
			TargetProjectID: info.ID}
		if id, err := strconv.ParseInt(q.Get("target_project_id"), 10, 64); err == nil && id == info.ForkedFromID && id != 0 {
			f.TargetProjectID = id
		}
		if f.TargetBranch == "" {
			f.TargetBranch = info.DefaultBranch
		}
	}
	d := newData{Form: *f, Problem: problem, Action: pg.site.URL(mrsURL(full, "")), CancelHref: pg.site.URL(mrsURL(full, ""))}
	d.Targets = []projectChoice{{ID: info.ID, Label: info.PathWithNamespace, Selected: f.TargetProjectID == info.ID}}
	if info.ForkedFromID != 0 {
		if up, err := pg.s.readProjectID(ctx, info.ForkedFromID); err == nil {
			d.Targets = append(d.Targets, projectChoice{ID: up.ID, Label: up.PathWithNamespace + " (upstream)", Selected: f.TargetProjectID == up.ID})
		}
	}
	if f.SourceBranch != "" && f.TargetBranch != "" {
		if err := pg.compare(ctx, info, f, &d, prefill); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "new", web.Page{Title: "New merge request · " + info.NameWithNamespace, Project: header(info), Tab: "merge_requests",
		Status: status, Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)},
			{Label: "Merge requests", Href: mrsURL(full, "")}, {Label: "New"}}, Data: d})
}

// compare fills the commits and diff of source into target (nothing when
// a branch is missing: the form says so when posted).
func (pg *mrPages) compare(ctx context.Context, info projects.ProjectInfo, f *newForm, d *newData, prefill bool) error {
	src, err := pg.s.Merges.BranchHead(ctx, info.ID, f.SourceBranch)
	if err != nil {
		return nil
	}
	tgt, err := pg.s.Merges.BranchHead(ctx, f.TargetProjectID, f.TargetBranch)
	if err != nil {
		return nil
	}
	if err := pg.s.Merges.Import(ctx, f.TargetProjectID, info.ID, src); err != nil {
		return err
	}
	commits, err := pg.s.Merges.Commits(ctx, f.TargetProjectID, tgt, src, maxNewCommits)
	if err != nil {
		return err
	}
	diffs, err := pg.s.Merges.Diffs(ctx, f.TargetProjectID, tgt, src)
	if err != nil {
		return err
	}
	d.Compared = true
	for _, c := range commits {
		title, _, _ := strings.Cut(c.Message, "\n")
		d.Commits = append(d.Commits, commitRow{SHA: c.ID, Title: strings.TrimRight(title, "\r"), Author: c.Author.Name,
			Email: c.Author.Email, When: c.Author.When, Href: pg.site.URL("/" + web.EscapePath(info.PathWithNamespace) + "/-/commit/" + c.ID)})
	}
	if prefill {
		if len(commits) == 1 {
			title, body, _ := strings.Cut(commits[0].Message, "\n")
			d.Form.Title, d.Form.Description = strings.TrimSpace(title), strings.TrimSpace(body)
		} else {
			d.Form.Title = humanise(f.SourceBranch)
		}
	}
	for i, e := range diffs {
		if i == maxDiffFiles {
			break
		}
		lines, added, removed, omitted := parseDiff(e.Diff, maxDiffLines)
		highlightLines(e.NewPath, lines)
		fv := fileView{Index: i, ID: "diff-" + strconv.Itoa(i), OldPath: e.OldPath, NewPath: e.NewPath, Renamed: e.RenamedFile,
			Added: added, Removed: removed, Omitted: omitted, Collapsed: len(lines) > collapsedDiffLines, Binary: strings.HasPrefix(e.Diff, "Binary files")}
		for _, l := range lines {
			fv.Lines = append(fv.Lines, lineView{diffLine: l})
		}
		d.Added += added
		d.Removed += removed
		d.Files = append(d.Files, fv)
	}
	return nil
}

// create opens the merge request the form describes, as POST
// /merge_requests does; a refused one shows the form again.
func (pg *mrPages) create(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	f := newForm{SourceBranch: r.PostFormValue("source_branch"), TargetBranch: r.PostFormValue("target_branch"),
		Title: r.PostFormValue("title"), Description: r.PostFormValue("description"), RemoveSource: r.PostFormValue("remove_source_branch") != ""}
	in := mergerequest.Fields{SourceBranch: &f.SourceBranch, TargetBranch: &f.TargetBranch, Title: &f.Title, Description: &f.Description,
		RemoveSourceBranch: &f.RemoveSource}
	if id, err := strconv.ParseInt(r.PostFormValue("target_project_id"), 10, 64); err == nil && id > 0 {
		f.TargetProjectID = id
		in.TargetProjectID = &id
	}
	m, err := pg.s.Create(ctx, full, in)
	if err != nil {
		var invalid *mergerequest.InvalidError
		var missing *mergerequest.BranchNotFoundError
		var exists *mergerequest.ExistsError
		var text *target.InvalidError
		switch {
		case errors.As(err, &invalid):
			pg.newPage(w, r, &f, "The merge request was not created: "+invalid.Field+" "+invalid.Text+".")
		case errors.As(err, &text):
			// The title and description rules are the collab contract's.
			pg.newPage(w, r, &f, "The merge request was not created: "+text.Error()+".")
		case errors.As(err, &missing):
			pg.newPage(w, r, &f, "The merge request was not created: "+missing.Error()+".")
		case errors.As(err, &exists):
			pg.newPage(w, r, &f, "The merge request was not created: an open merge request of these branches exists already.")
		case errors.Is(err, mergerequest.ErrMissing), errors.Is(err, mergerequest.ErrBranchesRequired):
			pg.newPage(w, r, &f, "The merge request was not created: the title and both branches are required.")
		case errors.Is(err, mergerequest.ErrSameBranch):
			pg.newPage(w, r, &f, "The merge request was not created: the source and the target are the same branch.")
		case errors.Is(err, mergerequest.ErrNotUpstream):
			pg.newPage(w, r, &f, "The merge request was not created: the target project is not this project's upstream.")
		default:
			pg.fail(w, r, err)
		}
		return
	}
	target := full
	if m.ProjectID != m.SourceProjectID {
		if up, err := pg.s.readProjectID(ctx, m.ProjectID); err == nil {
			target = up.PathWithNamespace
		}
	}
	pg.site.Redirect(w, r, mrURL(target, m.IID, ""))
}
