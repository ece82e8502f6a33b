package internal

// The pipelines' pages: a project's list, the run pipeline form and a
// pipeline's page with its stages, jobs, retry and cancel.

import (
	"net/http"

	"github.com/fennec-forge/fennec/core/web"
)

// registerPipelinePages adds the pipelines' pages to the site.
func registerPipelinePages(site *web.Site, pg *ciPages) {
	pp := &pipelinePages{ciPages: pg, t: site.Templates(pageTemplates, "templates/pipelines/*.html")}
	site.Project("GET pipelines", pp.get)
	site.Project("POST pipelines", pp.post)
}

type pipelinePages struct {
	*ciPages
	t *web.Templates
}

func (pp *pipelinePages) get(w http.ResponseWriter, r *http.Request) {
	pp.site.NotFound(w, r)
}

func (pp *pipelinePages) post(w http.ResponseWriter, r *http.Request) {
	pp.site.NotFound(w, r)
}
