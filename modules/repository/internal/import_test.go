package internal

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	fconfig "github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/netguard"
)

// recordedState is a projects.RepositoryState that remembers statuses.
type recordedState struct {
	mu     sync.Mutex
	status map[int64][2]string
}

func (r *recordedState) SetDefaultBranch(context.Context, int64, string) error { return nil }
func (r *recordedState) ImportURL(context.Context, int64) (string, error)      { return "", nil }
func (r *recordedState) ProjectIDs(context.Context) ([]int64, error)           { return nil, nil }
func (r *recordedState) SetImportStatus(_ context.Context, id int64, status, msg string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status[id] = [2]string{status, msg}
	return nil
}

func (r *recordedState) get(id int64) [2]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status[id]
}

// On shutdown the running import is cancelled and the waiting ones leave
// the queue, each failing with errImportShutdown; none stays "scheduled".
func TestImportQueueDrainsOnStop(t *testing.T) {
	reached := make(chan struct{}, 10)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		<-r.Context().Done() // holds the import until it is cancelled
	}))
	t.Cleanup(src.Close)
	cfg := fconfig.Default()
	cfg.Data = t.TempDir()
	log := zaptest.NewLogger(t)
	state := &recordedState{status: map[int64][2]string{}}
	im := newImporter(NewStorage(cfg, nil, log), state, netguard.New(true), 1<<20, log, 1, 2)
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return im.stop(ctx)
	}
	t.Cleanup(func() { _ = stop() }) // before the source closes: it waits for the held request
	im.Start(1, src.URL+"/x.git")
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the first import never reached the source")
	}
	for id := int64(2); id <= 4; id++ {
		im.Start(id, src.URL+"/x.git")
	}
	// One running, two waiting, the fourth refused at once.
	if got := state.get(4); got != [2]string{"failed", errImportQueueFull} {
		t.Fatalf("the import past the queue: %v", got)
	}
	if got := state.get(1); got[0] != "started" {
		t.Fatalf("the running import: %v", got)
	}
	for _, id := range []int64{2, 3} {
		if got := state.get(id); got[0] != "" {
			t.Fatalf("waiting import %d: %v", id, got)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2, 3} {
		if got := state.get(id); got != [2]string{"failed", errImportShutdown} {
			t.Errorf("import %d after stop: %v", id, got)
		}
	}
	// Nothing is taken after the stop.
	im.Start(5, src.URL+"/x.git")
	if got := state.get(5); got[0] != "" {
		t.Errorf("an import started after stop: %v", got)
	}
}

func TestImportRedactsCredentials(t *testing.T) {
	raw := "https://user:s3cr3t@example.com/a.git"
	if got := redactURL(raw); got != "https://*****@example.com/a.git" {
		t.Errorf("redactURL = %s", got)
	}
	if got := redact(`Get "`+raw+`": failed; password s3cr3t`, raw); got != `Get "https://*****@example.com/a.git": failed; password *****` {
		t.Errorf("redact = %s", got)
	}
}

// TestImportProgressReportsAsItGoes: a long import says how far it got, at
// most once per interval, with the bytes received so far.
func TestImportProgressReportsAsItGoes(t *testing.T) {
	var reports []int64
	slow := &slowReader{chunks: 5, size: 1000, pause: 30 * time.Millisecond}
	p := &progressReader{r: slow, every: 50 * time.Millisecond, report: func(n int64) { reports = append(reports, n) }}
	n, err := io.Copy(io.Discard, p)
	if err != nil || n != 5000 || p.n != 5000 {
		t.Fatalf("copied %d (counted %d): %v", n, p.n, err)
	}
	if len(reports) < 1 || len(reports) > 3 {
		t.Fatalf("%d reports %v over ~150 ms at one per 50 ms", len(reports), reports)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i] <= reports[i-1] {
			t.Fatalf("reports do not grow: %v", reports)
		}
	}
}

type slowReader struct {
	chunks, size int
	pause        time.Duration
}

func (s *slowReader) Read(b []byte) (int, error) {
	if s.chunks == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.pause)
	s.chunks--
	return copy(b, make([]byte, min(s.size, len(b)))), nil
}
