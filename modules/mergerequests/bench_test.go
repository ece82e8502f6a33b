package mergerequests_test

// The merge requests figures of issue 15. Each benchmark does its whole
// measurement once per b.N iteration and reports its own metrics (ns/op is
// left at 0); run with -run '^$' -bench . -benchtime 1x.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/mergerequests/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// medianGet is the median time of samples GETs of path as token.
func medianGet(b *testing.B, s *env, path, token string, samples int) float64 {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	var ms []float64
	for k := 0; k < samples; k++ {
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		req.Header.Set("PRIVATE-TOKEN", token)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		if resp.StatusCode != 200 || len(body) < 10 {
			b.Fatalf("%s: %d %.200s", path, resp.StatusCode, body)
		}
	}
	return fennectest.Median(ms)
}

// BenchmarkListTenThousand: GET /projects/:id/merge_requests, first page
// (20) and by iid, on a project of 10,000 merge requests, the median of
// 300 requests each. Seeded straight into the store (Seed: 2,000 per
// transaction).
func BenchmarkListTenThousand(b *testing.B) {
	const n = 10_000
	var svc *internal.Service
	s := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&svc))
	alice := s.CreateUser(b, "alice")
	p := stocktest.NewProject(b, alice.Client, "big", "private")
	if err := svc.Seed(context.Background(), p.ID, alice.ID, n, strings.Repeat("a", 40)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base := fmt.Sprintf("/api/v4/projects/%d/merge_requests", p.ID)
		b.ReportMetric(medianGet(b, s, base+"?per_page=20", alice.Token, 300), "page1-median-ms")
		b.ReportMetric(medianGet(b, s, base+"?iid=5000", alice.Token, 300), "by-iid-median-ms")
		b.ReportMetric(medianGet(b, s, base+"?per_page=20&page=400&order_by=updated_at&state=merged", alice.Token, 100), "page400-median-ms")
		b.ReportMetric(medianGet(b, s, base+"/5000", alice.Token, 300), "get-median-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// fastImport writes commits with git fast-import: n commits on branch
// from parent, commit k changing file prefix-k (or all files when
// oneCommit is set: one commit of n files).
func fastImport(b *testing.B, w *clone, branch, from, prefix string, n int, oneCommit bool) {
	var sb strings.Builder
	mark := 0
	commit := func(files []int) {
		mark++
		fmt.Fprintf(&sb, "commit refs/heads/%s\nmark :%d\ncommitter T <t@example.com> %d +0000\ndata 6\ncommit\n", branch, mark, 1700000000+mark)
		if mark == 1 {
			fmt.Fprintf(&sb, "from %s\n", from)
		}
		for _, f := range files {
			content := fmt.Sprintf("%s %d\nline two\n", prefix, f)
			fmt.Fprintf(&sb, "M 100644 inline %s/%d.txt\ndata %d\n%s\n", prefix, f, len(content), content)
		}
	}
	if oneCommit {
		files := make([]int, n)
		for i := range files {
			files[i] = i
		}
		commit(files)
	} else {
		for i := 0; i < n; i++ {
			commit([]int{i})
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = w.dir
	cmd.Stdin = strings.NewReader(sb.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v %s", err, out)
	}
}

// BenchmarkChangesThousandFiles: GET .../changes of a merge request whose
// branch adds 1,000 files, median of 10.
func BenchmarkChangesThousandFiles(b *testing.B) {
	s := start(b, fennectest.WithLogger(zap.NewNop()))
	alice := s.CreateUser(b, "alice")
	p := stocktest.NewProject(b, alice.Client, "wide", "private")
	w := s.clone(b, "alice", alice.Token, "alice/wide")
	w.commit("base", map[string]string{"README": "r\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	fastImport(b, w, "wide", w.git("rev-parse", "HEAD"), "f", 1000, true)
	w.git("push", "-q", "origin", "wide")
	s.Drain(b)
	s.Call(b, alice.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
		map[string]any{"title": "wide", "source_branch": "wide", "target_branch": "master"}).Expect(b, 201, "")
	path := mrPath(p.ID, 1, "/changes")
	got := s.Call(b, alice.Token, http.MethodGet, path, nil).Expect(b, 200, "").Object(b)
	if ch, _ := got["changes"].([]any); len(ch) != 1000 {
		b.Fatalf("%d changes", len(ch))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.ReportMetric(medianGet(b, s, path, alice.Token, 10), "changes-1000-files-median-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkMergeThousandCommits: PUT .../merge of a branch of 1,000
// commits (1,000 files) into a master that moved on by 100 commits of its
// own, against `git merge --no-ff` of the same two commits in a local
// clone, in the same run.
func BenchmarkMergeThousandCommits(b *testing.B) {
	s := start(b, fennectest.WithLogger(zap.NewNop()))
	alice := s.CreateUser(b, "alice")
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("deep%d", i)
		p := stocktest.NewProject(b, alice.Client, name, "private")
		w := s.clone(b, "alice", alice.Token, "alice/"+name)
		w.commit("base", map[string]string{"README": "r\n"})
		base := w.git("rev-parse", "HEAD")
		w.git("push", "-q", "origin", "HEAD:master")
		fastImport(b, w, "deep", base, "d", 1000, false)
		fastImport(b, w, "master", base, "m", 100, false)
		w.git("push", "-q", "-f", "origin", "deep", "master")
		s.Drain(b)
		s.Call(b, alice.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
			map[string]any{"title": "deep", "source_branch": "deep", "target_branch": "master"}).Expect(b, 201, "")
		s.Drain(b)
		t0 := time.Now()
		s.Call(b, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(b, 200, "")
		fennecMS := float64(time.Since(t0).Microseconds()) / 1000

		// git merge of the same commits in the local clone.
		w.git("checkout", "-q", "master")
		w.git("reset", "-q", "--hard", "refs/heads/master")
		t0 = time.Now()
		w.git("merge", "-q", "--no-ff", "-m", "m", "deep")
		gitMS := float64(time.Since(t0).Microseconds()) / 1000
		if _, err := os.Stat(filepath.Join(w.dir, "d", "999.txt")); err != nil {
			b.Fatal("git merge incomplete")
		}
		b.ReportMetric(fennecMS, "fennec-merge-ms")
		b.ReportMetric(gitMS, "git-merge-ms")
	}
	b.ReportMetric(0, "ns/op")
}
