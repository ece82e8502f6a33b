package mergerequests_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A merge request's upvotes and downvotes count its thumbsup and
// thumbsdown award emoji, on the single merge request and in lists; a note
// that is only an emoji awards it; the merge request's deletion takes its
// awards with it.
func TestMergeRequestAwardEmojiAndVotes(t *testing.T) {
	t.Parallel()
	var svc target.Service
	s := start(t, fennectest.WithExtract(&svc))
	p, w, alice := setup(t, s, "voting")
	w.commit("feature", map[string]string{"b.txt": "new\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	mr := openMR(t, alice.Client, p.ID, "feature", "master", "Vote on me")
	bob := s.CreateUser(t, "bob")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)

	up, _, err := bob.Client.AwardEmoji.CreateMergeRequestAwardEmoji(p.ID, mr.IID, &gitlab.CreateAwardEmojiOptions{Name: "+1"})
	if err != nil || up.Name != "thumbsup" || up.AwardableType != "MergeRequest" || up.AwardableID != mr.ID || up.User.Username != "bob" {
		t.Fatalf("award %+v, %v", up, err)
	}
	if _, _, err := bob.Client.AwardEmoji.CreateMergeRequestAwardEmoji(p.ID, mr.IID, &gitlab.CreateAwardEmojiOptions{Name: "rocket"}); err != nil {
		t.Fatal(err)
	}
	// The author may not vote on their own merge request.
	s.Call(t, alice.Token, http.MethodPost, mrPath(p.ID, mr.IID, "/award_emoji"), map[string]string{"name": "thumbsdown"}).
		Expect(t, 404, `{"message":"404 Award Emoji Not Found"}`)
	// A note that is only an emoji is an award, answered as one.
	got := s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, mr.IID, "/notes"), map[string]string{"body": ":-1:"}).Expect(t, 201, "").Object(t)
	if got["name"] != "thumbsdown" || got["awardable_type"] != "MergeRequest" || got["awardable_id"] != json.Number(store.IDString(mr.ID)) {
		t.Fatalf("emoji note %v", got)
	}

	one, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil || one.Upvotes != 1 || one.Downvotes != 1 || one.UserNotesCount != 0 {
		t.Fatalf("votes %d/%d, notes %d (%v)", one.Upvotes, one.Downvotes, one.UserNotesCount, err)
	}
	list, _, err := alice.Client.MergeRequests.ListProjectMergeRequests(p.ID, nil)
	if err != nil || len(list) != 1 || list[0].Upvotes != 1 || list[0].Downvotes != 1 {
		t.Fatalf("listed %v, %v", list, err)
	}
	awards, _, err := alice.Client.AwardEmoji.ListMergeRequestAwardEmoji(p.ID, mr.IID, nil)
	if err != nil || len(awards) != 3 || awards[0].Name != "thumbsup" || awards[1].Name != "rocket" || awards[2].Name != "thumbsdown" {
		t.Fatalf("awards %v, %v", awards, err)
	}
	if _, err := bob.Client.AwardEmoji.DeleteMergeRequestAwardEmoji(p.ID, mr.IID, up.ID); err != nil {
		t.Fatal(err)
	}
	if one, _, err = alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil); err != nil || one.Upvotes != 0 || one.Downvotes != 1 {
		t.Fatalf("after taking back: %d/%d (%v)", one.Upvotes, one.Downvotes, err)
	}

	if _, err := alice.Client.MergeRequests.DeleteMergeRequest(p.ID, mr.IID); err != nil {
		t.Fatal(err)
	}
	left, err := svc.Votes(context.Background(), "MergeRequest", []int64{mr.ID})
	if err != nil || len(left) != 0 {
		t.Fatalf("votes of a deleted merge request %v, %v", left, err)
	}
}
