package repository_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/repotest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkRepositoryAPI measures the repository reads of the issue on the
// reference repository (20,000 commits, 5,000 files, a few binaries; set
// FENNEC_BENCH_COMMITS to shrink it): each sub-benchmark is one request per
// iteration, sequentially, over loopback. The archive is reported in MB/s
// next to `git archive` of the same commit in the same run.
func BenchmarkRepositoryAPI(b *testing.B) {
	shape := repotest.Shape{}
	if n, err := strconv.Atoi(os.Getenv("FENNEC_BENCH_COMMITS")); err == nil && n > 0 {
		shape.Commits = n
	}
	ref := repotest.Reference(b, shape)
	var bus *events.Bus
	var repos repository.Store
	s := stocktest.Start(b, fennectest.WithExtract(&bus, &repos), fennectest.WithConfig(func(c *config.Config) { c.NoSync = true }))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("reference")})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	dst := repos.Path(p.ID)
	if err := os.RemoveAll(dst); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", ref, dst).CombinedOutput(); err != nil {
		b.Fatalf("copy the reference repository: %v %s", err, out)
	}
	base := "/api/v4/projects/" + strconv.FormatInt(p.ID, 10) + "/repository"
	head := strings.TrimSpace(run(b, dst, "rev-parse", "master"))
	back1000 := strings.TrimSpace(run(b, dst, "rev-parse", "master~1000"))
	get := func(b *testing.B, path string) int64 {
		req, _ := http.NewRequest(http.MethodGet, s.URL+base+path, nil)
		req.Header.Set("PRIVATE-TOKEN", s.RootToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return n
	}
	for _, c := range []struct{ name, path string }{
		{"tree-recursive-per_page-100", "/tree?recursive=true&per_page=100"},
		{"commits-page-1", "/commits?per_page=20"},
		{"commits-page-500", "/commits?per_page=20&page=500"},
		{"file", "/files/" + strings.ReplaceAll(repotest.FilePath(4242), "/", "%2F") + "?ref=master"},
		{"compare-1000-commits", "/compare?from=" + back1000 + "&to=" + head},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				get(b, c.path)
			}
		})
	}
	b.Run("archive-tar.gz", func(b *testing.B) {
		var n int64
		for i := 0; i < b.N; i++ {
			n = get(b, "/archive.tar.gz?sha="+head)
		}
		b.SetBytes(n)
	})
	b.Run("git-archive-tar.gz", func(b *testing.B) {
		var n int64
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("git", "archive", "--format=tar.gz", "--prefix=reference/", head)
			cmd.Dir = dst
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			n, _ = io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(n)
	})
}

func run(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}
