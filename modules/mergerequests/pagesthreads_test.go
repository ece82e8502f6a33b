package mergerequests_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestMergeRequestPagesResolveThreads: a Developer resolves a thread from
// the Overview (collapsed, "Resolved by", "1 of 1 thread resolved") and
// unresolves it, the API seeing each state; a Reporter who is neither the
// thread's nor the merge request's author is offered no form and refused
// when posting one, and a forged token changes nothing.
func TestMergeRequestPagesResolveThreads(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "threads", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, "topic", "change", map[string]string{"a.txt": "b\n"})
	mr := openMR(t, alice.Client, p.ID, "topic", "master", "Topic")
	bob, carol := s.CreateUser(t, "bob"), s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	started, _, err := alice.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID,
		&gitlab.CreateMergeRequestDiscussionOptions{Body: gitlab.Ptr("Should this be <b>bold</b>?")})
	if err != nil {
		t.Fatal(err)
	}
	id := started.ID
	const base = "/alice/threads/-/merge_requests/1"
	thread := `<li class="thread box" id="discussion_` + id + `">`
	apiResolved := func(what string, want bool) {
		t.Helper()
		d, _, err := alice.Client.Discussions.GetMergeRequestDiscussion(p.ID, mr.IID, id)
		if err != nil || len(d.Notes) != 1 || !d.Notes[0].Resolvable || d.Notes[0].Resolved != want {
			t.Fatalf("%s: the API's thread: %v %+v", what, err, d)
		}
	}

	b := s.SignedIn(t, "bob", bob.Password)
	page := b.Get(t, base)
	wantPage(t, "unresolved", page, 200, thread, `<p id="threads-resolved">0 of 1 thread resolved</p>`,
		`<input type="hidden" name="resolved" value="true">`, `>Resolve thread</button>`, `<p>Should this be <b>bold</b>?</p>`)
	wantNot(t, "unresolved", page, `Resolved by`)

	// A forged or missing token resolves nothing.
	form := formFields(t, page, "resolve-form-"+id)
	for what, token := range map[string]string{"missing": "", "forged": strings.Repeat("ab", 32)} {
		forged := url.Values{"authenticity_token": {token}, "discussion_id": {id}, "resolved": {"true"}}
		wantPage(t, what+" token", b.Post(t, base+"/resolve", forged), 403, `Form expired`)
	}
	apiResolved("after the forged forms", false)

	// The Developer resolves it: back at the thread, collapsed.
	b.Post(t, base+"/resolve", form).WantRedirect(t, "resolve", http.StatusSeeOther, base+"#discussion_"+id)
	apiResolved("resolved", true)
	page = b.Get(t, base)
	wantPage(t, "resolved", page, 200, `<li class="thread box resolved" id="discussion_`+id+`">`,
		`<details class="resolved-thread"><summary>Resolved by <bdi>User bob</bdi> · 1 comment</summary>`,
		`<p id="threads-resolved">1 of 1 thread resolved</p>`, `<input type="hidden" name="resolved" value="false">`, `>Unresolve thread</button>`)

	// The Reporter sees it resolved, with no form; one posted anyway is
	// the service's refusal, and the thread stays resolved.
	c := s.SignedIn(t, "carol", carol.Password)
	cp := c.Get(t, base)
	wantPage(t, "reporter", cp, 200, `Resolved by <bdi>User bob</bdi>`, `1 of 1 thread resolved`)
	wantNot(t, "reporter", cp, `resolve-form-`, `Unresolve thread`)
	refused := url.Values{"authenticity_token": {cp.CSRF()}, "discussion_id": {id}, "resolved": {"false"}}
	wantPage(t, "reporter's unresolve", c.Post(t, base+"/resolve", refused), 403, `You are not allowed to do this.`)
	apiResolved("after the reporter", true)

	// Malformed forms: no such thread, no state.
	wantPage(t, "unknown thread", b.Post(t, base+"/resolve",
		url.Values{"authenticity_token": {page.CSRF()}, "discussion_id": {strings.Repeat("0", 40)}, "resolved": {"false"}}), 404)
	wantPage(t, "no state", b.Post(t, base+"/resolve",
		url.Values{"authenticity_token": {page.CSRF()}, "discussion_id": {id}, "resolved": {"maybe"}}), 400)
	apiResolved("after the malformed forms", true)

	// Unresolved again from the page.
	b.Post(t, base+"/resolve", formFields(t, page, "resolve-form-"+id)).WantRedirect(t, "unresolve", http.StatusSeeOther, base+"#discussion_"+id)
	apiResolved("unresolved", false)
	wantPage(t, "unresolved again", b.Get(t, base), 200, thread, `0 of 1 thread resolved`, `>Resolve thread</button>`)

	// A thread started from the comment form is one the API sees, and
	// can be resolved; a plain comment is not.
	page = b.Get(t, base)
	wantPage(t, "comment form", page, 200, `<button type="submit" name="thread" value="1" class="secondary">Start a thread</button>`)
	for _, thread := range []bool{true, false} {
		form := url.Values{"authenticity_token": {page.CSRF()}, "note": {"Started: " + strconv.FormatBool(thread)}}
		if thread {
			form.Set("thread", "1")
		}
		posted := b.Post(t, base+"/notes", form)
		list, _, err := alice.Client.Discussions.ListMergeRequestDiscussions(p.ID, mr.IID, nil)
		if err != nil {
			t.Fatal(err)
		}
		last := list[len(list)-1]
		if n := last.Notes[0]; n.Body != form.Get("note") || last.IndividualNote == thread || n.Resolvable != thread ||
			posted.StatusCode != http.StatusSeeOther || posted.Header.Get("Location") != base+"#note_"+strconv.FormatInt(n.ID, 10) {
			t.Fatalf("started %v: %d %q %+v %+v", thread, posted.StatusCode, posted.Header.Get("Location"), last, n)
		}
	}
	wantPage(t, "two threads", b.Get(t, base), 200, `0 of 2 threads resolved`)
}

// TestMergeRequestPagesAwards: award emoji toggled from the Overview on
// the merge request and on a comment, each state the API's; the author is
// not offered a vote on their own merge request; a name the pages do not
// offer, and a forged token, change nothing.
func TestMergeRequestPagesAwards(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "awards", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, "topic", "change", map[string]string{"a.txt": "b\n"})
	mr := openMR(t, alice.Client, p.ID, "topic", "master", "Topic")
	bob := s.CreateUser(t, "bob")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	note, _, err := alice.Client.Notes.CreateMergeRequestNote(p.ID, mr.IID, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr("Ready")})
	if err != nil {
		t.Fatal(err)
	}
	noteID := strconv.FormatInt(note.ID, 10)
	const base = "/alice/awards/-/merge_requests/1"
	apiAwards := func(what string, noteID int64, want ...string) {
		t.Helper()
		var list []*gitlab.AwardEmoji
		var err error
		if noteID == 0 {
			list, _, err = alice.Client.AwardEmoji.ListMergeRequestAwardEmoji(p.ID, mr.IID, nil)
		} else {
			list, _, err = alice.Client.AwardEmoji.ListMergeRequestAwardEmojiOnNote(p.ID, mr.IID, noteID, nil)
		}
		var got []string
		for _, a := range list {
			got = append(got, a.Name+" by "+a.User.Username)
		}
		if err != nil || strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Fatalf("%s: the API's awards: %v %q, want %q", what, err, got, want)
		}
	}

	b := s.SignedIn(t, "bob", bob.Password)
	page := b.Get(t, base)
	wantPage(t, "no awards", page, 200, `<form method="post" action="`+base+`/award_emoji" class="awards" id="awards">`,
		`<button type="submit" name="name" value="thumbsup" class="award" aria-pressed="false"><span aria-hidden="true">👍</span><span class="sr-only">thumbsup</span></button>`,
		`<input type="hidden" name="note_id" value="`+noteID+`">`)
	token := page.CSRF()

	// Bob gives a thumbs up to the merge request, then takes it back.
	b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"thumbsup"}}).
		WantRedirect(t, "thumbs up", http.StatusSeeOther, base+"#awards")
	apiAwards("thumbs up", 0, "thumbsup by bob")
	wantPage(t, "thumbs up", b.Get(t, base), 200,
		`<button type="submit" name="name" value="thumbsup" class="award" aria-pressed="true" title="User bob"><span aria-hidden="true">👍</span><span class="sr-only">thumbsup</span> 1</button>`)
	a := s.SignedIn(t, "alice", alice.Password)
	ap := a.Get(t, base)
	// The author sees the vote but may not vote on her own merge request.
	wantPage(t, "author", ap, 200, `<span class="award" title="User bob"><span aria-hidden="true">👍</span><span class="sr-only">thumbsup</span> 1</span>`)
	wantNot(t, "author", ap, `value="thumbsup"`)
	b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"thumbsup"}}).
		WantRedirect(t, "thumbs up again", http.StatusSeeOther, base+"#awards")
	apiAwards("taken back", 0)

	// A comment's award, back at the comment.
	b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"tada"}, "note_id": {noteID}}).
		WantRedirect(t, "tada", http.StatusSeeOther, base+"#note_"+noteID)
	apiAwards("tada", note.ID, "tada by bob")
	wantPage(t, "tada", b.Get(t, base), 200,
		`<button type="submit" name="name" value="tada" class="award" aria-pressed="true" title="User bob"><span aria-hidden="true">🎉</span><span class="sr-only">tada</span> 1</button>`)

	// Refused, and nothing changes: a name the pages do not offer (the
	// API knows it, or not), a forged token, a note of nothing.
	for _, name := range []string{"<script>alert(1)</script>", "", "heart_eyes", strings.Repeat("x", 5000)} {
		r := b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {name}})
		wantPage(t, "name "+name, r, 400, `Unknown emoji`)
		wantNot(t, "name "+name, r, "<script>alert(1)")
	}
	wantPage(t, "forged", b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {strings.Repeat("ab", 32)}, "name": {"heart"}}), 403, `Form expired`)
	wantPage(t, "no such note", b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"heart"}, "note_id": {"999999"}}), 404)
	wantPage(t, "bad note", b.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"heart"}, "note_id": {"../1"}}), 404)
	apiAwards("after the refusals", 0)
	apiAwards("after the refusals", note.ID, "tada by bob")

	// An anonymous visitor of a private project gets no page and no award.
	anon := s.NewBrowser(t)
	if r := anon.Post(t, base+"/award_emoji", url.Values{"name": {"heart"}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("anonymous award: %d", r.StatusCode)
	}
	apiAwards("after the anonymous visitor", 0)
}
