package internal

// One file out of a job's artifacts archive (GitLab 10.x's "download a
// single artifact file"): by job, or from the latest successful job of a
// name on a ref. The archive is the zip the executor or runner uploaded;
// the file is found by its exact name among the archive's entries and
// streamed as it is inflated. Nothing of the request's path reaches the
// file system, so no name ("../x", "/etc/passwd") can reach anything but
// an entry of that archive.

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

type artifactFileInput struct {
	ProjectPath
	JobID        uint64 `path:"job_id"`
	ArtifactPath string `path:"artifact_path" doc:"The file's path inside the archive"`
}

type artifactFileByRefInput struct {
	ProjectPath
	RefName      string `path:"ref_name" doc:"The branch or tag"`
	ArtifactPath string `path:"artifact_path" doc:"The file's path inside the archive"`
	Job          string `query:"job" required:"true" doc:"The job's name"`
}

func (s *Service) artifactFile(ctx context.Context, in *artifactFileInput) (*fileOutput, error) {
	_, j, _, err := s.loadJob(ctx, jobPath{in.ProjectPath, in.JobID}, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	return s.serveArtifactEntry(j, in.ArtifactPath)
}

func (s *Service) artifactFileByRef(ctx context.Context, in *artifactFileByRefInput) (*fileOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	if in.Job == "" {
		return nil, api.Missing("job")
	}
	var found *Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		found, err = latestSuccessful(tx, info.ID, in.RefName, in.Job)
		return err
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, api.NotFound("")
	}
	return s.serveArtifactEntry(found, in.ArtifactPath)
}

// latestSuccessful is the newest successful job of a name on a ref, nil
// when there is none (the archive download by ref finds the same).
func latestSuccessful(tx *store.Tx, projectID int64, ref, name string) (*Job, error) {
	ids, err := jobs.IDsBy(tx, "ref_name", u64(uint64(projectID))+"/"+ref+"\x00"+name)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return jobs.Get(tx, ids[len(ids)-1])
}

// serveArtifactEntry streams the regular file named name from j's
// archive: 404 when the job has no archive (none, erased, expired) or the
// archive no such file (a directory is none); GitLab's 400 for a name
// that is not UTF-8 or holds a NUL.
func (s *Service) serveArtifactEntry(j *Job, name string) (*fileOutput, error) {
	if name == "" || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return nil, api.BadRequest("400 (Bad request)")
	}
	if j.Artifacts == nil {
		return nil, api.NotFound("")
	}
	f, err := os.Open(s.artifactsPath(j.ID))
	if errors.Is(err, os.ErrNotExist) {
		return nil, api.NotFound("") // removed since the row was read
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		// Not a zip (a runner may upload another format): no entries.
		f.Close()
		return nil, api.NotFound("")
	}
	var entry *zip.File
	for _, e := range zr.File {
		if e.Name == name && e.Mode().IsRegular() {
			entry = e
			break
		}
	}
	if entry == nil {
		f.Close()
		return nil, api.NotFound("")
	}
	rc, err := entry.Open()
	if err != nil {
		f.Close()
		return nil, api.NotFound("") // a compression method zip does not know
	}
	size := int64(entry.UncompressedSize64)
	base := path.Base(name)
	out := &fileOutput{ContentType: artifactContentType(base), ContentLength: strconv.FormatInt(size, 10),
		ContentDisposition: mime.FormatMediaType("attachment", map[string]string{"filename": base}),
		TransferEncoding:   "binary", NoSniff: "nosniff"}
	out.Body = func(ctx huma.Context) {
		defer f.Close()
		defer rc.Close()
		// The size the entry declares: a damaged entry that inflates to
		// less ends the response short (the client sees the length
		// mismatch), one that inflates to more is cut there.
		_, _ = io.Copy(ctx.BodyWriter(), io.LimitReader(rc, size))
	}
	return out, nil
}

// artifactContentType is the file's type by its extension, as GitLab's
// Workhorse sends it; application/octet-stream when unknown. The file is
// sent as an attachment with nosniff, so a page or a script in an archive
// is downloaded, never run in the API's origin.
func artifactContentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// The GitLab paths take the rest of the URL as the file's path
// (*artifact_path, slashes included), which a ServeMux pattern cannot
// hold beside /jobs/artifacts/:ref_name/download: a ref named
// "artifacts" would match both. So the file's path is one escaped
// segment of a route of Fennec's own, and requests in GitLab's spelling
// are aliased to it; the OpenAPI document shows only GitLab's spelling.
const artifactFileRoute = "/projects/{id}/jobs/{job_id}/artifacts/entry/{artifact_path}"

var (
	artifactFileAlias = regexp.MustCompile(`^` + api.Prefix + `/projects/([^/]+)/jobs/([0-9]+)/artifacts/(.+)$`)
	// A ref's file whose path has a slash; one without is the registered
	// route as it is.
	artifactRefFileAlias = regexp.MustCompile(`^` + api.Prefix + `/projects/([^/]+)/jobs/artifacts/([^/]+)/raw/(.+/.*)$`)
)

// oneSegment escapes an escaped rest of a path as a single segment.
func oneSegment(escaped string) string {
	plain, err := url.PathUnescape(escaped)
	if err != nil {
		return escaped // left to the mux, which refuses it
	}
	return url.PathEscape(plain)
}

func (s *Service) registerArtifactFiles(a *api.API) {
	tags := []string{"jobs"}
	api.Register(a, api.Op{ID: "get-job-artifact-file", Method: http.MethodGet, Path: artifactFileRoute, Tags: tags,
		Summary: "Download one file of a job's artifacts archive", Access: api.Public}, s.artifactFile)
	a.Alias(http.MethodGet, artifactFileAlias, func(m []string) string {
		return api.Prefix + "/projects/" + m[1] + "/jobs/" + m[2] + "/artifacts/entry/" + oneSegment(m[3])
	})
	gitlabPath := "/projects/{id}/jobs/{job_id}/artifacts/{artifact_path}"
	a.DocumentAlias(http.MethodGet, gitlabPath, artifactFileRoute)
	// Every request to the registered route is aliased (it matches the
	// alias too), so the document shows GitLab's path only.
	oapi := a.Huma().OpenAPI()
	delete(oapi.Paths, api.Prefix+artifactFileRoute)
	oapi.Paths[api.Prefix+gitlabPath].Get.OperationID = "get-job-artifact-file"

	refRoute := "/projects/{id}/jobs/artifacts/{ref_name}/raw/{artifact_path}"
	api.Register(a, api.Op{ID: "get-job-artifact-file-by-ref", Method: http.MethodGet, Path: refRoute, Tags: tags,
		Summary: "Download one file of the artifacts of the latest successful job of a name on a ref", Access: api.Public},
		s.artifactFileByRef)
	a.Alias(http.MethodGet, artifactRefFileAlias, func(m []string) string {
		return api.Prefix + "/projects/" + m[1] + "/jobs/artifacts/" + m[2] + "/raw/" + oneSegment(m[3])
	})
}
