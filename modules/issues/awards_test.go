package issues_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// An issue's upvotes and downvotes count its thumbsup and thumbsdown award
// emoji (given through the award emoji API, as "+1"/"-1", or as a note that
// is only the emoji), on the single issue and in lists; the issue's
// deletion takes its awards and its notes' awards with it.
func TestIssueAwardEmojiAndVotes(t *testing.T) {
	var svc target.Service
	e := start(t, fennectest.WithExtract(&svc))
	alice, bob, carol, dave := e.CreateUser(t, "alice"), e.CreateUser(t, "bob"), e.CreateUser(t, "carol"), e.CreateUser(t, "dave")
	p := stocktest.NewProject(t, alice.Client, "voting", "private")
	for _, u := range []*fennectest.User{bob, carol, dave} {
		stocktest.AddMember(t, alice.Client, p.ID, u.ID, gitlab.DeveloperPermissions)
	}
	issue := newIssue(t, alice.Client, p.ID, "Vote on me")
	newIssue(t, alice.Client, p.ID, "No votes")

	award := func(u *fennectest.User, name string) *gitlab.AwardEmoji {
		t.Helper()
		a, _, err := u.Client.AwardEmoji.CreateIssueAwardEmoji(p.ID, issue.IID, &gitlab.CreateAwardEmojiOptions{Name: name})
		if err != nil {
			t.Fatalf("award %s by %s: %v", name, u.Username, err)
		}
		return a
	}
	up := award(bob, "thumbsup")
	if up.Name != "thumbsup" || up.AwardableType != "Issue" || up.AwardableID != issue.ID || up.User.Username != "bob" || up.CreatedAt == nil {
		t.Fatalf("award %+v", up)
	}
	award(carol, "+1")
	award(dave, "-1")
	award(dave, "tada")

	// A note that is only an emoji is an award, answered as one.
	r := e.Call(t, carol.Token, http.MethodPost, issuePath(p.ID, issue.IID, "/notes"), map[string]string{"body": ":thumbsdown:"}).Expect(t, 201, "")
	got := r.Object(t)
	if got["name"] != "thumbsdown" || got["awardable_type"] != "Issue" || got["awardable_id"] != json.Number(store.IDString(issue.ID)) || got["body"] != nil {
		t.Fatalf("emoji note %s", r.Body)
	}

	votes := func(want [2]int) {
		t.Helper()
		one, _, err := alice.Client.Issues.GetIssue(p.ID, issue.IID)
		if err != nil || one.Upvotes != int64(want[0]) || one.Downvotes != int64(want[1]) || one.UserNotesCount != 0 {
			t.Fatalf("issue votes %d/%d notes %d, want %v (%v)", one.Upvotes, one.Downvotes, one.UserNotesCount, want, err)
		}
		list, _, err := alice.Client.Issues.ListProjectIssues(p.ID, nil)
		if err != nil || len(list) != 2 {
			t.Fatalf("list %v", err)
		}
		for _, i := range list {
			wantUp, wantDown := int64(0), int64(0)
			if i.IID == issue.IID {
				wantUp, wantDown = int64(want[0]), int64(want[1])
			}
			if i.Upvotes != wantUp || i.Downvotes != wantDown {
				t.Fatalf("listed issue %d votes %d/%d, want %d/%d", i.IID, i.Upvotes, i.Downvotes, wantUp, wantDown)
			}
		}
	}
	votes([2]int{2, 2})

	list, _, err := alice.Client.AwardEmoji.ListIssueAwardEmoji(p.ID, issue.IID, nil)
	if err != nil || len(list) != 5 {
		t.Fatalf("awards %d, %v", len(list), err)
	}
	var names []string
	for _, a := range list {
		names = append(names, a.User.Username+":"+a.Name)
	}
	if want := []string{"bob:thumbsup", "carol:thumbsup", "dave:thumbsdown", "dave:tada", "carol:thumbsdown"}; !slices.Equal(names, want) {
		t.Fatalf("awards %v, want %v", names, want)
	}
	one, _, err := alice.Client.AwardEmoji.GetIssueAwardEmoji(p.ID, issue.IID, up.ID)
	if err != nil || one.ID != up.ID || one.Name != "thumbsup" {
		t.Fatalf("get %+v, %v", one, err)
	}

	// The author does not vote on their own issue.
	_, resp, err := alice.Client.AwardEmoji.CreateIssueAwardEmoji(p.ID, issue.IID, &gitlab.CreateAwardEmojiOptions{Name: "thumbsup"})
	if err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the author's vote: %v", err)
	}
	// Taking an award back changes the count.
	if _, err := bob.Client.AwardEmoji.DeleteIssueAwardEmoji(p.ID, issue.IID, up.ID); err != nil {
		t.Fatal(err)
	}
	votes([2]int{1, 2})

	// Awards on a note of the issue are the note's, not the issue's votes.
	note, _, err := alice.Client.Notes.CreateIssueNote(p.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("a comment")})
	if err != nil {
		t.Fatal(err)
	}
	na, _, err := bob.Client.AwardEmoji.CreateIssuesAwardEmojiOnNote(p.ID, issue.IID, note.ID, &gitlab.CreateAwardEmojiOptions{Name: "thumbsup"})
	if err != nil || na.AwardableType != "Note" || na.AwardableID != note.ID {
		t.Fatalf("note award %+v, %v", na, err)
	}
	onNote, _, err := alice.Client.AwardEmoji.ListIssuesAwardEmojiOnNote(p.ID, issue.IID, note.ID, nil)
	if err != nil || len(onNote) != 1 || onNote[0].ID != na.ID {
		t.Fatalf("note awards %v, %v", onNote, err)
	}
	one2, _, err := alice.Client.Issues.GetIssue(p.ID, issue.IID)
	if err != nil || one2.Upvotes != 1 || one2.UserNotesCount != 1 {
		t.Fatalf("after the note award: %d upvotes, %d notes (%v)", one2.Upvotes, one2.UserNotesCount, err)
	}

	// A guest does not see a confidential issue, nor its awards (the
	// issue's own 404).
	secret := newIssue(t, alice.Client, p.ID, "Secret", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
	guest := e.CreateUser(t, "guest")
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	e.Call(t, guest.Token, http.MethodGet, issuePath(p.ID, secret.IID, "/award_emoji"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	e.Call(t, guest.Token, http.MethodPost, issuePath(p.ID, secret.IID, "/award_emoji"), map[string]string{"name": "eyes"}).
		Expect(t, 404, `{"message":"404 Not found"}`)

	if _, err := alice.Client.Issues.DeleteIssue(p.ID, issue.IID); err != nil {
		t.Fatal(err)
	}
	left, err := svc.Votes(context.Background(), "Issue", []int64{issue.ID})
	if err != nil || len(left) != 0 {
		t.Fatalf("votes of a deleted issue %v, %v", left, err)
	}
	left, err = svc.Votes(context.Background(), "Note", []int64{note.ID})
	if err != nil || len(left) != 0 {
		t.Fatalf("votes of a deleted issue's note %v, %v", left, err)
	}
}
