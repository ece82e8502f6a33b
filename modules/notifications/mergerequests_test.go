package notifications_test

import (
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

// commitFile commits one file to branch through the API as c.
func commitFile(t *testing.T, c *gitlab.Client, project int64, branch, path, content string) {
	t.Helper()
	if _, _, err := c.Commits.CreateCommit(project, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr(branch),
		CommitMessage: gitlab.Ptr("add " + path), Actions: []*gitlab.CommitActionOptions{{
			Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(path), Content: gitlab.Ptr(content)}}}); err != nil {
		t.Fatal(err)
	}
}

func TestMergeRequestRecipients(t *testing.T) {
	t.Parallel()
	e := start(t)
	c := &cast{e: e, u: map[string]*fennectest.User{}, byEmail: map[string]string{}}
	var err error
	for _, name := range []string{"mia", "wal", "cm", "pm", "asg", "pub"} {
		u := e.CreateUser(t, name)
		c.u[name], c.byEmail[u.Email] = u, name
	}
	mia := c.u["mia"]
	c.p = e.project(t, mia.Client, "Shop", "public")
	for _, name := range []string{"wal", "cm", "pm", "asg"} {
		e.member(t, c.p, c.u[name], gitlab.DeveloperPermissions)
	}
	c.level(t, "wal", "project", "watch", nil)
	c.level(t, "cm", "project", "custom", map[string]bool{"merge_merge_request": true, "new_issue": true})
	c.level(t, "pub", "project", "watch", nil) // not a member: the project is public
	commitFile(t, mia.Client, c.p.ID, "master", "README.md", "shop\n")
	if _, _, err := mia.Client.Branches.CreateBranch(c.p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("cart"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	commitFile(t, mia.Client, c.p.ID, "cart", "cart.txt", "cart\n")

	mr, _, err := mia.Client.MergeRequests.CreateMergeRequest(c.p.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Add cart"),
		SourceBranch: gitlab.Ptr("cart"), TargetBranch: gitlab.Ptr("master"), AssigneeID: gitlab.Ptr(c.u["asg"].ID)})
	if err != nil {
		t.Fatal(err)
	}
	subject := "Shop | Add cart (!1)"
	root := "<merge_request_" + store.IDString(mr.ID) + "@127.0.0.1>"
	mails := c.expect(t, subject, "wal", "asg", "pub")
	if mails[0].Header.Get("Message-ID") != root || mails[0].Header.Get("X-GitLab-MergeRequest-ID") != store.IDString(mr.ID) ||
		!strings.Contains(mails[0].Text, mr.WebURL) {
		t.Fatalf("new merge request mail: %v\n%s", mails[0].Header, mails[0].Text)
	}
	goldenMail(t, "merge_request_new", mails, "wal@example.com", mailKnown(e))
	state := func(event string) {
		t.Helper()
		if _, _, err := mia.Client.MergeRequests.UpdateMergeRequest(c.p.ID, mr.IID, &gitlab.UpdateMergeRequestOptions{StateEvent: gitlab.Ptr(event)}); err != nil {
			t.Fatal(err)
		}
	}
	state("close")
	mails = c.expect(t, "Re: "+subject, "wal", "asg", "pub")
	if mails[0].Header.Get("In-Reply-To") != root || !strings.Contains(mails[0].Text, "Merge request !1 was closed by User mia") {
		t.Fatalf("close mail: %v\n%s", mails[0].Header, mails[0].Text)
	}
	goldenMail(t, "merge_request_close", mails, "wal@example.com", mailKnown(e))
	state("reopen")
	c.expect(t, "Re: "+subject, "wal", "asg", "pub")

	// Reassigned: the old and the new assignee and the watchers.
	if _, _, err := mia.Client.MergeRequests.UpdateMergeRequest(c.p.ID, mr.IID, &gitlab.UpdateMergeRequestOptions{AssigneeID: gitlab.Ptr(c.u["pm"].ID)}); err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, "wal", "asg", "pm", "pub")
	if !strings.Contains(mails[0].Text, "Assignee changed from @asg to @pm") {
		t.Fatalf("reassign mail: %s", mails[0].Text)
	}
	goldenMail(t, "merge_request_reassign", mails, "pm@example.com", mailKnown(e))

	// A comment by the new assignee: the author, watchers.
	if _, _, err := c.u["pm"].Client.Notes.CreateMergeRequestNote(c.p.ID, mr.IID, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr("LGTM")}); err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, "mia", "wal", "pub")
	goldenMail(t, "merge_request_note", mails, "mia@example.com", mailKnown(e))

	// Merged: watchers, the assignee, and the custom level that chose
	// merge_merge_request.
	if _, _, err := mia.Client.MergeRequests.AcceptMergeRequest(c.p.ID, mr.IID, nil); err != nil {
		t.Fatal(err)
	}
	mails = c.expect(t, "Re: "+subject, "wal", "pm", "cm", "pub")
	if !strings.Contains(mails[0].Text, "was merged by User mia") {
		t.Fatalf("merge mail: %s", mails[0].Text)
	}
	goldenMail(t, "merge_request_merge", mails, "wal@example.com", mailKnown(e))
	if n := len(e.smtp.mails()); n != 0 {
		t.Fatalf("%d more mails: %v", n, e.smtp.mails()[0].Subject)
	}
}
