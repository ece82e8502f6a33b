package internal

// The releases page of a project (/-/releases, and one release at
// /-/releases/<tag>, the _links.self of the API's release): the same
// list as GET /projects/:id/releases, newest released first, each with
// its notes rendered at its tag, its commit, author and assets.

import (
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
)

// releasesPerPage is one page of releases.
const releasesPerPage = 20

type releaseRow struct {
	Name, Tag, TagHref, Anchor string
	Notes                      template.HTML
	CommitSHA, CommitHref      string
	Released                   time.Time
	Upcoming                   bool
	Author                     string
	Assets                     []releaseAsset
}

type releaseAsset struct{ Name, Href string }

type releasesPage struct {
	Rows                      []releaseRow
	Page, Pages, Total        int
	PrevHref, NextHref, Empty string
	Single                    bool
}

func (pg *pages) registerReleasePages(s *web.Site) {
	t := s.Templates(pageTemplates, "templates/releases/*.html", "templates/_shared.html")
	s.AddProjectTab(web.ProjectTab{Key: "releases", Label: "Releases", Suffix: "/-/releases", Order: 45})
	s.Project("GET releases", func(w http.ResponseWriter, r *http.Request) { pg.releases(w, r, t) })
}

// releases is the list (rest "") or one release (rest the tag).
func (pg *pages) releases(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	ctx, full, tag := r.Context(), r.PathValue("owner"), r.PathValue("rest")
	info, _, err := pg.rd.open(ctx, full, projects.ReadCode)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	var list []ReleaseDetail
	total := 0
	if tag != "" {
		one, err := pg.rd.writer.getRelease(ctx, &releaseTagInput{ProjectPath: ProjectPath{ID: full}, Tag: tag})
		if err != nil {
			pg.site.NotFound(w, r)
			return
		}
		list, total = []ReleaseDetail{*one.Body}, 1
	} else {
		out, err := pg.rd.writer.listReleases(ctx, &listReleasesInput{ProjectPath: ProjectPath{ID: full},
			PageParams: api.PageParams{Page: page, PerPage: releasesPerPage}})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		list = out.Body
		if out.Total != nil {
			total = *out.Total
		}
	}
	d := releasesPage{Total: total, Page: page, Pages: max((total+releasesPerPage-1)/releasesPerPage, 1), Single: tag != "",
		Empty: "This project has no releases yet. A release is a tag with release notes."}
	here := projectURL(full, "releases", "", "")
	if page > 1 {
		d.PrevHref = pg.site.URL(here + "?page=" + strconv.Itoa(page-1))
	}
	if page < d.Pages {
		d.NextHref = pg.site.URL(here + "?page=" + strconv.Itoa(page+1))
	}
	for _, v := range list {
		row := releaseRow{Name: v.Name, Tag: visible(v.TagName), TagHref: pg.site.URL(projectURL(full, "tree", v.TagName, "")),
			Anchor: "release-" + strconv.Itoa(len(d.Rows)+1), Released: time.Time(v.ReleasedAt), Upcoming: v.UpcomingRelease}
		if v.Description != nil {
			row.Notes = pg.markdown(ctx, info, v.TagName, "", *v.Description)
		}
		if v.Commit != nil {
			row.CommitSHA, row.CommitHref = v.Commit.ID, pg.site.URL(projectURL(full, "commit", v.Commit.ID, ""))
		}
		if v.Author != nil {
			row.Author = v.Author.Name
		}
		for _, l := range v.Assets.Links {
			row.Assets = append(row.Assets, releaseAsset{Name: l.Name, Href: l.URL})
		}
		for _, s := range v.Assets.Sources {
			row.Assets = append(row.Assets, releaseAsset{Name: "Source code (" + s.Format + ")", Href: s.URL})
		}
		d.Rows = append(d.Rows, row)
	}
	title, crumbs := "Releases", []web.Crumb{{Label: info.Path, Href: projectURL(full, "", "", "")}, {Label: "Releases"}}
	if tag != "" && len(d.Rows) == 1 {
		title = d.Rows[0].Name
		crumbs = []web.Crumb{{Label: info.Path, Href: projectURL(full, "", "", "")}, {Label: "Releases", Href: here}, {Label: d.Rows[0].Name}}
	}
	t.Render(w, r, "releases", web.Page{Title: title + " · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "releases",
		Crumbs: crumbs, Data: d})
}
