package repository_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// Threads on a commit are its comments: a comment made through the 9.x
// comments API is a thread by itself (with an id that stays the same), a
// thread may start as a line comment (GitLab's position, kept as the
// comment's path, line and line_type), replies join their thread, and the
// comments API lists every note.
func TestCommitDiscussions(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	pid := w.project.ID
	parent := gitCmd(t, w.work, "rev-parse", "HEAD^")
	hex40 := regexp.MustCompile(`^[0-9a-f]{40}$`)

	if _, _, err := c.Commits.PostCommitComment(pid, w.head, &gitlab.PostCommitCommentOptions{Note: gitlab.Ptr("old style")}); err != nil {
		t.Fatal(err)
	}
	list, resp, err := c.Discussions.ListCommitDiscussions(pid, w.head, nil)
	if err != nil || len(list) != 1 || !list[0].IndividualNote || !hex40.MatchString(list[0].ID) || list[0].Notes[0].Body != "old style" ||
		list[0].Notes[0].Type != "" || list[0].Notes[0].NoteableType != "Commit" || list[0].Notes[0].CommitID != w.head ||
		resp.Header.Get("X-Total") != "1" {
		t.Fatalf("threads %+v %v", list, err)
	}
	legacy := list[0].ID
	if again, _, _ := c.Discussions.ListCommitDiscussions(pid, w.head, nil); again[0].ID != legacy {
		t.Fatalf("the derived id changed: %s then %s", legacy, again[0].ID)
	}

	d, resp, err := c.Discussions.CreateCommitDiscussion(pid, w.head, &gitlab.CreateCommitDiscussionOptions{Body: gitlab.Ptr("Why?")})
	if err != nil || resp.StatusCode != 201 || d.IndividualNote || d.Notes[0].Type != gitlab.DiscussionNote || d.ID == legacy {
		t.Fatalf("thread %+v %v", d, err)
	}
	reply, _, err := c.Discussions.AddCommitDiscussionNote(pid, w.head, d.ID, &gitlab.AddCommitDiscussionNoteOptions{Body: gitlab.Ptr("Because")})
	if err != nil || reply.Type != gitlab.DiscussionNote || reply.Body != "Because" {
		t.Fatalf("reply %+v %v", reply, err)
	}
	line, _, err := c.Discussions.CreateCommitDiscussion(pid, w.head, &gitlab.CreateCommitDiscussionOptions{Body: gitlab.Ptr("A new line"),
		Position: &gitlab.NotePosition{BaseSHA: parent, StartSHA: parent, HeadSHA: w.head, PositionType: "text", NewPath: "README.md", NewLine: 2}})
	if err != nil || line.Notes[0].Type != gitlab.DiffNote || line.Notes[0].Position == nil || line.Notes[0].Position.NewLine != 2 ||
		line.Notes[0].Position.OldPath != "README.md" {
		t.Fatalf("line comment %+v %v", line, err)
	}
	onLine, _, err := c.Discussions.AddCommitDiscussionNote(pid, w.head, line.ID, &gitlab.AddCommitDiscussionNoteOptions{Body: gitlab.Ptr("Indeed")})
	if err != nil || onLine.Type != gitlab.DiffNote || onLine.Position == nil || onLine.Position.NewLine != 2 {
		t.Fatalf("reply on the line %+v %v", onLine, err)
	}
	// A reply to a comment by itself makes a thread of it, under the id it
	// was shown with.
	if _, _, err := c.Discussions.AddCommitDiscussionNote(pid, w.head, legacy, &gitlab.AddCommitDiscussionNoteOptions{Body: gitlab.Ptr("me too")}); err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Discussions.GetCommitDiscussion(pid, w.head, legacy)
	if err != nil || got.IndividualNote || len(got.Notes) != 2 || got.Notes[0].Type != gitlab.DiscussionNote || got.Notes[1].Body != "me too" {
		t.Fatalf("the old comment's thread %+v %v", got, err)
	}

	// The comments API lists every note, line comments with their line.
	comments, _, err := c.Commits.GetCommitComments(pid, w.head, nil)
	if err != nil || len(comments) != 6 {
		t.Fatalf("comments %+v %v", comments, err)
	}
	if comments[3].Note != "A new line" || comments[3].Path != "README.md" || comments[3].Line != 2 || comments[3].LineType != "new" {
		t.Fatalf("the line comment as a commit comment %+v", comments[3])
	}

	post := func(path, body string, token string) (int, string) {
		t.Helper()
		r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(pid)+"/repository/commits/"+w.head+path, strings.NewReader(body), nil,
			"PRIVATE-TOKEN", token, "Content-Type", "application/json")
		return r.StatusCode, strings.TrimSpace(string(raw))
	}
	const badLine = `{"message":"400 Bad request - Note {:line_code=\u003e[\"can't be blank\", \"must be a valid line code\"]}"}`
	for what, body := range map[string]string{
		"a line past the file": `{"body":"x","position":{"base_sha":"` + parent + `","start_sha":"` + parent + `","head_sha":"` + w.head +
			`","position_type":"text","new_path":"README.md","new_line":3}}`,
		"another commit": `{"body":"x","position":{"base_sha":"` + parent + `","start_sha":"` + parent + `","head_sha":"` + parent +
			`","position_type":"text","new_path":"README.md","new_line":1}}`,
		"a missing file": `{"body":"x","position":{"base_sha":"` + parent + `","start_sha":"` + parent + `","head_sha":"` + w.head +
			`","position_type":"text","new_path":"nope.md","new_line":1}}`,
	} {
		if code, got := post("/discussions", body, w.s.RootToken); code != 400 || got != badLine {
			t.Errorf("%s: %d %s", what, code, got)
		}
	}
	if code, got := post("/discussions", `{"body":" "}`, w.s.RootToken); code != 400 || got != `{"error":"body is missing"}` {
		t.Errorf("a blank thread: %d %s", code, got)
	}
	if code, got := post("/discussions/"+strings.Repeat("a", 40)+"/notes", `{"body":"x"}`, w.s.RootToken); code != 404 ||
		got != `{"message":"404 Discussion Not Found"}` {
		t.Errorf("a reply to no thread: %d %s", code, got)
	}

	// Edits and deletes: the author or a Master.
	other := w.s.CreateUser(t, "other")
	if _, resp, err := other.Client.Discussions.UpdateCommitDiscussionNote(pid, w.head, d.ID, reply.ID,
		&gitlab.UpdateCommitDiscussionNoteOptions{Body: gitlab.Ptr("no")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("another user edits: %v", err)
	}
	edited, _, err := c.Discussions.UpdateCommitDiscussionNote(pid, w.head, d.ID, reply.ID, &gitlab.UpdateCommitDiscussionNoteOptions{Body: gitlab.Ptr("Because.")})
	if err != nil || edited.Body != "Because." || !edited.UpdatedAt.After(*edited.CreatedAt) {
		t.Fatalf("edit %+v %v", edited, err)
	}
	if _, err := c.Discussions.DeleteCommitDiscussionNote(pid, w.head, d.ID, reply.ID); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.Discussions.GetCommitDiscussion(pid, w.head, d.ID); len(got.Notes) != 1 {
		t.Fatalf("after the delete %+v", got)
	}
	// A note is found in its own thread only.
	if resp, err := c.Discussions.DeleteCommitDiscussionNote(pid, w.head, d.ID, onLine.ID); err == nil || resp.StatusCode != 404 {
		t.Fatalf("a note of another thread: %v", err)
	}
}
