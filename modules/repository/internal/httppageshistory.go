package internal

// The history pages of a project: its commits (/-/commits/<ref>/<path>),
// a commit with its diff (/-/commit/<sha>), its branches and tags. They
// read through the same plain methods as the API's handlers (refLog and
// logPage, read.go; the diff of diff.go), with the API's permission
// (ReadCode, through openCode).

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
)

// commitsPageSize is the commits one page of a history lists.
const commitsPageSize = 40

// maxCommitsPage bounds ?page=: a page past it would walk that many
// commits times 40 for one answer.
const maxCommitsPage = 2500

func (pg *pages) registerHistoryPages(s *web.Site) {
	t := s.Templates(pageTemplates, "templates/history/*.html")
	// The Files tab's rule: always shown, the page answers (ReadCode).
	s.AddProjectTab(web.ProjectTab{Key: "commits", Label: "Commits", Suffix: "/-/commits", Order: 30})
	s.Project("GET commits", func(w http.ResponseWriter, r *http.Request) { pg.commits(w, r, t) })
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
