package internal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Two nodes share a PostgreSQL store and a data directory. While node A is
// between moving a ref and publishing its push event, node B replays the
// ref journal, as it does when it takes the lead: the entry is A's, a live
// node's, and B leaves it alone. A then publishes the one event. (Were B to
// replay it, the ref being at its new value, both would publish.) Once A
// has stopped, an entry it left behind is B's to replay.
func TestRefJournalReplayLeavesLiveNodesChanges(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	dir := t.TempDir()
	rec := &pushRecorder{}
	shared := func(cfg *config.Config) { cfg.Store, cfg.LeaseTTL = dsn, 2*time.Second }
	var wb *internal.Writer
	var db *store.DB
	// Node B first: it leads, and its outbox delivers every node's events.
	stocktest.Start(t, fennectest.WithDataDir(dir, "root-journal-nodes"), fennectest.WithConfig(shared),
		fennectest.WithModules(rec.module()), fennectest.WithExtract(&wb, &db))
	var projectID int64
	t.Run("node A", func(t *testing.T) {
		var wa *internal.Writer
		a := stocktest.Start(t, fennectest.WithDataDir(dir, "root-journal-nodes"), fennectest.WithConfig(shared),
			fennectest.WithModules(rec.module()), fennectest.WithExtract(&wa))
		p, _, err := a.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("nodes")})
		if err != nil {
			t.Fatal(err)
		}
		projectID = p.ID
		internal.SetRetryGrace(wa, time.Hour) // only the replays under test may finish the entry
		moved, release := make(chan struct{}), make(chan struct{})
		internal.SetAfterMove(wa, func(context.Context) error {
			close(moved)
			<-release
			return nil
		})
		done := make(chan error, 1)
		go func() {
			_, _, err := a.Client.Commits.CreateCommit(projectID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
				CommitMessage: gitlab.Ptr("one"), Actions: []*gitlab.CommitActionOptions{{
					Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("a")}}})
			done <- err
		}()
		select {
		case <-moved:
		case <-time.After(30 * time.Second):
			t.Fatal("the commit's ref never moved")
		}
		if err := internal.ReplayJournal(context.Background(), wb); err != nil {
			t.Fatal(err)
		}
		if n := pending(t, db); n != 1 {
			t.Fatalf("after node B's replay the journal holds %d entries, want node A's 1 in flight", n)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		internal.SetAfterMove(wa, nil)
		fennectest.Poll(t, 20*time.Second, func() (bool, string) {
			got := rec.byRef(projectID)
			return len(got) == 1, fmt.Sprintf("push events %v, want exactly one", got)
		})
		if n := pending(t, db); n != 0 {
			t.Fatalf("journal holds %d entries after node A finished", n)
		}

		// A change node A leaves unfinished when it stops is a dead node's:
		// node B's replay finishes it.
		internal.SetAfterMove(wa, func(context.Context) error { return errCrash })
		if _, _, err := a.Client.Commits.CreateCommit(projectID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
			CommitMessage: gitlab.Ptr("two"), Actions: []*gitlab.CommitActionOptions{{
				Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("b.txt"), Content: gitlab.Ptr("b")}}}); err == nil {
			t.Fatal("the commit through the crash succeeded")
		}
	})
	if err := internal.ReplayJournal(context.Background(), wb); err != nil {
		t.Fatal(err)
	}
	fennectest.Poll(t, 20*time.Second, func() (bool, string) {
		got := rec.byRef(projectID)
		return len(got) == 2, fmt.Sprintf("push events %v, want two", got)
	})
}
