package ci_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The page of a job a GitLab Runner runs with FF_TIMESTAMPS: its runner
// named, each line's time in a column of its own, a section's header on
// the "+" line after its timestamped start, and the lines the runner
// PATCHes while the job runs given by trace.json from the page's offset.
func TestJobPageOfARunnersTimestampedTrace(t *testing.T) {
	t.Parallel()
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = time.Second }))
	c := s.Client
	p := stocktest.NewProject(t, c, "stamped", "private")
	r := registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "stamping runner"})
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "build:\n  script: [make]\n"})
	var job *fakeJob
	fennectest.Poll(t, 30*time.Second, func() (bool, string) {
		_, _, job = requestJob(t, s, r.Token, "")
		return job != nil, "no job handed out"
	})
	first := "2024-05-01T10:00:00.100000Z 00O \x1b[0KRunning with gitlab-runner 17.5.5\n" +
		"2024-05-01T10:00:00.200000Z 00O section_start:1714557600:prepare_script[collapsed=true]\r\x1b[0K\n" +
		"2024-05-01T10:00:00.200001Z 00O+\x1b[0K\x1b[36;1mPreparing environment\x1b[0;m\n" +
		"2024-05-01T10:00:01.000000Z 01E warning on stderr\n" +
		"2024-05-01T10:00:05.000000Z 00O section_end:1714557605:prepare_script\r\x1b[0K\n"
	if code, _ := patchTrace(t, s, job.ID, job.Token, fmt.Sprintf("0-%d", len(first)-1), first); code != http.StatusAccepted {
		t.Fatalf("patch: %d", code)
	}
	b := s.SignedIn(t, "root", s.RootPassword)
	url := fmt.Sprintf("/root/stamped/-/jobs/%d", job.ID)
	page := b.Get(t, url)
	page.Want(t, "the runner's job", http.StatusOK, fmt.Sprintf("#%d (stamping runner)", r.ID),
		`<time class="tt" datetime="2024-05-01T10:00:00.100000Z">10:00:00</time><span class="tx">Running with gitlab-runner 17.5.5</span>`,
		`<details class="ts" data-section="prepare_script"><summary><span class="tx"><span class="term-fg36 term-fg1">Preparing environment</span></span><span class="sd">00:05</span></summary>`,
		`<time class="tt" datetime="2024-05-01T10:00:01.000000Z">10:00:01</time><span class="tx">warning on stderr</span>`,
		`data-poll="`+url+`/trace.json" data-offset="`+fmt.Sprint(len(first))+`"`)
	page.WantNot(t, "the runner's job", "00O", "01E", "section_start:")

	more := "2024-05-01T10:00:06.000000Z 00O $ make\n2024-05-01T10:00:07.000000Z 00O built\n"
	if code, _ := patchTrace(t, s, job.ID, job.Token, fmt.Sprintf("%d-%d", len(first), len(first)+len(more)-1), more); code != http.StatusAccepted {
		t.Fatalf("patch: %d", code)
	}
	var chunk struct {
		Parts    []struct{ HTML string }
		Offset   int
		Complete bool
		Status   string
	}
	got := b.Get(t, fmt.Sprintf("%s/trace.json?offset=%d", url, len(first)))
	if err := json.Unmarshal([]byte(got.Body), &chunk); err != nil {
		t.Fatal(err)
	}
	if chunk.Offset != len(first)+len(more) || chunk.Complete || chunk.Status != "running" || len(chunk.Parts) != 1 ||
		!strings.Contains(chunk.Parts[0].HTML, `10:00:07</time><span class="tx">built</span>`) || strings.Contains(chunk.Parts[0].HTML, "Preparing") {
		t.Fatalf("trace.json: %s", got.Body)
	}
}
