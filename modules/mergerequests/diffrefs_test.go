package mergerequests_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestDiffRefsLetAClientCommentOnALine: a merge request whose target
// moved on after the branch was cut shows diff_refs (base_sha the fork
// point, start_sha the target's head, head_sha the source's head) on its
// single GET and its changes; a client that takes them as they are starts
// a thread on a line of the diff, and the discussions API shows that
// position. A push to the source moves head_sha; a merged one keeps the
// target as it was merged.
func TestDiffRefsLetAClientCommentOnALine(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "diffrefs")
	fork := strings.Fields(w.git("rev-parse", "master"))[0]
	w.commit("one", map[string]string{"a.txt": "one\nTWO\nthree\n"})
	head := w.commit("two", map[string]string{"b.txt": "b\n"})
	w.git("push", "-q", "origin", "feature")
	w.git("checkout", "-q", "master")
	target := w.commit("target moves", map[string]string{"c.txt": "c\n"})
	w.git("push", "-q", "origin", "master")
	s.Drain(t)
	mr := openMR(t, alice.Client, p.ID, "feature", "master", "Refs")

	got, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := gitlab.MergeRequestDiffRefs{BaseSha: fork, HeadSha: head, StartSha: target}
	if got.DiffRefs != want {
		t.Fatalf("diff_refs %+v, want %+v", got.DiffRefs, want)
	}
	changes := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, mr.IID, "/changes"), nil).Expect(t, 200, "").Object(t)
	if refs, _ := changes["diff_refs"].(map[string]any); refs["base_sha"] != fork || refs["start_sha"] != target || refs["head_sha"] != head {
		t.Fatalf("changes' diff_refs %v", changes["diff_refs"])
	}
	refs := got.DiffRefs
	d, _, err := alice.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{
		Body: gitlab.Ptr("Why upper case?"), Position: &gitlab.PositionOptions{BaseSHA: gitlab.Ptr(refs.BaseSha),
			StartSHA: gitlab.Ptr(refs.StartSha), HeadSHA: gitlab.Ptr(refs.HeadSha), PositionType: gitlab.Ptr("text"),
			NewPath: gitlab.Ptr("a.txt"), OldPath: gitlab.Ptr("a.txt"), NewLine: gitlab.Ptr(int64(2))}})
	if err != nil {
		t.Fatalf("a thread on the line the refs name: %v", err)
	}
	if pos := d.Notes[0].Position; pos == nil || pos.BaseSHA != fork || pos.StartSHA != target || pos.HeadSHA != head || pos.NewLine != 2 {
		t.Fatalf("position %+v", d.Notes[0].Position)
	}

	w.git("checkout", "-q", "feature")
	newHead := w.commit("three", map[string]string{"b.txt": "bb\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	got, _, _ = alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if want.HeadSha = newHead; got.DiffRefs != want {
		t.Fatalf("after a push: diff_refs %+v, want %+v", got.DiffRefs, want)
	}
	merged, _, err := alice.Client.MergeRequests.AcceptMergeRequest(p.ID, mr.IID, nil)
	if err != nil || merged.State != "merged" {
		t.Fatalf("merge: %v", err)
	}
	got, _, _ = alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if got.DiffRefs != want {
		t.Fatalf("merged: diff_refs %+v, want %+v", got.DiffRefs, want)
	}
}
