package internal

// A job's artifacts on pages (issue 30): the browser of the archive's
// directories (/-/jobs/:id/artifacts/browse[/dir]), one file
// (/artifacts/file/<path>) and the whole archive (/artifacts/download).
// Files come from the same cicd.Service readers as the API's. An
// artifact is anyone's upload: it is never shown as a page of the site.
// Plain text is shown as text; anything else is an attachment, with
// nosniff and a sandbox policy, so that an HTML file or a script in an
// archive is downloaded, never run in the site's origin.

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// artifactsPage is the artifacts browser's data.
type artifactsPage struct {
	JobName, JobHref string
	Dir              string
	Crumbs           []web.Crumb // the directories from the archive's top
	Entries          []artifactRow
	Expires          string
	DownloadHref     string
	Size             int64
}

type artifactRow struct {
	ArtifactEntry
	Href string
}

func (jp *jobPages) browse(w http.ResponseWriter, r *http.Request, id cicd.JobID, dir string) {
	ctx := r.Context()
	owner := r.PathValue("owner")
	dir = strings.TrimSuffix(dir, "/")
	info, raw, _, err := jp.s.loadJob(ctx, owner, id, projects.ReadJobs)
	if err == nil && raw.Bridge {
		err = cicd.ErrJobNotFound
	}
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	entries, err := jp.s.ArtifactDir(ctx, owner, id, dir)
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	full := info.PathWithNamespace
	job := jobPageURL(full, id)
	v := artifactsPage{JobName: raw.Name, JobHref: jp.site.URL(job), Dir: dir, DownloadHref: jp.site.URL(job + "/artifacts/download"),
		Size: raw.Artifacts.Size}
	switch {
	case raw.Artifacts.Kept:
		v.Expires = "kept"
	case raw.Artifacts.ExpireAt != nil:
		v.Expires = expiresIn(raw.Artifacts.ExpireAt.Sub(jp.s.now()))
	}
	browse := job + "/artifacts/browse"
	v.Crumbs = []web.Crumb{{Label: "artifacts", Href: jp.site.URL(browse)}}
	if dir != "" {
		at := ""
		for _, seg := range strings.Split(dir, "/") {
			at += "/" + seg
			v.Crumbs = append(v.Crumbs, web.Crumb{Label: seg, Href: jp.site.URL(browse + web.EscapePath(at))})
		}
	}
	v.Crumbs[len(v.Crumbs)-1].Href = "" // the directory shown
	for _, e := range entries {
		href := job + "/artifacts/file/" + web.EscapePath(e.Path)
		if e.Dir {
			href = browse + "/" + web.EscapePath(e.Path)
		}
		v.Entries = append(v.Entries, artifactRow{ArtifactEntry: e, Href: jp.site.URL(href)})
	}
	title := "Artifacts"
	if dir != "" {
		title = dir + " · Artifacts"
	}
	jp.t.Render(w, r, "artifacts", web.Page{Title: title + " · " + raw.Name, Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: "Pipelines", Href: jp.site.URL(projectPageURL(full, "/-/pipelines"))},
			{Label: raw.Name + " #" + strconv.FormatInt(raw.ID, 10), Href: v.JobHref}, {Label: "Artifacts"}}, Data: v})
}

// file serves one file of the archive: plain text inline, anything else
// as an attachment.
func (jp *jobPages) file(w http.ResponseWriter, r *http.Request, id cicd.JobID, name string) {
	if !cleanArchivePath(name) {
		jp.site.NotFound(w, r)
		return
	}
	f, err := jp.s.ArtifactFile(r.Context(), r.PathValue("owner"), id, name)
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	defer f.Content.Close()
	typ, disposition := artifactContentType(f.Name), "attachment"
	if mt, _, _ := mime.ParseMediaType(typ); mt == "text/plain" {
		typ, disposition = "text/plain; charset=utf-8", "inline"
	}
	sendFile(w, r, f, typ, mime.FormatMediaType(disposition, map[string]string{"filename": f.Name}))
}

// download serves the whole archive.
func (jp *jobPages) download(w http.ResponseWriter, r *http.Request, id cicd.JobID) {
	f, err := jp.s.Artifacts(r.Context(), r.PathValue("owner"), id)
	if err != nil {
		jp.failed(w, r, err)
		return
	}
	defer f.Content.Close()
	sendFile(w, r, f, "application/octet-stream", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
}

// sendFile streams an artifact with the headers that keep it from
// running as a page of the site.
func sendFile(w http.ResponseWriter, r *http.Request, f cicd.File, typ, disposition string) {
	h := w.Header()
	h.Set("Content-Type", typ)
	h.Set("Content-Disposition", disposition)
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, no-store")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, f.Content)
}
