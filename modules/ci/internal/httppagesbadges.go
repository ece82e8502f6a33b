package internal

// The badges of a ref's pipeline and coverage, for READMEs elsewhere:
// "/<project>/badges/<ref>/pipeline.svg" and ".../coverage.svg" (no "/-/",
// as GitLab serves them, so they are a bare path the site hands its path
// handlers). A project whose pipelines the visitor may not read is the
// 404 page, as GitLab answers, so that a private project's badge tells
// nothing; the images are never cached, since the status changes.

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxBadgeSplits bounds the places "/badges/" is tried as the end of a
// project's path (a group may be named "badges").
const maxBadgeSplits = 4

// badgeColors are the value side's colours by the status's word.
var badgeColors = map[string]string{
	"passed": "#3e9c35", "failed": "#d9534f", "running": "#2f80c9", "pending": "#c98a1b", "canceled": "#7a7a7a",
	"skipped": "#7a7a7a", "created": "#7a7a7a", "manual": "#2f80c9", "unknown": "#7a7a7a",
}

// serveBadge is the site's path handler for the badges: it declines any
// path that is not one.
func (pg *ciPages) serveBadge(w http.ResponseWriter, r *http.Request, path string) bool {
	var kind string
	switch {
	case strings.HasSuffix(path, "/pipeline.svg"):
		kind = "pipeline"
	case strings.HasSuffix(path, "/coverage.svg"):
		kind = "coverage"
	default:
		return false
	}
	rest := strings.TrimSuffix(path, "/"+kind+".svg")
	if !strings.Contains(rest, "/badges/") {
		return false
	}
	// From here the path is a badge's: one of no project the visitor
	// sees is the 404 page (an image, not a sign-in form), whether the
	// project is private or not there.
	ctx := r.Context()
	from := 0
	for n := 0; n < maxBadgeSplits; n++ {
		i := strings.Index(rest[from:], "/badges/")
		if i < 0 {
			break
		}
		full, ref := rest[:from+i], rest[from+i+len("/badges/"):]
		from += i + 1
		if full == "" || ref == "" {
			continue
		}
		info, err := pg.s.access.Resolve(ctx, full)
		if err != nil {
			continue // not a project (or one hidden from the visitor)
		}
		if ok, err := pg.s.access.Can(ctx, info.PathWithNamespace, projects.ReadJobs); err != nil || !ok {
			pg.site.NotFound(w, r)
			return true
		}
		var value, color string
		if kind == "pipeline" {
			value = pg.pipelineBadge(ctx, info.PathWithNamespace, ref)
			color = badgeColors[value]
		} else {
			value, color = pg.coverageBadge(ctx, info.PathWithNamespace, ref, r.URL.Query().Get("job"))
		}
		writeBadge(w, r, kind, value, color)
		return true
	}
	pg.site.NotFound(w, r)
	return true
}

// pipelineBadge is the word of the status of the ref's newest pipeline,
// "unknown" without one.
func (pg *ciPages) pipelineBadge(ctx context.Context, full, ref string) string {
	list, _, err := pg.s.Pipelines(ctx, full, cicd.PipelineQuery{Ref: ref, Limit: 1})
	if err != nil || len(list) == 0 {
		return "unknown"
	}
	l := web.CIStatus{Status: list[0].Status}.Label()
	if _, ok := badgeColors[l]; !ok {
		return "unknown"
	}
	return l
}

// coverageBadge is the coverage of the ref's newest successful pipeline
// (of its job of that name, when job is given), as "NN.NN%", or
// "unknown"; and its colour, greener as it grows.
func (pg *ciPages) coverageBadge(ctx context.Context, full, ref, job string) (string, string) {
	const unknown, grey = "unknown", "#7a7a7a"
	list, _, err := pg.s.Pipelines(ctx, full, cicd.PipelineQuery{Ref: ref, Status: cicd.StatusSuccess, Limit: 1})
	if err != nil || len(list) == 0 {
		return unknown, grey
	}
	cov := list[0].Coverage
	if job != "" {
		cov = nil
		jobs, _, err := pg.s.Jobs(ctx, full, cicd.JobQuery{Pipeline: list[0].ID, Limit: maxPipelineJobs})
		if err != nil {
			return unknown, grey
		}
		for _, j := range jobs {
			if j.Name == job && !j.Retried {
				cov = j.Coverage
				break
			}
		}
	}
	if cov == nil {
		return unknown, grey
	}
	c := *cov
	color := "#d9534f"
	switch {
	case c >= 95:
		color = "#3e9c35"
	case c >= 90:
		color = "#8bb31d"
	case c >= 75:
		color = "#c98a1b"
	}
	return strconv.FormatFloat(c, 'f', 2, 64) + "%", color
}

// badgeCharWidth is the width given to one character of the badge's
// text (Verdana-like 11 px): enough for the words the badges show.
const badgeCharWidth = 7

// writeBadge writes the badge as an SVG image: the key on grey, the value
// on its colour, each text escaped.
func writeBadge(w http.ResponseWriter, r *http.Request, key, value, color string) {
	kw, vw := len(key)*badgeCharWidth+10, len(value)*badgeCharWidth+10
	esc := template.HTMLEscapeString
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%[1]d" height="20" role="img" aria-label="%[3]s: %[4]s">`+
		`<title>%[3]s: %[4]s</title>`+
		`<rect width="%[2]d" height="20" rx="3" fill="#555"/><rect x="%[2]d" width="%[5]d" height="20" rx="3" fill="%[6]s"/>`+
		`<rect x="%[2]d" width="4" height="20" fill="%[6]s"/>`+
		`<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`+
		`<text x="%[7]d" y="14">%[3]s</text><text x="%[8]d" y="14">%[4]s</text></g></svg>`,
		kw+vw, kw, esc(key), esc(value), vw, esc(color), kw/2, kw+vw/2)
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	// Never kept: the image changes with every pipeline, and GitLab's
	// badges say so too.
	h.Set("Cache-Control", "no-store, no-cache, must-revalidate, max-age=0")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "Fri, 01 Jan 1990 00:00:00 GMT")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Content-Length", strconv.Itoa(len(svg)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(svg))
	}
}
