package notifications_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	noteevent "github.com/fennec-forge/fennec/modules/notes/event"
)

// TestSubscriptions: the issue subscribe endpoints decide for the
// participating level: a non-member who subscribes to an issue of a public
// project gets its mails, the author who unsubscribes gets none; a
// mention-level member gets a comment that mentions her and not the next.
func TestSubscriptions(t *testing.T) {
	e := start(t)
	c := &cast{e: e, u: map[string]*fennectest.User{}, byEmail: map[string]string{}}
	for _, name := range []string{"ada", "bo", "sub", "ment"} {
		u := e.CreateUser(t, name)
		c.u[name], c.byEmail[u.Email] = u, name
	}
	c.p = e.project(t, c.u["ada"].Client, "Town", "public")
	e.member(t, c.p, c.u["bo"], gitlab.DeveloperPermissions)
	e.member(t, c.p, c.u["ment"], gitlab.DeveloperPermissions)
	c.level(t, "ment", "project", "mention", nil)
	issue, _, err := c.u["ada"].Client.Issues.CreateIssue(c.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Bridge")})
	if err != nil {
		t.Fatal(err)
	}
	subject := "Re: Town | Bridge (#1)"
	c.expect(t, "Town | Bridge (#1)") // nobody watches
	if _, _, err := c.u["sub"].Client.Issues.SubscribeToIssue(c.p.ID, issue.IID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.u["bo"].Client.Notes.CreateIssueNote(c.p.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("cc @ment")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "ada", "sub", "ment")
	if _, _, err := c.u["ada"].Client.Issues.UnsubscribeFromIssue(c.p.ID, issue.IID); err != nil {
		t.Fatal(err)
	}
	// ment took part (mentioned) but her level is mention: this comment
	// does not mention her.
	if _, _, err := c.u["sub"].Client.Notes.CreateIssueNote(c.p.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("me too")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "bo")
	if _, _, err := c.u["bo"].Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "sub")

	// An edit that mentions someone new mails the newly mentioned alone
	// (ment, at the mention level, too); the same mentions again mail
	// nobody.
	desc := "Ask @ment and @sub"
	if _, _, err := c.u["bo"].Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	mails := c.expect(t, subject, "ment", "sub")
	if !strings.Contains(mails[0].Text, "User bo mentioned you in issue #1: Bridge") || !strings.Contains(mails[0].Text, desc) {
		t.Fatalf("mention mail: %s", mails[0].Text)
	}
	desc += ", thanks"
	if _, _, err := c.u["bo"].Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject)
}

// A comment whose issue's feature was switched off before the module
// handled it tells nobody (no one may read the issue now) and is handled
// once: the bus drains instead of retrying it for ever.
func TestNoteOnASwitchedOffFeatureIsDropped(t *testing.T) {
	e := start(t)
	alice := e.CreateUser(t, "alice")
	p := e.project(t, alice.Client, "dark", "private")
	issue, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Lights")})
	if err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	if _, _, err := alice.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{Name: gitlab.Ptr(p.Name), IssuesEnabled: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	// The comment's event as the notes module published it just before
	// the switch (the API refuses new comments now).
	err = e.Store.Update(context.Background(), func(tx *store.Tx) error {
		return e.bus.Publish(tx, noteevent.NoteEvent{Action: noteevent.NoteCreated, NoteID: 999, Body: "Too late",
			ProjectID: p.ID, NoteableType: "Issue", NoteableID: issue.ID, NoteableIID: issue.IID, AuthorID: alice.ID,
			CreatedAt: time.Now(), UpdatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	e.settle(t) // fails when the event is retried instead of handled
	if n := e.queued(t); n != 0 {
		t.Fatalf("%d mails queued about a comment on a switched-off feature", n)
	}
}
