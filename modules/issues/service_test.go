package issues_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives issue.Service as a page or an admin
// command would, with no request behind it: the same permissions, domain
// errors and events as the API, and what it does is what the API shows.
func TestServiceWithoutHTTP(t *testing.T) {
	var svc issue.Service
	var users auth.UserLookup
	e := start(t, fennectest.WithExtract(&svc, &users))
	alice, bob, carol, dave := e.CreateUser(t, "alice"), e.CreateUser(t, "bob"), e.CreateUser(t, "carol"), e.CreateUser(t, "dave")
	p := stocktest.NewProject(t, alice.Client, "tracker", "private")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.GuestPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, dave.ID, gitlab.GuestPermissions)
	project := strconv.FormatInt(p.ID, 10)
	asAlice, asBob, asCarol := fennectest.AsUser(t, users, alice.ID), fennectest.AsUser(t, users, bob.ID), fennectest.AsUser(t, users, carol.ID)
	asDave := fennectest.AsUser(t, users, dave.ID)
	str := func(s string) *string { return &s }

	// Required fields, and who may create.
	var pe *issue.ParamsError
	if _, err := svc.Create(asAlice, project, issue.Fields{}); !errors.Is(err, issue.ErrMissing) || !errors.As(err, &pe) || len(pe.Params) != 1 || pe.Params[0] != "title" {
		t.Fatalf("create without a title: %v", err)
	}
	if _, err := svc.Create(asCarol, project, issue.Fields{Title: str("x")}); !errors.Is(err, projects.ErrNotFound) {
		t.Fatalf("a stranger creates in a private project: %v", err)
	}
	made, err := svc.Create(asAlice, project, issue.Fields{Title: str("  Broken build  "), Description: str("see log"),
		Labels: &[]string{"bug"}, AssigneeIDs: &[]int64{bob.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if made.IID != 1 || made.Title != "Broken build" || made.State != issue.Opened || made.AuthorID != alice.ID ||
		len(made.AssigneeIDs) != 1 || made.AssigneeIDs[0] != bob.ID || len(made.LabelIDs) != 1 {
		t.Fatalf("created %+v", made)
	}
	ref := issue.Ref{Project: project, IID: made.IID}

	// A guest reads it; the assignee may edit it (GitLab's update_issue),
	// another guest may not; the API shows what the service made.
	if got, err := svc.Get(asDave, ref); err != nil || got.ID != made.ID {
		t.Fatalf("a guest reads: %+v %v", got, err)
	}
	if _, err := svc.Update(asDave, ref, issue.Fields{Title: str("mine now")}, ""); !errors.Is(err, projects.ErrForbidden) {
		t.Fatalf("a guest edits another's issue: %v", err)
	}
	if got, err := svc.Update(asBob, ref, issue.Fields{Description: str("see the log of job 7")}, ""); err != nil || got.Description != "see the log of job 7" {
		t.Fatalf("the assignee edits: %+v %v", got, err)
	}
	got := e.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, int64(made.IID)), nil).Expect(t, 200, "").Object(t)
	if got["title"] != "Broken build" || got["labels"].([]any)[0] != "bug" || got["assignee"].(map[string]any)["username"] != "bob" {
		t.Fatalf("the API shows %v", got)
	}

	// Close through the service; the list filters see it; an update with
	// nothing is refused and changes nothing.
	closed, err := svc.Update(asAlice, ref, issue.Fields{}, issue.Close)
	if err != nil || closed.State != issue.Closed {
		t.Fatalf("close: %+v %v", closed, err)
	}
	if _, err := svc.Update(asAlice, ref, issue.Fields{}, ""); !errors.Is(err, issue.ErrNothingGiven) {
		t.Fatalf("an empty update: %v", err)
	}
	if list, n, err := svc.List(asAlice, project, issue.ListQuery{State: "opened", Limit: 20}); err != nil || n != 0 || len(list) != 0 {
		t.Fatalf("opened after close: %d %v", n, err)
	}
	if list, n, err := svc.List(asAlice, project, issue.ListQuery{State: "closed", Limit: 20}); err != nil || n != 1 || list[0].IID != made.IID {
		t.Fatalf("closed: %d %v", n, err)
	}
	if state := e.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, int64(made.IID)), nil).Expect(t, 200, "").Object(t)["state"]; state != "closed" {
		t.Fatalf("the API's state: %v", state)
	}

	// Only a Master or the owner deletes; then it is not found.
	if err := svc.Delete(asBob, ref); !errors.Is(err, projects.ErrForbidden) {
		t.Fatalf("the assignee, a guest, deletes: %v", err)
	}
	if err := svc.Delete(asAlice, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(asAlice, ref); !errors.Is(err, issue.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}
