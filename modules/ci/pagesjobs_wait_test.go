package ci_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// traceWaitLimit and traceWaiters are the test app's wait limits: short,
// and few waiters, so the cap is reached with two requests.
const (
	traceWaitLimit = 700 * time.Millisecond
	traceWaiters   = 2
)

// waitAnswer is one trace.json answer and how long it took.
type waitAnswer struct {
	code  int
	took  time.Duration
	at    time.Time
	chunk struct {
		Parts    []struct{ HTML string }
		Offset   int
		Complete bool
		Status   string
	}
	err error
}

// trace.json with wait=1: a request with nothing new waits and answers
// within a few milliseconds of a runner's PATCH (not the page's old 1 s
// poll) or of the job's status change, answers at its limit when nothing
// happens, frees its place when the visitor leaves, answers at once past
// the cap of waiters, and waits for nobody who may not see the job.
func TestTraceJSONWaitsForTheTrace(t *testing.T) {
	t.Parallel()
	var svc *internal.Service
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = time.Second }),
		fennectest.WithModules(fennec.NewModule("ci-test-tracewait", fennec.Invoke(func(is *internal.Service) {
			is.SetTraceWait(traceWaitLimit, traceWaiters)
			svc = is
		}))))
	c := s.Client
	p := stocktest.NewProject(t, c, "waiting", "private")
	outsider := s.CreateUser(t, "tw-outsider")
	r := registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "waited-for runner"})
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "build:\n  script: [make]\n"})
	var job *fakeJob
	fennectest.Poll(t, 30*time.Second, func() (bool, string) {
		_, _, job = requestJob(t, s, r.Token, "")
		return job != nil, "no job handed out"
	})
	size := 0
	patch := func(text string) time.Time {
		t.Helper()
		if code, _ := patchTrace(t, s, job.ID, job.Token, fmt.Sprintf("%d-%d", size, size+len(text)-1), text); code != http.StatusAccepted {
			t.Fatalf("patch: %d", code)
		}
		size += len(text)
		return time.Now()
	}
	patch("first line\n")
	root := s.SignedIn(t, "root", s.RootPassword)
	page := fmt.Sprintf("/root/waiting/-/jobs/%d/trace.json", job.ID)
	ask := func(ctx context.Context, b *fennectest.Browser, query string) <-chan waitAnswer {
		done := make(chan waitAnswer, 1)
		go func() {
			var a waitAnswer
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+page+"?"+query, nil)
			req.Header.Set("Accept", "application/json")
			asked := time.Now()
			resp, err := b.Do(req)
			if err != nil {
				a.err = err
				done <- a
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			a.code, a.took, a.at = resp.StatusCode, time.Since(asked), time.Now()
			if resp.StatusCode == http.StatusOK {
				a.err = json.Unmarshal(body, &a.chunk)
			}
			done <- a
		}()
		return done
	}
	waiting := func(want int) {
		t.Helper()
		fennectest.Poll(t, 5*time.Second, func() (bool, string) {
			n, jobs := svc.TraceWaiting()
			return n == want && (want > 0) == (jobs > 0), fmt.Sprintf("%d waiting for %d jobs, want %d", n, jobs, want)
		})
	}
	at := func() string { return fmt.Sprintf("offset=%d&wait=1&status=running", size) }

	// Nothing new: the request waits; a PATCH wakes it at once.
	pending := ask(t.Context(), root, at())
	waiting(1)
	patched := patch("second line\n")
	a := <-pending
	if a.err != nil || a.code != http.StatusOK {
		t.Fatalf("woken request: %d %v", a.code, a.err)
	}
	if late := a.at.Sub(patched); late > 200*time.Millisecond || len(a.chunk.Parts) != 1 ||
		!strings.Contains(a.chunk.Parts[0].HTML, "second line") || a.chunk.Offset != size || a.chunk.Status != "running" {
		t.Fatalf("woken %v after the patch: %+v", late, a.chunk)
	}
	waiting(0)

	// Something new already: no wait at all.
	a = <-ask(t.Context(), root, "offset=0&wait=1&status=running")
	if a.code != http.StatusOK || a.took > traceWaitLimit/2 || len(a.chunk.Parts) != 1 || a.chunk.Offset != size {
		t.Fatalf("answer with lines to give: %d after %v: %+v", a.code, a.took, a.chunk)
	}
	// The page shows another status than the job's: no wait either.
	a = <-ask(t.Context(), root, fmt.Sprintf("offset=%d&wait=1&status=pending", size))
	if a.code != http.StatusOK || a.took > traceWaitLimit/2 || len(a.chunk.Parts) != 0 || a.chunk.Status != "running" {
		t.Fatalf("answer to a page behind on the status: %d after %v: %+v", a.code, a.took, a.chunk)
	}

	// Nothing happens: the answer comes at the limit, unchanged.
	a = <-ask(t.Context(), root, at())
	if a.code != http.StatusOK || a.took < traceWaitLimit || a.took > traceWaitLimit+time.Second ||
		len(a.chunk.Parts) != 0 || a.chunk.Offset != size || a.chunk.Complete {
		t.Fatalf("answer at the limit: %d after %v: %+v", a.code, a.took, a.chunk)
	}
	waiting(0)

	// Half a line is nothing new: the request waits on for the rest.
	pending = ask(t.Context(), root, at())
	waiting(1)
	// (Its answer has the whole line: it did not answer the half.)
	patch("half a ")
	patch("line\n")
	a = <-pending
	if a.code != http.StatusOK || len(a.chunk.Parts) != 1 ||
		!strings.Contains(a.chunk.Parts[0].HTML, "half a line") || a.chunk.Offset != size {
		t.Fatalf("half a line: %d %+v", a.code, a.chunk)
	}
	waiting(0)

	// The visitor leaves: the waiter goes with the request.
	ctx, cancel := context.WithCancel(t.Context())
	pending = ask(ctx, root, fmt.Sprintf("offset=%d&wait=1&status=running", size))
	waiting(1)
	cancel()
	waiting(0)
	if a := <-pending; a.err == nil {
		t.Fatalf("canceled request answered %d", a.code)
	}

	// Past the cap the request answers at once (the page polls again a
	// second later); the waiters already there still wait.
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	held := []<-chan waitAnswer{ask(ctx, root, at()), ask(ctx, root, at())}
	waiting(traceWaiters)
	a = <-ask(t.Context(), root, at())
	if a.code != http.StatusOK || a.took > traceWaitLimit/2 || len(a.chunk.Parts) != 0 || a.chunk.Offset != size {
		t.Fatalf("answer past the cap: %d after %v: %+v", a.code, a.took, a.chunk)
	}
	if n, _ := svc.TraceWaiting(); n != traceWaiters {
		t.Fatalf("%d waiting after the refused one, want %d", n, traceWaiters)
	}
	cancel()
	for _, h := range held {
		<-h
	}
	waiting(0)

	// A visitor who may not see the job gets the 404 at once, and leaves
	// no waiter; a bad offset is refused before any wait.
	stranger := s.SignedIn(t, "tw-outsider", outsider.Password)
	a = <-ask(t.Context(), stranger, at())
	if a.code != http.StatusNotFound || a.took > traceWaitLimit/2 {
		t.Fatalf("outsider: %d after %v", a.code, a.took)
	}
	a = <-ask(t.Context(), root, "offset=-1&wait=1")
	if a.code != http.StatusBadRequest || a.took > traceWaitLimit/2 {
		t.Fatalf("bad offset: %d after %v", a.code, a.took)
	}
	waiting(0)

	// The job's status changes (canceled): the waiting request answers
	// it at once, with the log complete.
	pending = ask(t.Context(), root, at())
	waiting(1)
	if _, _, err := c.Jobs.CancelJob(p.ID, job.ID); err != nil {
		t.Fatal(err)
	}
	canceled := time.Now()
	a = <-pending
	if late := a.at.Sub(canceled); a.code != http.StatusOK || late > 200*time.Millisecond || a.chunk.Status != "canceled" || !a.chunk.Complete {
		t.Fatalf("answer %v after the cancel: %d %+v", late, a.code, a.chunk)
	}
	waiting(0)
}
