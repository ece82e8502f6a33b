package ci_test

import (
	"fmt"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// bigTraceCI prints about 4 MiB of coloured lines in sections of 500.
const bigTraceCI = `big:
  script:
    - |
      awk 'BEGIN { for (i = 0; i < 53000; i++) {
        if (i % 500 == 0) { if (i > 0) printf "section_end:%d:s%d\r\033[0K\n", 1000 + i, i - 500; printf "section_start:%d:s%d\r\033[0K\033[36;1mStep %d\033[0;m\n", 1000 + i, i, i }
        printf "\033[32mok\033[0m   line %d of the test output, with some \033[1mbold\033[0m words in it\n", i } }'
`

// BenchmarkJobPage4MiB: the page of a job whose log is about 4 MiB of
// coloured lines in sections, next to the API's trace of the same job
// (GET /projects/:id/jobs/:id/trace), in the same run.
//
//	go test ./modules/ci/ -run '^$' -bench JobPage4MiB -benchtime 20x
func BenchmarkJobPage4MiB(b *testing.B) {
	s := startWith(b, fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) { c.MaxTraceBytes = 8 << 20 }))
	c := s.Client
	p := stocktest.NewProject(b, c, "big-trace", "private")
	commit := stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": bigTraceCI})
	pl := waitPipeline(b, c, p.ID, commit.ID, "success", "failed")
	job := jobsByName(b, c, p.ID, pl.ID)["big"]
	if size := len(trace(b, c, p.ID, job.ID)); pl.Status != "success" || size < 4<<20 {
		b.Fatalf("pipeline %s, trace %d bytes", pl.Status, size)
	}
	browser := s.SignedIn(b, "root", s.RootPassword)
	fennectest.BenchPageAndAPI(b, s.URL, browser.Client, s.RootToken, "trace-4MiB",
		fmt.Sprintf("/root/big-trace/-/jobs/%d", job.ID), fmt.Sprintf("/api/v4/projects/%d/jobs/%d/trace", p.ID, job.ID))
}
