package mergerequests_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestLockedByACrashIsRecoveredAtStart: a merge request is "locked" only
// while its merge is made. A process killed in between leaves it locked
// (here written into the store as a crash would leave it); the next start
// undoes a merge whose commit never landed, and finishes one whose commit
// did, so neither stays locked (every merge of a locked one answers 406).
func TestLockedByACrashIsRecoveredAtStart(t *testing.T) {
	data, password := t.TempDir(), "recover-root-pw"
	var projectID, pending, landed int64
	var mergeCommit string
	t.Run("before the crash", func(t *testing.T) {
		e := start(t, fennectest.WithDataDir(data, password))
		p := stocktest.NewProject(t, e.Client, "recover", "private")
		projectID = p.ID
		w := e.clone(t, "root", e.RootToken, "root/recover")
		w.commit("base", map[string]string{"a.txt": "a\n"})
		w.git("push", "-q", "origin", "HEAD:master")
		for _, b := range []string{"one", "two"} {
			w.git("checkout", "-q", "-b", b, "master")
			w.commit("on "+b, map[string]string{b + ".txt": b + "\n"})
			w.git("push", "-q", "origin", b)
		}
		for i, b := range []string{"one", "two"} {
			mr, _, err := e.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
				Title: gitlab.Ptr("from " + b), SourceBranch: gitlab.Ptr(b), TargetBranch: gitlab.Ptr("master")})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				pending = mr.IID
			} else {
				landed = mr.IID
			}
		}
		// "two" is merged into master by its merge commit, as the crashed
		// merge had already done before its bookkeeping.
		w.git("checkout", "-q", "master")
		w.git("merge", "-q", "--no-ff", "-m", "Merge branch 'two' into 'master'", "two")
		mergeCommit = w.git("rev-parse", "HEAD")
		w.git("push", "-q", "origin", "master")
		e.Drain(t)
	})

	// The crash: both left locked, as the merge's first transaction leaves
	// them, in a store of schema version 2, before the index of locked
	// merge requests: the rows are written raw, and migration 3 builds the
	// index that the recovery reads.
	db := fennectest.OpenStore(t, data)
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := store.Keys("_meta").Put(tx, []byte("schema:mergerequests"), store.Key(uint64(2))); err != nil {
			return err
		}
		b := store.Keys("mergerequests.merge_requests")
		return b.ForEach(tx, func(k, v []byte) error {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			m["prior_state"], m["state"], m["locked_by_id"] = m["state"], "locked", 1
			raw, _ := json.Marshal(m)
			return b.Put(tx, append([]byte(nil), k...), raw)
		})
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}

	e := start(t, fennectest.WithDataDir(data, password))
	e.Drain(t)
	got := e.Call(t, e.RootToken, http.MethodGet, mrPath(projectID, pending), nil).Expect(t, http.StatusOK, "").Object(t)
	if got["state"] != "opened" {
		t.Fatalf("the merge that never landed: state %v, want opened", got["state"])
	}
	got = e.Call(t, e.RootToken, http.MethodGet, mrPath(projectID, landed), nil).Expect(t, http.StatusOK, "").Object(t)
	if got["state"] != "merged" || got["merge_commit_sha"] != mergeCommit {
		t.Fatalf("the merge that landed: state %v, merge_commit_sha %v, want merged at %s", got["state"], got["merge_commit_sha"], mergeCommit)
	}
	// The undone one merges normally now.
	got = e.Call(t, e.RootToken, http.MethodPut, mrPath(projectID, pending, "/merge"), nil).Expect(t, http.StatusOK, "").Object(t)
	if got["state"] != "merged" {
		t.Fatalf("merging the recovered merge request: %v", got["state"])
	}
}

// On nodes sharing a store, a merge in flight is its node's: the leader's
// recovery leaves a merge request locked by a live node alone, and undoes
// one whose node is gone within a lease or so, with no restart (the
// leader sweeps for dead nodes' merges while it leads). The merge is held
// in flight by holding the repository's ref lock, which a merge's ref
// update waits for on a shared store.
func TestLockedByALiveNodeStaysAndADeadNodesIsRecovered(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	data, password := t.TempDir(), "recover-nodes-pw"
	shared := fennectest.WithConfig(func(cfg *config.Config) { cfg.Store, cfg.LeaseTTL = dsn, time.Second })
	leader := start(t, fennectest.WithDataDir(data, password), shared)
	merger := start(t, fennectest.WithDataDir(data, password), shared)

	p := stocktest.NewProject(t, leader.Client, "recover-nodes", "private")
	w := leader.clone(t, "root", leader.RootToken, "root/recover-nodes")
	w.commit("base", map[string]string{"a.txt": "a\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	w.git("checkout", "-q", "-b", "one", "master")
	w.commit("on one", map[string]string{"one.txt": "one\n"})
	w.git("push", "-q", "origin", "one")
	mr, _, err := leader.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("from one"), SourceBranch: gitlab.Ptr("one"), TargetBranch: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	state := func() any {
		return leader.Call(t, leader.RootToken, http.MethodGet, mrPath(p.ID, mr.IID), nil).Expect(t, http.StatusOK, "").Object(t)["state"]
	}

	sum := sha256.Sum256([]byte(strconv.FormatInt(p.ID, 10)))
	h := hex.EncodeToString(sum[:])
	lockFile, err := os.OpenFile(filepath.Join(data, "repositories", "@hashed", h[:2], h[2:4], h+".git", "refs", "fennec-refs.lock"),
		os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer lockFile.Close()
	if err := syscall.Flock(int(lockFile.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	merged := make(chan struct{})
	go func() {
		defer close(merged)
		_, _, _ = merger.Client.MergeRequests.AcceptMergeRequest(p.ID, mr.IID, nil)
	}()
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		s := state()
		return s == "locked", fmt.Sprintf("state %v, want locked by the merge in flight", s)
	})
	time.Sleep(2 * time.Second) // four of the leader's sweeps
	if s := state(); s != "locked" {
		t.Fatalf("a live node's merge in flight was recovered by the leader: state %v", s)
	}

	// The same merge, said to be a dead node's: the next sweep undoes it.
	err = leader.db.Update(context.Background(), func(tx *store.Tx) error {
		b := store.Keys("mergerequests.merge_requests")
		return b.ForEach(tx, func(k, v []byte) error {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			m["locked_node"] = "node-that-died"
			raw, _ := json.Marshal(m)
			return b.Put(tx, append([]byte(nil), k...), raw)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		s := state()
		return s == "opened", fmt.Sprintf("state %v, want opened", s)
	})
	_ = syscall.Flock(int(lockFile.Fd()), syscall.LOCK_UN)
	<-merged
}
