package mergerequests_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
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
