package internal

// The API of one file out of a job's artifacts archive (GitLab 10.x's
// "download a single artifact file"), by job or from the latest
// successful job of a name on a ref: the HTTP adapter over
// cicd.Service's ArtifactFile and LatestArtifactFile (artifacts.go).

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

type artifactFileInput struct {
	ProjectPath
	JobID        int64  `path:"job_id"`
	ArtifactPath string `path:"artifact_path" doc:"The file's path inside the archive"`
}

type artifactFileByRefInput struct {
	ProjectPath
	RefName      string `path:"ref_name" doc:"The branch or tag"`
	ArtifactPath string `path:"artifact_path" doc:"The file's path inside the archive"`
	Job          string `query:"job" required:"true" doc:"The job's name"`
}

func (s *Service) artifactFile(ctx context.Context, in *artifactFileInput) (*fileOutput, error) {
	f, err := s.ArtifactFile(ctx, in.ID, cicd.JobID(in.JobID), in.ArtifactPath)
	return serveArtifactFile(f, err)
}

func (s *Service) artifactFileByRef(ctx context.Context, in *artifactFileByRefInput) (*fileOutput, error) {
	f, err := s.LatestArtifactFile(ctx, in.ID, in.RefName, in.Job, in.ArtifactPath)
	return serveArtifactFile(f, err)
}

// serveArtifactFile streams a file of an archive as an attachment.
func serveArtifactFile(f cicd.File, err error) (*fileOutput, error) {
	return serveFile(f, err, fileOutput{ContentType: artifactContentType(f.Name),
		ContentDisposition: mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}),
		TransferEncoding:   "binary"})
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
