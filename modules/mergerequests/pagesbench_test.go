package mergerequests_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// BenchmarkMergeRequestPages: the server time of a merge request's pages
// at the scale issue 29 names, each next to the API calls that return
// the same data, in one run, as its author signed in (pages) and with
// her token (API): the Changes tab of 1,000 changed files (real commits)
// against GET .../changes, one file of it loaded on demand, and the
// Overview with 500 comments against the merge request and its notes,
// 100 a page as clients read them. Each is a sub-benchmark: ns/op is
// one page (one set of calls), cpu-ns/op the process's CPU time per op
// (server and client: steadier than ns/op on a busy machine), wire-bytes
// what was sent (gzip, as browsers ask), html-bytes the page itself;
// the api sub-benchmark's page/api and cpu-page/api are the ratios. The
// diff and the highlighted lines are kept after the first view, which is
// logged apart.
// Run: go test -run '^$' -bench BenchmarkMergeRequestPages -benchtime 20x ./modules/mergerequests/
func BenchmarkMergeRequestPages(b *testing.B) {
	s := start(b, fennectest.WithLogger(zap.NewNop()))
	alice := s.CreateUser(b, "alice")
	wideMergeRequest(b, s, alice, "wide", 1000)
	p, _, err := alice.Client.Projects.GetProject("alice/wide", nil)
	if err != nil {
		b.Fatal(err)
	}
	// 500 comments, posted concurrently through the API.
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				body := fmt.Sprintf("Comment %d with **Markdown**, a `code span` and a [link](https://example.com/%d).", k, k)
				if _, _, err := alice.Client.Notes.CreateMergeRequestNote(p.ID, 1, &gitlab.CreateMergeRequestNoteOptions{Body: &body}); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for k := 0; k < 500; k++ {
		work <- k
	}
	close(work)
	wg.Wait()
	s.Drain(b)
	browser := s.SignedIn(b, "alice", alice.Password)
	api := func(rest string) string { return mrPath(p.ID, 1, rest) }
	notes := func(page int) string { return api(fmt.Sprintf("/notes?per_page=100&page=%d", page)) }
	const base = "/alice/wide/-/merge_requests/1"
	// The first view reads the diff and highlights the files (kept then,
	// as the commits never change): its time is logged apart.
	t0, cpu0 := time.Now(), fennectest.CPUTime(b)
	browser.Get(b, base+"/diffs").Want(b, "first view", http.StatusOK, `<details class="box diff deferred"`)
	// Printed, not logged: a benchmark that runs others shows no log.
	fmt.Printf("BenchmarkMergeRequestPages: the Changes tab's first view took %.0f ms, %.0f ms of CPU\n",
		float64(time.Since(t0).Microseconds())/1000, float64((fennectest.CPUTime(b)-cpu0).Microseconds())/1000)
	fennectest.BenchPageAndAPI(b, s.URL, browser.Client, alice.Token, "changes-1000-files", base+"/diffs", api("/changes"))
	fennectest.BenchPageAndAPI(b, s.URL, browser.Client, alice.Token, "changes-file-on-demand", base+"/diffs?file="+q(wideFile(900)), api("/changes"))
	fennectest.BenchPageAndAPI(b, s.URL, browser.Client, alice.Token, "overview-500-comments", base,
		api(""), notes(1), notes(2), notes(3), notes(4), notes(5))
}
