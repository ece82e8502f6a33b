package issues_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestIssuePagesAwards: a Reporter toggles award emoji on an issue and on
// its comment from the page, each state the API's (client-go's
// AwardEmoji); the author is shown the votes but offered none on her own
// issue; an anonymous reader of a public issue sees the awards and no
// form; an unknown name, a forged token and an archived project change
// nothing.
func TestIssuePagesAwards(t *testing.T) {
	t.Parallel()
	s := start(t)
	ann, rep := s.CreateUser(t, "ann"), s.CreateUser(t, "rep")
	p := stocktest.NewProject(t, s.Client, "votes", "public")
	stocktest.AddMember(t, s.Client, p.ID, ann.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	if _, _, err := ann.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Slow start")}); err != nil {
		t.Fatal(err)
	}
	note, _, err := ann.Client.Notes.CreateIssueNote(p.ID, 1, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Measured: 3 s")})
	if err != nil {
		t.Fatal(err)
	}
	noteID := strconv.FormatInt(note.ID, 10)
	const base = "/root/votes/-/issues/1"
	apiAwards := func(what string, noteID int64, want ...string) {
		t.Helper()
		var list []*gitlab.AwardEmoji
		var err error
		if noteID == 0 {
			list, _, err = s.Client.AwardEmoji.ListIssueAwardEmoji(p.ID, 1, nil)
		} else {
			list, _, err = s.Client.AwardEmoji.ListIssuesAwardEmojiOnNote(p.ID, 1, noteID, nil)
		}
		var got []string
		for _, a := range list {
			got = append(got, a.Name+" by "+a.User.Username)
		}
		if err != nil || strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Fatalf("%s: the API's awards: %v %q, want %q", what, err, got, want)
		}
	}
	button := func(name, glyph string, pressed bool, who string, count int) string {
		b := `<button type="submit" name="name" value="` + name + `" class="award" aria-pressed="` + strconv.FormatBool(pressed) + `"`
		if who != "" {
			b += ` title="` + who + `"`
		}
		b += `><span aria-hidden="true">` + glyph + `</span><span class="sr-only">` + name + `</span>`
		if count > 0 {
			b += " " + strconv.Itoa(count)
		}
		return b + `</button>`
	}

	r := s.SignedIn(t, "rep", rep.Password)
	page := r.Get(t, base)
	wantPage(t, "no awards", page, 200, `<form method="post" action="`+base+`/award_emoji" class="awards" id="awards">`,
		button("thumbsup", "👍", false, "", 0), button("thumbsdown", "👎", false, "", 0), `<input type="hidden" name="note_id" value="`+noteID+`">`)
	token := page.CSRF()
	post := func(what string, form url.Values, anchor string) {
		t.Helper()
		form.Set("authenticity_token", token)
		r.Post(t, base+"/award_emoji", form).WantRedirect(t, what, http.StatusSeeOther, base+anchor)
	}

	// A thumbs up and a heart on the issue, a thumbs down on the comment.
	post("thumbs up", url.Values{"name": {"thumbsup"}}, "#awards")
	post("heart", url.Values{"name": {"heart"}}, "#awards")
	post("comment's thumbs down", url.Values{"name": {"thumbsdown"}, "note_id": {noteID}}, "#note_"+noteID)
	apiAwards("given", 0, "thumbsup by rep", "heart by rep")
	apiAwards("given on the comment", note.ID, "thumbsdown by rep")
	page = r.Get(t, base)
	wantPage(t, "given", page, 200, button("thumbsup", "👍", true, "User rep", 1), button("thumbsdown", "👎", false, "", 0),
		button("heart", "❤️", true, "User rep", 1), button("thumbsdown", "👎", true, "User rep", 1))
	api, _, err := s.Client.Issues.GetIssue(p.ID, 1)
	if err != nil || api.Upvotes != 1 || api.Downvotes != 0 {
		t.Fatalf("the API's votes: %v %+v", err, api)
	}

	// The author sees the votes of her issue and may not cast one; she may
	// give another emoji.
	a := s.SignedIn(t, "ann", ann.Password)
	ap := a.Get(t, base)
	wantPage(t, "author", ap, 200, `<span class="award" title="User rep"><span aria-hidden="true">👍</span><span class="sr-only">thumbsup</span> 1</span>`,
		button("heart", "❤️", false, "User rep", 1))
	wantNot(t, "author", ap, `value="thumbsup"`)

	// An anonymous reader of the public issue sees them, with no form.
	anon := s.NewBrowser(t).Get(t, base)
	wantPage(t, "anonymous", anon, 200, `<div class="awards" id="awards">`,
		`<span class="award" title="User rep"><span aria-hidden="true">❤️</span><span class="sr-only">heart</span> 1</span>`)
	wantNot(t, "anonymous", anon, `/award_emoji`)

	// Taken back, each.
	post("thumbs up again", url.Values{"name": {"thumbsup"}}, "#awards")
	post("comment's thumbs down again", url.Values{"name": {"thumbsdown"}, "note_id": {noteID}}, "#note_"+noteID)
	apiAwards("taken back", 0, "heart by rep")
	apiAwards("taken back on the comment", note.ID)
	wantPage(t, "taken back", r.Get(t, base), 200, button("thumbsup", "👍", false, "", 0), button("heart", "❤️", true, "User rep", 1))

	// Refused, nothing changed: names the pages do not offer, a forged
	// token, a comment of nothing.
	for _, name := range []string{"<img src=x onerror=alert(1)>", "", "heart_eyes", "../thumbsup", strings.Repeat("x", 5000)} {
		got := r.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {name}})
		wantPage(t, "name "+name, got, 400, `Unknown emoji`)
		wantNot(t, "name "+name, got, "<img src=x")
	}
	wantPage(t, "forged", r.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {strings.Repeat("ab", 32)}, "name": {"rocket"}}), 403, `Form expired`)
	wantPage(t, "no such comment", r.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"rocket"}, "note_id": {"999999"}}), 404)
	apiAwards("after the refusals", 0, "heart by rep")

	// An archived project takes no award.
	if _, _, err := s.Client.Projects.ArchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	archived := r.Get(t, base)
	wantNot(t, "archived", archived, `/award_emoji`)
	wantPage(t, "archived award", r.Post(t, base+"/award_emoji", url.Values{"authenticity_token": {token}, "name": {"rocket"}}), 403)
	apiAwards("archived", 0, "heart by rep")
}
