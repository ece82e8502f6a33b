package repository_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// Issue 10's deadlock, as it was reproduced: anonymous clients resolving a
// public project by its path in a user namespace (a projects read that used
// to open an identity read inside it) while other clients create projects
// with large descriptions (writes that grow, and so remap, the database
// file), plus git clones by path. Before the fix every request hung within
// seconds; here every request must answer, within a bounded time.
func TestNoDeadlockResolvingPathsDuringWrites(t *testing.T) {
	g := startGit(t)
	pub := g.project(t, "pub", gitlab.PublicVisibility)
	work := g.cli.newWork(t)
	g.cli.commit(t, work, "first", map[string]string{"README.md": "hello\n"})
	g.seed(t, pub, work)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string, header ...string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+path, nil)
		if err != nil {
			return 0, err
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	const rounds = 150
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	for r := 0; r < 4; r++ {
		wg.Go(func() {
			for i := 0; i < rounds; i++ {
				code, err := get("/api/v4/projects/root%2Fpub")
				if err != nil {
					fail(fmt.Errorf("reader: %w (the server hangs)", err))
					return
				}
				if code != http.StatusOK {
					fail(fmt.Errorf("reader: GET project by path: %d", code))
					return
				}
			}
		})
	}
	description := strings.Repeat("d", 2048)
	for w := 0; w < 2; w++ {
		wg.Go(func() {
			for i := 0; i < rounds/3; i++ {
				if ctx.Err() != nil {
					fail(fmt.Errorf("writer: out of time after %d projects (the server hangs)", i))
					return
				}
				_, resp, err := g.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{
					Name: gitlab.Ptr(fmt.Sprintf("load-%d-%d", w, i)), Description: gitlab.Ptr(description),
				}, gitlab.WithContext(ctx))
				if err != nil {
					fail(fmt.Errorf("writer: create project: %v (%v)", err, resp))
					return
				}
			}
		})
	}
	// Clones by path resolve the same way, through git's own HTTP client.
	wg.Go(func() {
		for i := 0; i < 5; i++ {
			dir := filepath.Join(t.TempDir(), "clone")
			if _, stderr, err := g.cli.try(t, "", nil, "clone", "-q", g.url(pub, "", ""), dir); err != nil {
				fail(fmt.Errorf("clone by path during writes: %v: %s", err, stderr))
				return
			}
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				fail(fmt.Errorf("clone by path: %v", err))
				return
			}
		}
	})
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(45 * time.Second):
		// A deadlocked store also hangs the server's shutdown, so a
		// t.Fatal would hang in cleanup: end the run here, with every
		// goroutine's stack to show where it is stuck.
		panic("the server deadlocked: requests did not finish within 45s")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// And the store is still answering: readiness probes it.
	if code, err := get("/-/readiness"); err != nil || code != http.StatusOK {
		t.Errorf("readiness after the load: %d %v", code, err)
	}
}
