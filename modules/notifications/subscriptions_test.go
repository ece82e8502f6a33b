package notifications_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	noteevent "github.com/fennec-forge/fennec/modules/collab/event"
)

// TestSubscriptions: the issue subscribe endpoints decide for the
// participating level: a non-member who subscribes to an issue of a public
// project gets its mails, the author who unsubscribes gets none; a
// mention-level member gets a comment that mentions her and not the next.
func TestSubscriptions(t *testing.T) {
	t.Parallel()
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
	goldenMail(t, "issue_mention", mails, "ment@example.com", mailKnown(e))
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
	t.Parallel()
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
	// The comment's event as the collab module published it just before
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

// subscribe calls the issue's subscribe (on) or unsubscribe endpoint as
// who, which must change the subscription (not a 304).
func (c *cast) subscribe(t *testing.T, who string, iid int64, on bool) {
	t.Helper()
	call := c.u[who].Client.Issues.UnsubscribeFromIssue
	if on {
		call = c.u[who].Client.Issues.SubscribeToIssue
	}
	_, resp, err := call(c.p.ID, iid)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 {
		t.Fatalf("%s subscribe=%v to #%d: status %d", who, on, iid, resp.StatusCode)
	}
}

// TestUnsubscribedWatchers: whoever unsubscribed from an issue gets none of
// its mails, whatever found them: a project watcher who took part, a
// global watcher and a custom level that chose new_note who subscribed and
// then unsubscribed. Another issue still mails them.
func TestUnsubscribedWatchers(t *testing.T) {
	t.Parallel()
	e := start(t)
	c := &cast{e: e, u: map[string]*fennectest.User{}, byEmail: map[string]string{}}
	for _, name := range []string{"ann", "wat", "glw", "cus", "par"} {
		u := e.CreateUser(t, name)
		c.u[name], c.byEmail[u.Email] = u, name
	}
	c.p = e.project(t, c.u["ann"].Client, "Harbor", "private")
	for _, name := range []string{"wat", "glw", "cus", "par"} {
		e.member(t, c.p, c.u[name], gitlab.DeveloperPermissions)
	}
	c.level(t, "wat", "project", "watch", nil)
	c.level(t, "glw", "global", "watch", nil)
	c.level(t, "cus", "project", "custom", map[string]bool{"new_note": true})
	comment := func(who string, iid int64, body string) {
		t.Helper()
		if _, _, err := c.u[who].Client.Notes.CreateIssueNote(c.p.ID, iid, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr(body)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, title := range []string{"Leak", "Rust"} {
		if _, _, err := c.u["ann"].Client.Issues.CreateIssue(c.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(title)}); err != nil {
			t.Fatal(err)
		}
	}
	c.expect(t, "Harbor | Leak (#1)", "wat", "glw")
	c.expect(t, "Harbor | Rust (#2)", "wat", "glw")

	comment("wat", 1, "On it, cc @par")
	c.expect(t, "Re: Harbor | Leak (#1)", "ann", "glw", "cus", "par")
	c.subscribe(t, "wat", 1, false) // a participant: unsubscribes at once
	for _, name := range []string{"glw", "cus"} {
		c.subscribe(t, name, 1, true) // not participants: subscribe first
		c.subscribe(t, name, 1, false)
	}

	comment("par", 1, "Fixed?")
	c.expect(t, "Re: Harbor | Leak (#1)", "ann")
	if _, _, err := c.u["ann"].Client.Issues.UpdateIssue(c.p.ID, 1, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, "Re: Harbor | Leak (#1)", "par")

	// The other issue is untouched.
	comment("par", 2, "Also here")
	c.expect(t, "Re: Harbor | Rust (#2)", "ann", "wat", "glw", "cus")

	// Subscribing again brings the watcher back.
	c.subscribe(t, "wat", 1, true)
	comment("ann", 1, "Reopen?")
	c.expect(t, "Re: Harbor | Leak (#1)", "wat", "par")
}

// TestSubscribersWhateverTheirLevel: an explicit subscriber of an issue
// gets its mails at the mention level (a comment that does not mention
// her, a close) and at the disabled level too, until they unsubscribe;
// the same levels without a subscription get nothing.
func TestSubscribersWhateverTheirLevel(t *testing.T) {
	t.Parallel()
	e := start(t)
	c := &cast{e: e, u: map[string]*fennectest.User{}, byEmail: map[string]string{}}
	for _, name := range []string{"ann", "bo", "men", "dis", "men2", "dis2"} {
		u := e.CreateUser(t, name)
		c.u[name], c.byEmail[u.Email] = u, name
	}
	c.p = e.project(t, c.u["ann"].Client, "Mill", "private")
	for _, name := range []string{"bo", "men", "dis", "men2", "dis2"} {
		e.member(t, c.p, c.u[name], gitlab.DeveloperPermissions)
	}
	c.level(t, "men", "global", "mention", nil)
	c.level(t, "men2", "global", "mention", nil)
	c.level(t, "dis", "project", "disabled", nil)
	c.level(t, "dis2", "project", "disabled", nil)
	issue, _, err := c.u["ann"].Client.Issues.CreateIssue(c.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Wheel")})
	if err != nil {
		t.Fatal(err)
	}
	subject := "Re: Mill | Wheel (#1)"
	c.expect(t, "Mill | Wheel (#1)")
	c.subscribe(t, "men", issue.IID, true)
	c.subscribe(t, "dis", issue.IID, true)

	if _, _, err := c.u["bo"].Client.Notes.CreateIssueNote(c.p.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Squeaks")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "ann", "men", "dis")
	if _, _, err := c.u["ann"].Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "bo", "men", "dis")

	c.subscribe(t, "men", issue.IID, false)
	c.subscribe(t, "dis", issue.IID, false)
	if _, _, err := c.u["bo"].Client.Notes.CreateIssueNote(c.p.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Oiled")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "ann")
}
