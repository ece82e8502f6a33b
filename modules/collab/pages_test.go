package collab_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

func wantPage(t *testing.T, what string, p fennectest.Page, status int, fragments ...string) {
	t.Helper()
	p.Want(t, what, status, fragments...)
}

func wantNot(t *testing.T, what string, p fennectest.Page, fragments ...string) {
	t.Helper()
	p.WantNot(t, what, fragments...)
}

func wantRedirect(t *testing.T, what string, p fennectest.Page, status int, location string) {
	t.Helper()
	p.WantRedirect(t, what, status, location)
}

// pagesPending is the user's pending todos as the API lists them.
func pagesPending(t *testing.T, c *gitlab.Client) []*gitlab.Todo {
	t.Helper()
	list, _, err := c.Todos.ListTodos(&gitlab.ListTodosOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestTodoPages: a Developer's todos from a mention in a comment and an
// assignment are listed, each linking to its issue's page (the comment's
// anchor for the mention), with the pending count in the header; marking
// one done and then all through the forms is what the API sees; another
// user's todo is the 404 page; forms need their CSRF token; anonymous
// visitors are sent to sign in; hostile titles are escaped.
func TestTodoPages(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	dev := s.CreateUser(t, "dev")
	other := s.CreateUser(t, "other")
	p := stocktest.NewProject(t, s.Client, "work", "private")
	stocktest.AddMember(t, s.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, s.Client, p.ID, other.ID, gitlab.DeveloperPermissions)
	stocktest.NewIssue(t, s.Client, p.ID, "Talk <b>here</b>")
	note, _, err := s.Client.Notes.CreateIssueNote(p.ID, 1, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("@dev look <script>x</script>")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Yours"), AssigneeIDs: &[]int64{dev.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Theirs"), AssigneeIDs: &[]int64{other.ID}}); err != nil {
		t.Fatal(err)
	}
	// other's own todo (assigned by themselves gives none: mark one).
	if _, _, err := other.Client.Issues.CreateTodo(p.ID, 1); err != nil {
		t.Fatal(err)
	}
	theirs := pagesPending(t, other.Client)
	if len(theirs) == 0 {
		t.Fatal("other has no todo")
	}
	if got := pagesPending(t, dev.Client); len(got) != 2 {
		t.Fatalf("dev's todos: %d", len(got))
	}

	anon := s.NewBrowser(t)
	wantRedirect(t, "anonymous", anon.Get(t, "/dashboard/todos"), http.StatusFound, "/users/sign_in?return_to=%2Fdashboard%2Ftodos")
	wantNot(t, "anonymous header", anon.Get(t, "/explore/projects"), "To-dos")

	d := s.SignedIn(t, "dev", dev.Password)
	page := d.Get(t, "/dashboard/todos")
	anchor := "/root/work/-/issues/1#note_" + strconv.FormatInt(note.ID, 10)
	wantPage(t, "todos", page, 200, `<a href="/dashboard/todos">To-dos <span class="count">2</span></a>`,
		`<a href="/dashboard/todos" aria-current="page">To do</a>`, `2 pending to-dos`,
		`mentioned you on <a href="`+anchor+`">#1 <bdi>Talk &lt;b&gt;here&lt;/b&gt;</bdi></a>`,
		`assigned you <a href="/root/work/-/issues/2">#2 <bdi>Yours</bdi></a>`,
		`<bdi>@dev look &lt;script&gt;x&lt;/script&gt;</bdi>`, `in <a href="/root/work"><bdi>Administrator / work</bdi></a>`)
	wantNot(t, "todos", page, "<script>x", "Theirs")
	// The anchor is the comment's on the issue page.
	wantPage(t, "the note", d.Get(t, "/root/work/-/issues/1"), 200, `<li id="note_`+strconv.FormatInt(note.ID, 10)+`" class="note box">`)

	mine := pagesPending(t, dev.Client)
	one := strconv.FormatInt(mine[0].ID, 10)
	token := page.CSRF()
	// No token, a forged one, someone else's todo: nothing changes.
	wantPage(t, "no token", d.Post(t, "/dashboard/todos/"+one+"/mark_as_done", url.Values{}), 403, "Form expired")
	wantPage(t, "forged", d.Post(t, "/dashboard/todos/"+one+"/mark_as_done", url.Values{"authenticity_token": {strings.Repeat("ab", 32)}}), 403)
	wantPage(t, "another's", d.Post(t, "/dashboard/todos/"+strconv.FormatInt(theirs[0].ID, 10)+"/mark_as_done",
		url.Values{"authenticity_token": {token}}), 404)
	wantPage(t, "hostile id", d.Post(t, "/dashboard/todos/-1/mark_as_done", url.Values{"authenticity_token": {token}}), 404)
	wantPage(t, "no token, all", d.Post(t, "/dashboard/todos/mark_as_done", url.Values{}), 403)
	if got := pagesPending(t, dev.Client); len(got) != 2 {
		t.Fatalf("refused forms changed dev's todos: %d pending", len(got))
	}
	if got := pagesPending(t, other.Client); len(got) != len(theirs) {
		t.Fatalf("dev's post marked other's todo: %d pending", len(got))
	}

	wantRedirect(t, "mark one", d.Post(t, "/dashboard/todos/"+one+"/mark_as_done", url.Values{"authenticity_token": {token}}),
		http.StatusSeeOther, "/dashboard/todos")
	if got := pagesPending(t, dev.Client); len(got) != 1 || got[0].ID == mine[0].ID {
		t.Fatalf("after mark one: %+v", got)
	}
	page = d.Get(t, "/dashboard/todos")
	wantPage(t, "one left", page, 200, `To-dos <span class="count">1</span>`, `1 pending to-do `)
	done := d.Get(t, "/dashboard/todos?state=done")
	wantPage(t, "done tab", done, 200, `<a href="/dashboard/todos?state=done" aria-current="page">Done</a>`, `id="todo_`+one+`"`)
	wantNot(t, "done tab", done, "Mark all as done", `/dashboard/todos/`+one+`/mark_as_done`)

	wantRedirect(t, "mark all", d.Post(t, "/dashboard/todos/mark_as_done", url.Values{"authenticity_token": {page.CSRF()}}),
		http.StatusSeeOther, "/dashboard/todos")
	if got := pagesPending(t, dev.Client); len(got) != 0 {
		t.Fatalf("after mark all: %d pending", len(got))
	}
	page = d.Get(t, "/dashboard/todos")
	wantPage(t, "nothing left", page, 200, `<a href="/dashboard/todos">To-dos</a>`, `You have nothing to do.`)
	if got := pagesPending(t, other.Client); len(got) != len(theirs) {
		t.Fatalf("dev's mark all marked other's: %d pending", len(got))
	}
}

// TestTodoPagesPaging: 20 todos a page, with the pager's links.
func TestTodoPagesPaging(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	dev := s.CreateUser(t, "dev")
	p := stocktest.NewProject(t, s.Client, "many", "public")
	stocktest.AddMember(t, s.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	for i := range 21 {
		if _, _, err := s.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Job " + strconv.Itoa(i+1)),
			AssigneeIDs: &[]int64{dev.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	d := s.SignedIn(t, "dev", dev.Password)
	first := d.Get(t, "/dashboard/todos")
	wantPage(t, "first page", first, 200, `To-dos <span class="count">21</span>`, `<bdi>Job 21</bdi>`, `<bdi>Job 2</bdi>`,
		`<a href="/dashboard/todos?page=2" rel="next">Next</a>`, `Page 1 of 2`)
	wantNot(t, "first page", first, `<bdi>Job 1</bdi>`)
	second := d.Get(t, "/dashboard/todos?page=2")
	wantPage(t, "second page", second, 200, `<bdi>Job 1</bdi>`, `<a href="/dashboard/todos" rel="prev">Previous</a>`)
	if n := strings.Count(first.Body, `<li id="todo_`); n != 20 {
		t.Errorf("the first page lists %d todos", n)
	}
}

// TestTodoCountLeavesOutWhatCannotBeSeen: the header's count is what the
// todos page lists: a todo of a project the user has left meanwhile is
// counted by neither.
func TestTodoCountLeavesOutWhatCannotBeSeen(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	dev := s.CreateUser(t, "dev")
	kept := stocktest.NewProject(t, s.Client, "kept", "private")
	left := stocktest.NewProject(t, s.Client, "left", "private")
	for _, p := range []int64{kept.ID, left.ID} {
		stocktest.AddMember(t, s.Client, p, dev.ID, gitlab.DeveloperPermissions)
		if _, _, err := s.Client.Issues.CreateIssue(p, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("For dev"), AssigneeIDs: &[]int64{dev.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	d := s.SignedIn(t, "dev", dev.Password)
	wantPage(t, "both", d.Get(t, "/dashboard/todos"), 200, `To-dos <span class="count">2</span>`, `2 pending to-dos`)
	if _, err := s.Client.ProjectMembers.DeleteProjectMember(left.ID, dev.ID); err != nil {
		t.Fatal(err)
	}
	page := d.Get(t, "/dashboard/todos")
	wantPage(t, "one left", page, 200, `To-dos <span class="count">1</span>`, `1 pending to-do `, `/root/kept/-/issues/1`)
	wantNot(t, "one left", page, `/root/left/-/issues/1`)
}
