package issues_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	collabevent "github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The merge requests module, above this one, says that a merge landed on
// the default branch with the collab event Merged: the issues its texts
// close are closed as the merger may ("closed via merge request !7"), those
// they only mention get "mentioned in", and a redelivery (the same key)
// changes nothing.
func TestClosedOnMergedEvent(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "merging", "public")
	newIssue(t, alice.Client, p.ID, "Fix me")
	newIssue(t, alice.Client, p.ID, "Mention me")
	newIssue(t, alice.Client, p.ID, "Leave me")
	s.Drain(t)
	publish := func(ev collabevent.Merged) {
		t.Helper()
		if err := s.db.Update(context.Background(), func(tx *store.Tx) error { return s.bus.Publish(tx, ev) }); err != nil {
			t.Fatal(err)
		}
		s.Drain(t)
	}
	ev := collabevent.Merged{ProjectID: p.ID, UserID: alice.ID, Key: "merge_request:99", Via: "merge request !7",
		MentionVia: "merge request !7", Texts: []string{"Fix it", "Closes #1, see #2"}}
	publish(ev)
	publish(ev)
	// bob may not close anything in alice's project: nothing happens.
	publish(collabevent.Merged{ProjectID: p.ID, UserID: bob.ID, Key: "merge_request:100", Via: "merge request !8", Texts: []string{"Closes #3"}})

	state := func(iid int64) string {
		i, _, err := alice.Client.Issues.GetIssue(p.ID, iid)
		if err != nil {
			t.Fatal(err)
		}
		return i.State
	}
	if a, b, c := state(1), state(2), state(3); a != "closed" || b != "opened" || c != "opened" {
		t.Fatalf("states %s %s %s", a, b, c)
	}
	notes := func(iid int64) []string {
		list, _, err := alice.Client.Notes.ListIssueNotes(p.ID, iid, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range list {
			out = append(out, n.Body)
		}
		return out
	}
	if got := strings.Join(notes(1), "|"); got != "closed via merge request !7" {
		t.Fatalf("#1's notes: %q", got)
	}
	if got := strings.Join(notes(2), "|"); got != "mentioned in merge request !7" {
		t.Fatalf("#2's notes: %q", got)
	}
	if got := notes(3); len(got) != 0 {
		t.Fatalf("#3's notes: %q", got)
	}
}
