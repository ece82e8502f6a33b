package issues_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkIssuePages: the server time of the issue list page on a
// project of 10,000 issues and of an issue page with 500 comments, each
// next to the API calls that return the same data (the list; the issue
// and its notes, 100 a page as clients read them), in one run, as an
// anonymous reader of a public project. Each page and each API call set
// is a sub-benchmark: ns/op is one page (one set of calls), wire-bytes
// what was sent (gzip, as browsers ask), html-bytes the page itself,
// cpu-ns/op the process's CPU time per op (server and client: steadier
// than ns/op on a busy machine), and the api sub-benchmark's page/api
// and cpu-page/api the ratios of the two.
// Run: go test -run '^$' -bench BenchmarkIssuePages -benchtime 20x ./modules/issues/
func BenchmarkIssuePages(b *testing.B) {
	var svc *internal.Service
	s := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&svc))
	alice := s.CreateUser(b, "alice")
	p := stocktest.NewProject(b, alice.Client, "big", "public")
	if err := svc.Seed(context.Background(), p.ID, alice.ID, 10_000); err != nil {
		b.Fatal(err)
	}
	// 500 comments on issue 1, posted concurrently through the API.
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				body := fmt.Sprintf("Comment %d with **Markdown**, a `code span` and a [link](https://example.com/%d).", k, k)
				if _, _, err := alice.Client.Notes.CreateIssueNote(p.ID, 1, &gitlab.CreateIssueNoteOptions{Body: &body}); err != nil {
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
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	notes := func(page int) string {
		return fmt.Sprintf("/api/v4/projects/%d/issues/1/notes?per_page=100&page=%d", p.ID, page)
	}
	fennectest.BenchPageAndAPI(b, s.URL, client, "", "list", "/alice/big/-/issues",
		fmt.Sprintf("/api/v4/projects/%d/issues?state=opened&per_page=20", p.ID))
	fennectest.BenchPageAndAPI(b, s.URL, client, "", "issue-500-comments", "/alice/big/-/issues/1",
		fmt.Sprintf("/api/v4/projects/%d/issues/1", p.ID), notes(1), notes(2), notes(3), notes(4), notes(5))
}
