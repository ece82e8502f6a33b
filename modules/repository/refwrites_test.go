package repository_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// Refs being written never fail a reader: two clients commit to two
// branches through the API while readers loop over the branch list, git's
// info/refs and a tree at an existing branch. Every read must succeed
// (before, 6-16% failed with "ref file is empty").
func TestRefReadsDuringWrites(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	const window = 3 * time.Second
	id := store.IDString(w.project.ID)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var commits, reads atomic.Int64
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	for _, branch := range []string{"master", "feature"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"branch":%q,"commit_message":"c%d","actions":[{"action":"create","file_path":"w/%s-%d.txt","content":"x"}]}`,
					branch, i, branch, i)
				r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+id+"/repository/commits", strings.NewReader(body), nil,
					"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
				if r.StatusCode != 201 {
					fail("commit to %s: %d %s", branch, r.StatusCode, raw)
					return
				}
				commits.Add(1)
			}
		}()
	}
	get := func(path string, check func(status int, body []byte) bool) {
		r := w.s.Do(t, http.MethodGet, path, nil)
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if !check(r.StatusCode, body) {
			fail("GET %s: %d %.200s", path, r.StatusCode, body)
		}
		reads.Add(1)
	}
	readers := []func(){
		func() {
			get("/api/v4/projects/"+id+"/repository/branches", func(status int, body []byte) bool {
				return status == 200 && strings.Contains(string(body), `"name":"feature"`) && strings.Contains(string(body), `"name":"master"`)
			})
		},
		func() {
			get("/"+w.project.PathWithNamespace+".git/info/refs?service=git-upload-pack", func(status int, body []byte) bool {
				return status == 200 && strings.Contains(string(body), "refs/heads/feature") && strings.Contains(string(body), "refs/heads/master")
			})
		},
		func() {
			get("/api/v4/projects/"+id+"/repository/tree?ref=feature", func(status int, _ []byte) bool { return status == 200 })
		},
		func() {
			get("/api/v4/projects/"+id+"/repository/branches/master", func(status int, _ []byte) bool { return status == 200 })
		},
	}
	for _, read := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				read()
			}
		}()
	}
	time.Sleep(window)
	close(stop)
	wg.Wait()
	t.Logf("%d commits and %d reads in %s", commits.Load(), reads.Load(), window)
	for _, f := range failures {
		t.Error(f)
	}
	if commits.Load() < 4 || reads.Load() < 20 {
		t.Fatalf("too little traffic to mean anything: %d commits, %d reads", commits.Load(), reads.Load())
	}
	// No lock file is left behind, and the repository is sound.
	if out := gitCmd(t, w.bare, "for-each-ref", "--format=%(refname)"); strings.Contains(out, ".lock") {
		t.Fatalf("a lock file is taken for a ref:\n%s", out)
	}
	gitCmd(t, w.bare, "fsck", "--strict")
}
