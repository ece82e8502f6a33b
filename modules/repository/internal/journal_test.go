package internal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// pushRecorder is a subscriber of push events that outlives the servers of
// a test, so that it sees what each one delivers.
type pushRecorder struct {
	mu  sync.Mutex
	evs []repository.PushEvent
}

func (r *pushRecorder) module() fennec.Module {
	return fennec.NewModule("journaltest", fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
		return []events.Subscriber{events.Subscribe("journaltest.push", func(_ context.Context, ev repository.PushEvent) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.evs = append(r.evs, ev)
			return nil
		})}
	}))
}

// byRef lists the recorded events as "ref before after" lines, in order.
func (r *pushRecorder) byRef(project int64) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.evs {
		if ev.ProjectID == project {
			out = append(out, fmt.Sprintf("%s %s %s %s u%d", ev.ObjectKind, ev.Ref, short(ev.Before), short(ev.After), ev.UserID))
		}
	}
	return out
}

func short(sha string) string {
	if sha == strings.Repeat("0", 40) {
		return "0"
	}
	return sha[:7]
}

func drainBus(t *testing.T, bus *events.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

func pending(t *testing.T, db *store.DB) int {
	t.Helper()
	n, err := internal.PendingRefChanges(db)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", args[0], err, out)
	}
	return out
}

var errCrash = errors.New("test: the server stops here")

// The server stops right after refs moved and before their events were
// published, in a git push (three refs) and in an API commit; started again
// on the same data, it publishes exactly one push event per moved ref, from
// the ref journal.
func TestRefJournalReplaysAfterCrashBetweenRefAndEvent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	t.Parallel()
	dir, password := t.TempDir(), "root-journal-test"
	rec := &pushRecorder{}
	var project, root int64
	var want []string
	t.Run("crash", func(t *testing.T) {
		var w *internal.Writer
		var bus *events.Bus
		var db *store.DB
		s := stocktest.Start(t, fennectest.WithDataDir(dir, password), fennectest.WithModules(rec.module()),
			fennectest.WithExtract(&w, &bus, &db))
		me, _, err := s.Client.Users.CurrentUser()
		if err != nil {
			t.Fatal(err)
		}
		root = me.ID
		p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("journal")})
		if err != nil {
			t.Fatal(err)
		}
		project = p.ID
		drainBus(t, bus)
		c1, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
			CommitMessage: gitlab.Ptr("one"), Actions: []*gitlab.CommitActionOptions{{
				Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("a")}}})
		if err != nil {
			t.Fatal(err)
		}
		drainBus(t, bus)
		want = append(want, fmt.Sprintf("push refs/heads/master 0 %s u%d", c1.ID[:7], root))
		if got := rec.byRef(project); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("before the crash: %v, want %v", got, want)
		}

		// The "crash" leaves the retry jobs behind; in a real crash they
		// would not run before the restart, so here they wait past the test.
		internal.SetRetryGrace(w, time.Hour)
		internal.SetAfterMove(w, func(context.Context) error { return errCrash })
		work := t.TempDir()
		remote := strings.Replace(s.URL, "http://", "http://"+url.UserPassword("root", s.RootToken).String()+"@", 1) +
			"/" + p.PathWithNamespace + ".git"
		mustGit(t, work, "clone", "-q", remote, ".")
		if err := os.WriteFile(work+"/b.txt", []byte("b"), 0o644); err != nil {
			t.Fatal(err)
		}
		mustGit(t, work, "add", "b.txt")
		mustGit(t, work, "commit", "-q", "-m", "two")
		c2 := mustGit(t, work, "rev-parse", "HEAD")
		mustGit(t, work, "tag", "v1")
		// The "crash" refuses the push's report; the refs moved anyway.
		_, _ = git(t, work, "push", "-q", "origin", "HEAD:refs/heads/master", "HEAD:refs/heads/feature", "refs/tags/v1")
		want = append(want,
			fmt.Sprintf("push refs/heads/master %s %s u%d", c1.ID[:7], c2[:7], root),
			fmt.Sprintf("push refs/heads/feature 0 %s u%d", c2[:7], root),
			fmt.Sprintf("tag_push refs/tags/v1 0 %s u%d", c2[:7], root))

		_, resp, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("api"),
			StartBranch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("three"), Actions: []*gitlab.CommitActionOptions{{
				Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("c.txt"), Content: gitlab.Ptr("c")}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("commit through the crash: %v", err)
		}
		api, _, err := s.Client.Branches.GetBranch(p.ID, "api")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("push refs/heads/api 0 %s u%d", api.Commit.ID[:7], root))

		// A branch created and deleted again is back where it was, yet
		// moved twice: two events.
		if _, resp, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("twice"),
			Ref: gitlab.Ptr("master")}); err == nil || resp == nil || resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("branch through the crash: %v", err)
		}
		if resp, err := s.Client.Branches.DeleteBranch(p.ID, "twice"); err == nil || resp == nil || resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("branch deletion through the crash: %v", err)
		}
		want = append(want, fmt.Sprintf("push refs/heads/twice 0 %s u%d", c2[:7], root),
			fmt.Sprintf("push refs/heads/twice %s 0 u%d", c2[:7], root))

		for ref, sha := range map[string]string{"master": c2, "feature": c2} {
			if b, _, err := s.Client.Branches.GetBranch(p.ID, ref); err != nil || b.Commit.ID != sha {
				t.Fatalf("branch %s did not move: %v", ref, err)
			}
		}
		drainBus(t, bus)
		if got := rec.byRef(project); len(got) != 1 {
			t.Fatalf("events published through the crash: %v", got)
		}
		if n := pending(t, db); n != 6 {
			t.Fatalf("%d journal entries, want 6", n)
		}
	})
	if t.Failed() {
		return
	}

	var bus *events.Bus
	var db *store.DB
	stocktest.Start(t, fennectest.WithDataDir(dir, password), fennectest.WithModules(rec.module()),
		fennectest.WithExtract(&bus, &db))
	drainBus(t, bus)
	got := rec.byRef(project)
	// Each moved ref exactly once (in the journal's order, which for one
	// push is the order git sent the commands in).
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events after the restart:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := pending(t, db); n != 0 {
		t.Fatalf("%d journal entries left", n)
	}
}

// A commit through the API whose client hangs up right after the ref moved
// still publishes its push event, exactly once.
func TestAPICommitPublishesOnceWhenClientHangsUp(t *testing.T) {
	t.Parallel()
	rec := &pushRecorder{}
	var w *internal.Writer
	var bus *events.Bus
	var db *store.DB
	s := stocktest.Start(t, fennectest.WithModules(rec.module()), fennectest.WithExtract(&w, &bus, &db))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("hangup")})
	if err != nil {
		t.Fatal(err)
	}
	drainBus(t, bus)

	moved := make(chan struct{})
	hungUp := make(chan bool, 1)
	internal.SetAfterMove(w, func(reqCtx context.Context) error {
		close(moved)
		select {
		case <-reqCtx.Done():
			hungUp <- true
		case <-time.After(10 * time.Second):
			hungUp <- false
		}
		return nil
	})
	body, _ := json.Marshal(map[string]any{"branch": "master", "commit_message": "m",
		"actions": []map[string]string{{"action": "create", "file_path": "a.txt", "content": "a"}}})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		fmt.Sprintf("%s/api/v4/projects/%d/repository/commits", s.URL, p.ID), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("PRIVATE-TOKEN", s.RootToken)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-moved:
	case err := <-done:
		t.Fatalf("the request ended before the ref moved: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the ref never moved")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the client got its answer before hanging up")
	}
	if !<-hungUp {
		t.Fatal("the server never saw the client hang up")
	}

	head, _, err := s.Client.Branches.GetBranch(p.ID, "master")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.byRef(p.ID)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	drainBus(t, bus)
	got := rec.byRef(p.ID)
	me, _, err := s.Client.Users.CurrentUser()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("push refs/heads/master 0 %s u%d", head.Commit.ID[:7], me.ID)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if n := pending(t, db); n != 0 {
		t.Fatalf("%d journal entries left", n)
	}
}

// A ref change whose push event cannot be published at once (the
// transaction fails) has moved all the same: the work queue publishes the
// event later, exactly once, retrying with backoff, and the journal and
// the queue end empty. A change published at once leaves no retry job.
func TestPushEventRetriedByTheWorkQueue(t *testing.T) {
	t.Parallel()
	rec := &pushRecorder{}
	var w *internal.Writer
	var bus *events.Bus
	var db *store.DB
	s := stocktest.Start(t, fennectest.WithModules(rec.module()), fennectest.WithExtract(&w, &bus, &db))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("retry")})
	if err != nil {
		t.Fatal(err)
	}
	me, _, err := s.Client.Users.CurrentUser()
	if err != nil {
		t.Fatal(err)
	}
	commit := func(branch, file string) string {
		t.Helper()
		c, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr(branch),
			CommitMessage: gitlab.Ptr(file), Actions: []*gitlab.CommitActionOptions{{
				Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(file), Content: gitlab.Ptr(file)}}})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	jobs := func() int {
		t.Helper()
		n, err := internal.RetryJobs(w)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := commit("master", "a.txt")
	drainBus(t, bus)
	if n := jobs(); n != 0 {
		t.Fatalf("%d retry jobs after a published change, want 0", n)
	}

	internal.SetRetryGrace(w, 50*time.Millisecond)
	var mu sync.Mutex
	failures := 0
	internal.SetFailPublish(w, func() error {
		mu.Lock()
		defer mu.Unlock()
		if failures < 2 {
			failures++
			return errors.New("test: the store refuses the write")
		}
		return nil
	})
	second := commit("master", "b.txt") // the ref moved: 201 all the same
	if n := pending(t, db); n != 1 {
		t.Fatalf("%d journal entries after the failed publication, want 1", n)
	}
	want := []string{
		fmt.Sprintf("push refs/heads/master 0 %s u%d", first[:7], me.ID),
		fmt.Sprintf("push refs/heads/master %s %s u%d", first[:7], second[:7], me.ID),
	}
	deadline := time.Now().Add(20 * time.Second)
	for (pending(t, db) != 0 || jobs() != 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	drainBus(t, bus)
	if got := rec.byRef(p.ID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	mu.Lock()
	if failures != 2 {
		t.Errorf("%d failed publications, want 2 (the first try and the queue's first)", failures)
	}
	mu.Unlock()
	if n := pending(t, db); n != 0 {
		t.Fatalf("%d journal entries left", n)
	}
	if n := jobs(); n != 0 {
		t.Fatalf("%d retry jobs left", n)
	}
}
