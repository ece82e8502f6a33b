package internal

// The CI module's web pages (issue 30): pipelines, a pipeline, the run
// pipeline form, environments and badges (httppagespipelines.go,
// httppagesenvironments.go, httppagesbadges.go), and the jobs' pages
// (registerJobPages). Every read and every command is the same
// cicd.Service call as the API's, with the browser's principal, so a page
// shows and does exactly what the API lets the visitor. This file
// registers them and holds what they share.

import (
	"context"
	"embed"
	"net/http"
	"net/url"
	"strconv"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

//go:embed all:templates
var pageTemplates embed.FS // all: keeps the partials, files named "_*"

// PagesDeps are what NewPages is built from.
type PagesDeps struct {
	fennec.In
	Service   *Service
	Pipelines *CommitPipelines
}

// ciPages are the CI module's pages; each page file adds its handlers.
type ciPages struct {
	site    *web.Site
	s       *Service
	commits *CommitPipelines
}

// NewPages registers the CI module's pages, its project tab and its
// answer to the site's question about a commit's status.
func NewPages(d PagesDeps) fennec.Pages {
	return fennec.Pages{Name: "ci", Register: func(site *web.Site) {
		pg := &ciPages{site: site, s: d.Service, commits: d.Pipelines}
		site.AddProjectTab(web.ProjectTab{Key: "pipelines", Label: "CI/CD", Suffix: "/-/pipelines", Order: 60, Feature: "jobs_enabled"})
		site.SetCommitStatus(pg.commitStatus)
		registerPipelinePages(site, pg)
		registerEnvironmentPages(site, pg)
		registerSettingsPages(site, d.Service)
		// The badges: httppagesbadges.go.
		site.Path(pg.serveBadge)
		registerJobPages(site, pg)
	}}
}

// refusals sort the CI pages' failed service calls: what the visitor may
// not see is missing (sign in, or the 404 page), a refused command the
// 403 page, anything else the 500 page with a log line.
var refusals = web.Refusals{Page: "ci page",
	Missing: []error{projects.ErrNotFound, cicd.ErrPipelineNotFound, cicd.ErrJobNotFound, cicd.ErrEnvironmentNotFound,
		cicd.ErrDeploymentNotFound},
	Forbidden: []error{projects.ErrForbidden, auth.ErrUnauthorized, cicd.ErrProtectedRef}}

// fail answers a page whose service call failed, never with the error's
// text.
func (pg *ciPages) fail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, refusals)
}

// header is the project's header above the CI pages.
func header(info projects.ProjectInfo) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// projectPageURL is a page of the project under the site's root, escaped:
// projectPageURL("g/p", "/-/pipelines/3").
func projectPageURL(full, suffix string) string { return "/" + web.EscapePath(full) + suffix }

func pipelinePageURL(full string, id cicd.PipelineID) string {
	return projectPageURL(full, "/-/pipelines/"+strconv.FormatInt(int64(id), 10))
}

func jobPageURL(full string, id cicd.JobID) string {
	return projectPageURL(full, "/-/jobs/"+strconv.FormatInt(int64(id), 10))
}

// commitStatus answers web.Site.CommitStatus: the newest pipeline of the
// commit, when the visitor may read the project's pipelines (one access
// check and one index read).
func (pg *ciPages) commitStatus(ctx context.Context, projectID int64, sha string) (web.CIStatus, bool) {
	info, err := pg.s.access.RequireID(ctx, projectID, projects.ReadJobs)
	if err != nil {
		return web.CIStatus{}, false
	}
	p, ok, err := pg.commits.Latest(ctx, projectID, sha)
	if err != nil {
		pg.site.Logger().Warn("ci: a commit's status", zap.Int64("project", projectID), zap.Error(err))
		return web.CIStatus{}, false
	}
	if !ok {
		return web.CIStatus{}, false
	}
	return web.CIStatus{Status: p.Status, Href: pg.site.URL(pipelinePageURL(info.PathWithNamespace, p.ID))}, true
}

// parseID is a positive decimal id in its one spelling ("12", not "012").
func parseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// userLink is a user as the pages link them.
type userLink struct{ Name, Username, Href string }

// userLinkOf is the link of user id, nil for none (0, or gone); seen
// remembers the users one page read.
func (pg *ciPages) userLinkOf(ctx context.Context, id int64, seen map[int64]*userLink) *userLink {
	if id == 0 {
		return nil
	}
	u, ok := seen[id]
	if !ok {
		if info, err := pg.s.users.UserByID(ctx, id); err == nil {
			u = &userLink{Name: info.Name, Username: info.Username, Href: pg.site.URL("/" + url.PathEscape(info.Username))}
		}
		seen[id] = u
	}
	return u
}
