package ci_test

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// remoteTemplates is a local TLS server of CI files; hits counts requests.
func remoteTemplates(t *testing.T) (*httptest.Server, *atomic.Int64) {
	hits := new(atomic.Int64)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/ci.yml" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(".remote:\n  variables: {FROM: remote-template}\n"))
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

// startRemote runs the app with ci.remote_includes as given, local
// requests allowed as given, trusting srv's certificate.
func startRemote(t *testing.T, srv *httptest.Server, remote, allowLocal bool) *fennectest.Server {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return startWith(t,
		fennectest.WithConfig(func(c *config.Config) { c.AllowLocalRequests = allowLocal }),
		fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) { c.RemoteIncludes = remote }),
		fennectest.WithModules(fennec.NewModule("ci-test-remote-roots",
			fennec.Invoke(func(s *internal.Service) { s.SetRemoteIncludeRootCAs(roots) }))))
}

// include: remote fetches an https URL when ci.remote_includes allows it,
// through the guard of allow_local_requests; off, the file is refused
// without a request.
func TestIncludeRemote(t *testing.T) {
	t.Parallel()
	srv, hits := remoteTemplates(t)
	file := func(path string) string {
		return "include: '" + srv.URL + path + "'\nbuild:\n  extends: .remote\n  script: [echo \"from:$FROM\"]\n"
	}
	t.Run("on", func(t *testing.T) {
		s := startRemote(t, srv, true, true)
		c := s.Client
		p := stocktest.NewProject(t, c, "remote-on", "private")
		commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file("/ci.yml")})
		pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
		if pl.Status != "success" {
			t.Fatalf("pipeline %s: %q", pl.Status, pl.YamlErrors)
		}
		if got := trace(t, c, p.ID, jobsByName(t, c, p.ID, pl.ID)["build"].ID); !strings.Contains(got, "\nfrom:remote-template\n") {
			t.Errorf("trace:\n%s", got)
		}
		commit = stocktest.CommitFiles(t, c, p.ID, "master", "missing", map[string]string{".gitlab-ci.yml": file("/nope.yml")})
		pl = waitPipeline(t, c, p.ID, commit.ID, "failed")
		if want := "Remote file `" + srv.URL + "/nope.yml` could not be fetched because of HTTP code `404` error!"; pl.YamlErrors != want {
			t.Errorf("yaml_errors %q, want %q", pl.YamlErrors, want)
		}
	})
	t.Run("local requests refused", func(t *testing.T) {
		s := startRemote(t, srv, true, false)
		c := s.Client
		p := stocktest.NewProject(t, c, "remote-guarded", "private")
		before := hits.Load()
		commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file("/ci.yml")})
		pl := waitPipeline(t, c, p.ID, commit.ID, "failed")
		if want := "Remote file could not be fetched because Requests to localhost are not allowed!"; pl.YamlErrors != want {
			t.Errorf("yaml_errors %q, want %q", pl.YamlErrors, want)
		}
		if hits.Load() != before {
			t.Errorf("the guarded server was reached")
		}
	})
	t.Run("off", func(t *testing.T) {
		s := startRemote(t, srv, false, true)
		c := s.Client
		p := stocktest.NewProject(t, c, "remote-off", "private")
		before := hits.Load()
		commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file("/ci.yml")})
		pl := waitPipeline(t, c, p.ID, commit.ID, "failed")
		if want := "Remote file `" + srv.URL + "/ci.yml` could not be fetched: remote includes are disabled on this server"; pl.YamlErrors != want {
			t.Errorf("yaml_errors %q, want %q", pl.YamlErrors, want)
		}
		if hits.Load() != before {
			t.Errorf("a request was made with remote includes off")
		}
	})
}
