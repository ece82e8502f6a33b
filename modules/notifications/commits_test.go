package notifications_test

import (
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestCommitCommentRecipients: a comment on a commit (new_note) goes to
// the commit's author (the user with the author's address), the
// mentioned, earlier commenters and the watchers who may read the code;
// not to a watching guest of the private project, nor the actor. The
// mails answer the commit's thread.
func TestCommitCommentRecipients(t *testing.T) {
	t.Parallel()
	e := start(t)
	c := newCast(t, e, "private")
	commit, _, err := c.u["par"].Client.Commits.CreateCommit(c.p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("Tune the engine\n\nLonger text."), Actions: []*gitlab.CommitActionOptions{{
			Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("engine.txt"), Content: gitlab.Ptr("one\ntwo\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if commit.AuthorEmail != c.u["par"].Email {
		t.Fatalf("commit author %q, want par's address", commit.AuthorEmail)
	}
	e.settle(t)
	subject := "Re: Rocket | Tune the engine (" + commit.ID[:8] + ")"
	thread := "<commit_" + commit.ID + "@127.0.0.1>"

	_, _, err = c.u["ann"].Client.Commits.PostCommitComment(c.p.ID, commit.ID, &gitlab.PostCommitCommentOptions{
		Note: gitlab.Ptr("Ask @men about <b>line 2</b>"), Path: gitlab.Ptr("engine.txt"), Line: gitlab.Ptr(int64(2)), LineType: gitlab.Ptr("new")})
	if err != nil {
		t.Fatal(err)
	}
	mails := c.expect(t, subject, "par", "men", "wat", "glw", "gw")
	for _, m := range mails {
		if m.Header.Get("In-Reply-To") != thread || m.Header.Get("References") != thread ||
			m.Header.Get("X-GitLab-Commit-ID") != commit.ID || m.Header.Get("X-GitLab-Project") != "Rocket" {
			t.Fatalf("commit comment headers: %v", m.Header)
		}
		link := e.URL + "/crew/rocket/commit/" + commit.ID + "#note_"
		if !strings.Contains(m.Text, "Ask @men about <b>line 2</b>") || !strings.Contains(m.Text, "engine.txt, line 2") ||
			!strings.Contains(m.Text, link) || !strings.Contains(m.HTML, "Ask @men about &lt;b&gt;line 2&lt;/b&gt;") {
			t.Fatalf("commit comment mail:\n%s\n%s", m.Text, m.HTML)
		}
	}
	goldenMail(t, "commit_note", mails, "par@example.com", mailKnown(e, commit.ID[:8], "<short-sha>"))

	// A second comment, by a watcher: the first commenter takes part now;
	// men, at the mention level and not mentioned, gets nothing.
	if _, _, err := c.u["wat"].Client.Commits.PostCommitComment(c.p.ID, commit.ID, &gitlab.PostCommitCommentOptions{
		Note: gitlab.Ptr("Done.")}); err != nil {
		t.Fatal(err)
	}
	c.expect(t, subject, "ann", "par", "glw", "gw")
}
