package repository_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/repotest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkPages: issue 28's page figures, on the 20,000-commit reference
// repository the git benchmarks use, pushed into a whole in-process
// Fennec with a 2,000-line Go file and a commit of 100 files on top. Each
// page is fetched next to the JSON API call that returns the same data,
// alternately, in the same run (the machine is shared and noisy), as an
// anonymous reader of a public project; it reports each one's median and
// p99 server time (as the client sees it, over loopback) and the
// page/API ratio of the medians, and the page weight: the CSS and
// JavaScript the pages link, uncompressed, and the root tree's HTML.
//
//	go test -run '^$' -bench BenchmarkPages -benchtime 200x ./modules/repository/
func BenchmarkPages(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 20,000-commit repository")
	}
	ref := repotest.Reference(b, repotest.Shape{})
	var repos repository.Store
	s := stocktest.Start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&repos))
	p := stocktest.NewProject(b, s.Client, "ref", "public")
	if _, _, err := s.Client.Branches.ListBranches(p.ID, nil); err != nil { // makes the repository
		b.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", ref, "push", "-q", repos.Path(p.ID), "master").CombinedOutput(); err != nil {
		b.Fatalf("push the reference repository: %v\n%s", err, out)
	}
	var big strings.Builder
	big.WriteString("package big\n\n")
	for i := 0; strings.Count(big.String(), "\n") < 2001; i++ {
		fmt.Fprintf(&big, "// F%d returns %d.\nfunc F%d(x int) int { return x*%d + len(\"s%d\") }\n", i, i, i, i, i)
	}
	lines := strings.Split(big.String(), "\n")
	readme := "# Reference\n\nThe repository the benchmarks measure: **20,000 commits**, 5,000 files.\n\n" +
		"| files | commits |\n|---|---|\n| 5,000 | 20,000 |\n\n```go\nfunc main() {}\n```\n"
	stocktest.CommitFiles(b, s.Client, p.ID, "master", "Add a 2,000-line file", map[string]string{"big.go": strings.Join(lines[:2000], "\n") + "\n",
		"README.md": readme})
	var actions []*gitlab.CommitActionOptions
	for i := 0; i < 100; i++ {
		actions = append(actions, &gitlab.CommitActionOptions{Action: gitlab.Ptr(gitlab.FileUpdate), FilePath: gitlab.Ptr(repotest.FilePath(i)),
			Content: gitlab.Ptr(fmt.Sprintf("changed %d\nsecond line\n", i))})
	}
	hundred, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("Change 100 files"), Actions: actions})
	if err != nil {
		b.Fatal(err)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(path string) (time.Duration, string) {
		b.Helper()
		t0 := time.Now()
		resp, err := client.Get(s.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d %.300s", path, resp.StatusCode, body)
		}
		return took, string(body)
	}
	api := fmt.Sprintf("/api/v4/projects/%d", p.ID)
	// Each page's API side: first the call that returns the page's main
	// data (the ratio the target is about), then the other calls a
	// client makes for the rest of what the page shows (the project page's
	// last commit, root tree and README; the tree page's ref switcher and
	// commit line; the commit's message and stats), reported as the
	// "all-calls" ratio.
	pairs := []struct {
		name, page string
		api        []string
	}{
		{"project", "/root/ref", []string{api, api + "/repository/commits?ref_name=master&per_page=1",
			api + "/repository/tree?ref=master&per_page=100", api + "/repository/files/README.md/raw?ref=master"}},
		{"tree", "/root/ref/-/tree/master", []string{api + "/repository/tree?ref=master&per_page=100",
			api + "/repository/branches?per_page=100", api + "/repository/commits?ref_name=master&per_page=1"}},
		{"blob", "/root/ref/-/blob/master/big.go", []string{api + "/repository/files/big.go?ref=master"}},
		{"commits", "/root/ref/-/commits/master", []string{api + "/repository/commits?ref_name=master&per_page=40"}},
		{"commit", "/root/ref/-/commit/" + hundred.ID, []string{api + "/repository/commits/" + hundred.ID + "/diff?per_page=100",
			api + "/repository/commits/" + hundred.ID}},
	}
	ms := func(d []time.Duration, q float64) float64 {
		d = append([]time.Duration(nil), d...)
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[int(q*float64(len(d)-1)+.5)].Microseconds()) / 1000
	}
	// Warm: the first view fills the caches (highlighted lines, last
	// commits), as any view after the first finds them.
	for _, pr := range pairs {
		fetch(pr.page)
		for _, call := range pr.api {
			fetch(call)
		}
	}
	// One iteration is one round: each page, then its API calls, so a
	// burst of noise on the shared machine falls on both sides.
	pages := make([][]time.Duration, len(pairs))
	first := make([][]time.Duration, len(pairs)) // the API call named first
	all := make([][]time.Duration, len(pairs))   // the sum of the calls
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, pr := range pairs {
			d, _ := fetch(pr.page)
			pages[j] = append(pages[j], d)
			var sum time.Duration
			for k, call := range pr.api {
				d, _ := fetch(call)
				if k == 0 {
					first[j] = append(first[j], d)
				}
				sum += d
			}
			all[j] = append(all[j], sum)
		}
	}
	b.StopTimer()
	for j, pr := range pairs {
		pm, pp := ms(pages[j], .5), ms(pages[j], .99)
		fm, fp := ms(first[j], .5), ms(first[j], .99)
		am := ms(all[j], .5)
		b.ReportMetric(pm, pr.name+"-page-p50-ms")
		b.ReportMetric(pp, pr.name+"-page-p99-ms")
		b.ReportMetric(fm, pr.name+"-api-p50-ms")
		b.ReportMetric(fp, pr.name+"-api-p99-ms")
		b.ReportMetric(pm/fm, pr.name+"-p50-ratio")
		b.ReportMetric(pp/fp, pr.name+"-p99-ratio")
		b.ReportMetric(pm/am, pr.name+"-p50-ratio-all-calls")
		b.Logf("%-8s page %6.1f / %6.1f ms (p50 / p99)   API %6.1f / %6.1f ms   ratio %.2f / %.2f   all %d calls %6.1f ms, ratio %.2f",
			pr.name, pm, pp, fm, fp, pm/fm, pp/fp, len(pr.api), am, pm/am)
	}
	// Page weight: every stylesheet and script the pages link (the icon
	// and images are neither).
	assets := map[string]int{}
	link := regexp.MustCompile(`(?:href|src)="(/-/static/[^"]+\.(?:css|js))"`)
	_, tree := fetch("/root/ref/-/tree/master")
	for _, path := range []string{"/root/ref", "/root/ref/-/blob/master/big.go", "/root/ref/-/commit/" + hundred.ID} {
		_, body := fetch(path)
		for _, m := range link.FindAllStringSubmatch(body+tree, -1) {
			if _, ok := assets[m[1]]; !ok {
				u, _ := url.PathUnescape(m[1])
				_, a := fetch(u)
				assets[m[1]] = len(a)
			}
		}
	}
	total := 0
	for name, n := range assets {
		total += n
		b.Logf("asset %s: %d bytes", name, n)
	}
	b.ReportMetric(float64(total)/1024, "css+js-kb")
	b.ReportMetric(float64(len(tree))/1024, "root-tree-html-kb")
	b.Logf("CSS and JS: %.1f KB uncompressed; root tree HTML: %.1f KB", float64(total)/1024, float64(len(tree))/1024)
	b.ReportMetric(0, "ns/op")
}
