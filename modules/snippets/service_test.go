package snippets_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives snippet.Service as an embedder, a page or
// an admin command would, with no request behind it: the same rules and
// the same domain errors as the API, and what it does is what the API
// then shows.
func TestServiceWithoutHTTP(t *testing.T) {
	var svc snippet.Service
	var users auth.UserLookup
	e := start(t, fennectest.WithExtract(&svc, &users))
	alice := e.CreateUser(t, "alice")
	stranger := e.CreateUser(t, "stranger")
	p := stocktest.NewProject(t, alice.Client, "tools", "private")
	project := strconv.FormatInt(p.ID, 10)
	as := func(id int64) context.Context { return fennectest.AsUser(t, users, id) }
	ctx := as(alice.ID)
	str := func(s string) *string { return &s }
	vis := func(v snippet.Visibility) *snippet.Visibility { return &v }

	made, err := svc.CreateProjectSnippet(ctx, project, snippet.Fields{Title: str("Hello"), FileName: str("hello.rb"),
		Content: str("puts 'hello'"), Visibility: vis(snippet.Private)})
	if err != nil {
		t.Fatal(err)
	}
	if made.ID <= 0 || made.ProjectID != p.ID || made.AuthorID != alice.ID || made.Title != "Hello" || made.Size != 12 ||
		made.Visibility != snippet.Private || made.Personal() || !strings.HasSuffix(made.WebURL, "/alice/tools/snippets/"+store.IDString(int64(made.ID))) {
		t.Fatalf("created %+v", made)
	}
	// Without a request the project's web_url has no external URL before
	// it; the API's does.
	got := e.call(t, alice.Token, "GET", "/projects/"+project+"/snippets/"+store.IDString(int64(made.ID)), nil).status(t, 200).obj(t)
	if got["title"] != "Hello" || !strings.HasSuffix(got["web_url"].(string), made.WebURL) || got["author"].(map[string]any)["username"] != "alice" {
		t.Fatalf("the API shows %v", got)
	}
	if sn, body, err := svc.ProjectSnippetContent(ctx, project, made.ID); err != nil || string(body) != "puts 'hello'" || sn.FileName != "hello.rb" {
		t.Fatalf("content: %+v %q %v", sn, body, err)
	}

	// Refusals are domain errors, told apart with errors.Is.
	var params *snippet.ParamsError
	if _, err := svc.CreateProjectSnippet(ctx, project, snippet.Fields{Title: str("t"), FileName: str("f")}); !errors.Is(err, snippet.ErrMissing) ||
		!errors.As(err, &params) || !reflect.DeepEqual(params.Params, []string{"code", "visibility"}) {
		t.Fatalf("missing fields: %v", err)
	}
	if _, err := svc.UpdateProjectSnippet(ctx, project, made.ID, snippet.Fields{}); !errors.Is(err, snippet.ErrNothingGiven) {
		t.Fatalf("an empty update: %v", err)
	}
	var invalid *snippet.InvalidError
	if _, err := svc.UpdateProjectSnippet(ctx, project, made.ID, snippet.Fields{Title: str(""), FileName: str("../x")}); !errors.Is(err, snippet.ErrInvalid) ||
		!errors.As(err, &invalid) || len(invalid.Fields["title"]) != 1 || len(invalid.Fields["file_name"]) != 1 || len(invalid.Fields) != 2 {
		t.Fatalf("invalid fields: %v", err)
	}
	if _, err := svc.UpdateProjectSnippet(ctx, project, made.ID, snippet.Fields{Visibility: vis("everyone")}); !errors.Is(err, snippet.ErrInvalidVisibility) {
		t.Fatalf("unknown visibility: %v", err)
	}
	if _, err := svc.ProjectSnippet(as(stranger.ID), project, made.ID); !errors.Is(err, projects.ErrNotFound) {
		t.Fatalf("a stranger reads a private project's snippet: %v", err)
	}
	if _, err := svc.CreatePersonalSnippet(context.Background(), snippet.Fields{Title: str("t"), FileName: str("f"), Content: str("c")}); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("an anonymous personal snippet: %v", err)
	}

	// A personal snippet: internal unless given, listed by the API.
	own, err := svc.CreatePersonalSnippet(ctx, snippet.Fields{Title: str("Mine"), FileName: str("mine.txt"), Content: str("text")})
	if err != nil || own.Visibility != snippet.Internal || !own.Personal() || own.WebURL != "" {
		t.Fatalf("personal snippet: %+v %v", own, err)
	}
	wantIDs(t, "GET /snippets", e.call(t, alice.Token, "GET", "/snippets", nil).status(t, 200).arr(t), int64(own.ID))
	if list, total, err := svc.OwnSnippets(ctx, 0, 20); err != nil || total != 1 || len(list) != 1 || list[0].ID != own.ID {
		t.Fatalf("own snippets: %+v %d %v", list, total, err)
	}

	// Deleting is idempotent for project snippets, as on the API.
	if deleted, err := svc.DeleteProjectSnippet(ctx, project, made.ID); err != nil || deleted == nil || deleted.ID != made.ID {
		t.Fatalf("delete: %+v %v", deleted, err)
	}
	if deleted, err := svc.DeleteProjectSnippet(ctx, project, made.ID); err != nil || deleted != nil {
		t.Fatalf("delete again: %+v %v", deleted, err)
	}
	if _, err := svc.ProjectSnippet(ctx, project, made.ID); !errors.Is(err, snippet.ErrNotFound) {
		t.Fatalf("a deleted snippet: %v", err)
	}
	e.call(t, alice.Token, "GET", "/projects/"+project+"/snippets/"+store.IDString(int64(made.ID)), nil).want(t, 404, notFoundSnippet)
}
