package notifications_test

import (
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

// cast is a project in a group with one user per notification level.
type cast struct {
	e       *env
	p       *gitlab.Project
	g       *gitlab.Group
	u       map[string]*fennectest.User
	byEmail map[string]string
}

func (c *cast) level(t *testing.T, who, source, level string, events map[string]bool) {
	t.Helper()
	path := "/api/v4/notification_settings"
	switch source {
	case "project":
		path = "/api/v4/projects/" + store.IDString(c.p.ID) + "/notification_settings"
	case "group":
		path = "/api/v4/groups/" + store.IDString(c.g.ID) + "/notification_settings"
	}
	body := `{"level":"` + level + `"`
	for k, v := range events {
		if v {
			body += `,"` + k + `":true`
		}
	}
	body += "}"
	if st, _, got := c.e.call(t, c.u[who].Token, "PUT", path, body); st != 200 {
		t.Fatalf("%s %s: %d %s", who, path, st, got)
	}
}

// names turns the mails' recipients back into user names.
func (c *cast) names(mails []received) []string {
	var out []string
	for _, a := range recipients(mails) {
		out = append(out, c.byEmail[strings.Trim(a, "<>")])
	}
	slices.Sort(out)
	return out
}

func (c *cast) expect(t *testing.T, subject string, want ...string) []received {
	t.Helper()
	got := c.e.take(t, subject)
	slices.Sort(want)
	if names := c.names(got); !slices.Equal(names, want) {
		t.Fatalf("%q went to %v, want %v", subject, names, want)
	}
	return got
}

func newCast(t *testing.T, e *env, visibility string) *cast {
	t.Helper()
	c := &cast{e: e, u: map[string]*fennectest.User{}, byEmail: map[string]string{}}
	var err error
	c.g, _, err = e.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Crew"), Path: gitlab.Ptr("crew"),
		Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	c.p, _, err = e.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("Rocket"), NamespaceID: gitlab.Ptr(c.g.ID),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]gitlab.AccessLevelValue{
		"ann": gitlab.DeveloperPermissions, // the actor
		"wat": gitlab.ReporterPermissions,  // watch on the project
		"par": gitlab.DeveloperPermissions, // participating (the default)
		"men": gitlab.DeveloperPermissions, // mention, globally
		"cus": gitlab.ReporterPermissions,  // custom on the project: new_issue
		"dis": gitlab.DeveloperPermissions, // disabled, globally
		"glw": gitlab.DeveloperPermissions, // watch globally, global on project and group
		"gst": gitlab.GuestPermissions,     // a guest who watches
		"blk": gitlab.DeveloperPermissions, // watches, then blocked
		"out": gitlab.DeveloperPermissions, // watched, then left the project
		"gw":  gitlab.DeveloperPermissions, // a group member: project global, group watch
	}
	for name, level := range members {
		u := e.CreateUser(t, name)
		c.u[name], c.byEmail[u.Email] = u, name
		if name == "gw" {
			lvl := level
			if _, _, err := e.Client.GroupMembers.AddGroupMember(c.g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(u.ID), AccessLevel: &lvl}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		e.member(t, c.p, u, level)
	}
	c.level(t, "wat", "project", "watch", nil)
	c.level(t, "men", "global", "mention", nil)
	c.level(t, "cus", "project", "custom", map[string]bool{"new_issue": true})
	c.level(t, "dis", "global", "disabled", nil)
	c.level(t, "glw", "global", "watch", nil)
	c.level(t, "glw", "project", "global", nil)
	c.level(t, "gst", "project", "watch", nil)
	c.level(t, "blk", "project", "watch", nil)
	c.level(t, "out", "project", "watch", nil)
	c.level(t, "gw", "project", "global", nil)
	c.level(t, "gw", "group", "watch", nil)
	if err := e.Client.Users.BlockUser(c.u["blk"].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.ProjectMembers.DeleteProjectMember(c.p.ID, c.u["out"].ID); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestIssueRecipients(t *testing.T) {
	t.Parallel()
	e := start(t)
	c := newCast(t, e, "private")
	ann := c.u["ann"]
	issue, _, err := ann.Client.Issues.CreateIssue(c.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Engine stalls"),
		Description: gitlab.Ptr("Seen by @men and @par, not by @nobody."), AssigneeIDs: &[]int64{c.u["dis"].ID}})
	if err != nil {
		t.Fatal(err)
	}
	subject := "Rocket | Engine stalls (#1)"
	// Watchers (project, group, global; the guest may read it), the custom
	// level that chose new_issue, the mentioned (mention and participating
	// levels). Not: the actor, the disabled assignee, the blocked watcher,
	// the watcher who left the private project, the participating member
	// who takes no part... (par is mentioned, so takes part).
	mails := c.expect(t, subject, "wat", "gw", "glw", "gst", "cus", "men", "par")
	root := mails[0].Header.Get("Message-ID")
	if root != "<issue_"+store.IDString(issue.ID)+"@127.0.0.1>" {
		t.Fatalf("Message-ID %q", root)
	}
	for _, m := range mails {
		if m.Header.Get("Message-ID") != root || m.Header.Get("In-Reply-To") != "" {
			t.Fatalf("new issue threading: %v", m.Header)
		}
		if !strings.Contains(m.Text, issue.WebURL) || !strings.Contains(m.HTML, `href="`+issue.WebURL+`"`) {
			t.Fatalf("no link to %s in\n%s\n%s", issue.WebURL, m.Text, m.HTML)
		}
		if !strings.Contains(m.Text, "Seen by @men and @par") || m.Header.Get("X-GitLab-Project") != "Rocket" ||
			m.Header.Get("X-GitLab-Project-Path") != "crew/rocket" || m.Header.Get("X-GitLab-Issue-ID") != store.IDString(issue.ID) {
			t.Fatalf("mail: %v\n%s", m.Header, m.Text)
		}
	}
	goldenMail(t, "issue_new", mails, "wat@example.com", mailKnown(e))

	// A comment by the watcher mentioning cus: participants (author,
	// the mentioned participating member), watchers, the mentioned custom
	// user; not the mention-level user this comment does not mention.
	note, _, err := c.u["wat"].Client.Notes.CreateIssueNote(c.p.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Ask @cus about <b>fuel</b>")})
	if err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, "ann", "par", "gw", "glw", "gst", "cus")
	for _, m := range mails {
		if m.Header.Get("Message-ID") != "<note_"+store.IDString(note.ID)+"@127.0.0.1>" || m.Header.Get("In-Reply-To") != root || m.Header.Get("References") != root {
			t.Fatalf("note threading: %v", m.Header)
		}
		if !strings.Contains(m.Text, "Ask @cus about <b>fuel</b>") || !strings.Contains(m.HTML, "Ask @cus about &lt;b&gt;fuel&lt;/b&gt;") ||
			!strings.Contains(m.Text, issue.WebURL+"#note_"+store.IDString(note.ID)) {
			t.Fatalf("note mail:\n%s\n%s", m.Text, m.HTML)
		}
	}
	goldenMail(t, "issue_note", mails, "ann@example.com", mailKnown(e))

	// Close and reopen by the author: watchers, participants (the
	// commenter too), cus now takes part (mentioned).
	closed := []string{"wat", "gw", "glw", "gst", "par", "cus"}
	if _, _, err := ann.Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, closed...)
	if !strings.Contains(mails[0].Text, "was closed by User ann") || mails[0].Header.Get("In-Reply-To") != root {
		t.Fatalf("close mail: %v\n%s", mails[0].Header, mails[0].Text)
	}
	goldenMail(t, "issue_close", mails, "wat@example.com", mailKnown(e))
	if _, _, err := ann.Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("reopen")}); err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, closed...)
	if !strings.Contains(mails[0].Text, "was reopened by User ann") {
		t.Fatalf("reopen mail: %s", mails[0].Text)
	}
	goldenMail(t, "issue_reopen", mails, "wat@example.com", mailKnown(e))

	// An edit that changes no assignee mails nobody.
	if _, _, err := ann.Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{Title: gitlab.Ptr("Engine stalls")}); err != nil {
		t.Fatal(err)
	}
	// Reassign from dis (disabled: nothing) to men (mention level: the new
	// assignee gets it).
	if _, _, err := ann.Client.Issues.UpdateIssue(c.p.ID, issue.IID, &gitlab.UpdateIssueOptions{AssigneeIDs: &[]int64{c.u["men"].ID}}); err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, append(closed, "men")...)
	if !strings.Contains(mails[0].Text, "Assignee changed from @dis to @men") {
		t.Fatalf("reassign mail: %s", mails[0].Text)
	}
	goldenMail(t, "issue_reassign", mails, "men@example.com", mailKnown(e))
	if n := len(e.smtp.mails()); n != 0 {
		t.Fatalf("%d more mails", n)
	}

	// A confidential issue: not for the guest who watches.
	if _, _, err := ann.Client.Issues.CreateIssue(c.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Hush"), Confidential: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, "Rocket | Hush (#2)", "wat", "gw", "glw", "cus")

	// Once the actor's own level changes nothing: ann watches, acts, and
	// still gets nothing of her own doing.
	c.level(t, "ann", "project", "watch", nil)
	if _, _, err := ann.Client.Issues.CreateIssue(c.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Mine")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, "Rocket | Mine (#3)", "wat", "gw", "glw", "gst", "cus")
}
