package mergerequests_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Threads on a merge request: line comments on its diff (DiffNote, with
// their position, refused where no line of the diff is), replies on the
// same line, resolving notes and threads (who may, and what it shows), and
// a project that merges only when every thread is resolved.
func TestMergeRequestThreads(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "threads")
	start := strings.Fields(w.git("rev-parse", "master"))[0]
	head := w.commit("feature edits", map[string]string{"a.txt": "one\nTWO\nthree\nfour\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	mr := openMR(t, alice.Client, p.ID, "feature", "master", "Threads")
	bob, carol := s.CreateUser(t, "bob"), s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	if _, _, err := alice.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{OnlyAllowMergeIfAllDiscussionsAreResolved: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	base := mrPath(p.ID, mr.IID, "/discussions")

	pos := func(oldLine, newLine int64) *gitlab.PositionOptions {
		o := &gitlab.PositionOptions{BaseSHA: gitlab.Ptr(start), StartSHA: gitlab.Ptr(start), HeadSHA: gitlab.Ptr(head),
			PositionType: gitlab.Ptr("text"), NewPath: gitlab.Ptr("a.txt"), OldPath: gitlab.Ptr("a.txt")}
		if oldLine > 0 {
			o.OldLine = gitlab.Ptr(oldLine)
		}
		if newLine > 0 {
			o.NewLine = gitlab.Ptr(newLine)
		}
		return o
	}
	d, resp, err := carol.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{
		Body: gitlab.Ptr("Why upper case?"), Position: pos(0, 2)})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("line comment: %v", err)
	}
	n := d.Notes[0]
	if d.IndividualNote || len(d.Notes) != 1 || n.Type != gitlab.DiffNote || !n.Resolvable || n.Resolved || n.Position == nil ||
		n.Position.NewLine != 2 || n.Position.OldLine != 0 || n.Position.NewPath != "a.txt" || n.Position.HeadSHA != head ||
		n.Position.StartSHA != start || n.Position.BaseSHA != start || n.Position.PositionType != "text" || n.NoteableIID != mr.IID {
		t.Fatalf("line comment %+v %+v", d, n.Position)
	}
	// A removed line (old only) and an unchanged one (both) are lines of
	// the diff too.
	for _, o := range []*gitlab.PositionOptions{pos(2, 0), pos(1, 1)} {
		if _, _, err := bob.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{
			Body: gitlab.Ptr("here"), Position: o}); err != nil {
			t.Fatalf("line comment at %v/%v: %v", o.OldLine, o.NewLine, err)
		}
	}
	// The body's JSON escapes ">" (as Rails' does).
	const badLine = `{"message":"400 Bad request - Note {:line_code=\u003e[\"can't be blank\", \"must be a valid line code\"]}"}`
	position := func(change func(m map[string]any)) map[string]any {
		m := map[string]any{"base_sha": start, "start_sha": start, "head_sha": head, "position_type": "text",
			"new_path": "a.txt", "old_path": "a.txt", "new_line": 2}
		change(m)
		return map[string]any{"body": "x", "position": m}
	}
	for what, tc := range map[string]struct {
		body map[string]any
		want string
	}{
		"an unchanged line as added": {position(func(m map[string]any) { m["new_line"] = 3 }), badLine},
		"a line past the diff":       {position(func(m map[string]any) { m["new_line"] = 40 }), badLine},
		"another file":               {position(func(m map[string]any) { m["new_path"], m["old_path"] = "b.txt", "b.txt" }), badLine},
		"an unknown head":            {position(func(m map[string]any) { m["head_sha"] = strings.Repeat("1", 40) }), badLine},
		"no line":                    {position(func(m map[string]any) { delete(m, "new_line") }), badLine},
		"no base_sha":                {position(func(m map[string]any) { delete(m, "base_sha") }), `{"error":"position[base_sha] is missing"}`},
		"an image":                   {position(func(m map[string]any) { m["position_type"] = "image" }), `{"error":"position[position_type] does not have a valid value"}`},
	} {
		r := s.Call(t, bob.Token, http.MethodPost, base, tc.body)
		if r.Status != 400 || strings.TrimSpace(string(r.Body)) != tc.want {
			t.Errorf("%s: %d %s", what, r.Status, r.Body)
		}
	}

	// A reply to a line comment is on the same line.
	reply, _, err := alice.Client.Discussions.AddMergeRequestDiscussionNote(p.ID, mr.IID, d.ID, &gitlab.AddMergeRequestDiscussionNoteOptions{
		Body: gitlab.Ptr("It shouts")})
	if err != nil || reply.Type != gitlab.DiffNote || reply.Position == nil || reply.Position.NewLine != 2 || !reply.Resolvable {
		t.Fatalf("reply %+v %v", reply, err)
	}
	// A plain note is no thread to resolve; a started discussion is.
	if _, _, err := carol.Client.Notes.CreateMergeRequestNote(p.ID, mr.IID, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr("LGTM")}); err != nil {
		t.Fatal(err)
	}
	general, _, err := carol.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{Body: gitlab.Ptr("And the docs?")})
	if err != nil || general.Notes[0].Type != gitlab.DiscussionNote || !general.Notes[0].Resolvable {
		t.Fatalf("general thread %+v %v", general, err)
	}

	// Unresolved threads keep the merge request from merging.
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, mr.IID, "/merge"), nil).Expect(t, 405, "")

	// Resolving: the note's author, the merge request's author and
	// Developers may; a Reporter may not resolve another's note.
	r := s.Call(t, carol.Token, http.MethodPut, base+"/"+d.ID+"/notes/"+store.IDString(reply.ID), map[string]any{"resolved": true})
	if r.Status != 403 {
		t.Fatalf("a reporter resolves another's note: %d %s", r.Status, r.Body)
	}
	resolved, _, err := bob.Client.Discussions.UpdateMergeRequestDiscussionNote(p.ID, mr.IID, d.ID, reply.ID,
		&gitlab.UpdateMergeRequestDiscussionNoteOptions{Resolved: gitlab.Ptr(true)})
	if err != nil || !resolved.Resolved || resolved.ResolvedBy.Username != "bob" || resolved.ResolvedAt == nil || resolved.Body != "It shouts" {
		t.Fatalf("resolve a note %+v %v", resolved, err)
	}
	got, _, _ := alice.Client.Discussions.GetMergeRequestDiscussion(p.ID, mr.IID, d.ID)
	if got.Notes[0].Resolved || !got.Notes[1].Resolved {
		t.Fatalf("one note resolved %+v %+v", got.Notes[0], got.Notes[1])
	}
	// The whole thread, by the merge request's author.
	whole, _, err := alice.Client.Discussions.ResolveMergeRequestDiscussion(p.ID, mr.IID, d.ID,
		&gitlab.ResolveMergeRequestDiscussionOptions{Resolved: gitlab.Ptr(true)})
	if err != nil || len(whole.Notes) != 2 || !whole.Notes[0].Resolved || whole.Notes[0].ResolvedBy.Username != "alice" ||
		whole.Notes[1].ResolvedBy.Username != "bob" {
		t.Fatalf("resolve a thread %+v %v", whole, err)
	}
	// And back.
	whole, _, err = bob.Client.Discussions.ResolveMergeRequestDiscussion(p.ID, mr.IID, d.ID,
		&gitlab.ResolveMergeRequestDiscussionOptions{Resolved: gitlab.Ptr(false)})
	if err != nil || whole.Notes[0].Resolved || whole.Notes[1].Resolved || whole.Notes[0].ResolvedAt != nil {
		t.Fatalf("unresolve a thread %+v %v", whole, err)
	}
	r = s.Call(t, bob.Token, http.MethodPut, base+"/"+d.ID, map[string]any{})
	if r.Status != 400 || strings.TrimSpace(string(r.Body)) != `{"error":"resolved is missing"}` {
		t.Fatalf("resolve without resolved: %d %s", r.Status, r.Body)
	}
	// Resolve every thread: the merge goes through.
	list, _, err := alice.Client.Discussions.ListMergeRequestDiscussions(p.ID, mr.IID, nil)
	if err != nil {
		t.Fatal(err)
	}
	threads := 0
	for _, th := range list {
		if th.IndividualNote {
			if th.Notes[0].Resolvable {
				t.Fatalf("an individual note is resolvable: %+v", th.Notes[0])
			}
			continue
		}
		threads++
		if _, _, err := bob.Client.Discussions.ResolveMergeRequestDiscussion(p.ID, mr.IID, th.ID,
			&gitlab.ResolveMergeRequestDiscussionOptions{Resolved: gitlab.Ptr(true)}); err != nil {
			t.Fatal(err)
		}
	}
	if threads != 4 {
		t.Fatalf("%d threads, want 4", threads)
	}
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, mr.IID, "/merge"), nil).Expect(t, 200, "")
}
