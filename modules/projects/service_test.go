package projects_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/projects/project"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives project.Service as an embedder, a page or
// an admin command would, with no request behind it: the same rules and
// the same domain errors as the API, and what it does is what the API
// then shows.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc project.Service
	var users auth.UserLookup
	s := stocktest.Start(t, fennectest.WithExtract(&svc, &users))
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	as := func(id int64) context.Context { return fennectest.AsUser(t, users, id) }
	ctx, bobs := as(alice.ID), as(bob.ID)
	str := func(s string) *string { return &s }
	level := func(l int) *int { return &l }
	id := func(p project.Project) string { return strconv.FormatInt(p.ID, 10) }

	// A project made by the service is the API's project.
	made, err := svc.CreateProject(ctx, project.Fields{Name: str("Tools"), Description: str("for work"),
		Switches: project.Switches{WikiEnabled: new(bool)}})
	if err != nil {
		t.Fatal(err)
	}
	// Without a request web_url has no external URL before it.
	if made.Path != "tools" || made.PathWithNamespace != "alice/tools" || made.WebURL != "/alice/tools" ||
		made.Visibility != project.Private || made.Level != project.Owner || made.Features.WikiEnabled || !made.Features.IssuesEnabled ||
		made.CreatorID != alice.ID || made.ImportStatus != project.ImportNone || made.Description != "for work" {
		t.Fatalf("created %+v", made)
	}
	got, _, err := alice.Client.Projects.GetProject(made.ID, nil)
	if err != nil || got.PathWithNamespace != "alice/tools" || got.WikiEnabled || !strings.HasSuffix(got.WebURL, made.WebURL) {
		t.Fatalf("the API shows %+v, %v", got, err)
	}

	// Refusals are domain errors, told apart with errors.Is and read with
	// errors.As.
	var params *project.ParamsError
	if _, err := svc.CreateProject(ctx, project.Fields{}); !errors.Is(err, project.ErrNothingGiven) ||
		!errors.As(err, &params) || !reflect.DeepEqual(params.Params, []string{"name", "path"}) {
		t.Fatalf("a project without name or path: %v", err)
	}
	if _, err := svc.UpdateProject(ctx, id(made), project.Fields{}); !errors.Is(err, project.ErrNothingGiven) {
		t.Fatalf("an empty edit: %v", err)
	}
	if _, err := svc.UpdateProject(ctx, id(made), project.Fields{Visibility: str("everyone")}); !errors.Is(err, project.ErrInvalidValue) {
		t.Fatalf("an unknown visibility: %v", err)
	}
	var fields project.FieldErrors
	if _, err := svc.UpdateProject(ctx, id(made), project.Fields{Name: str(""), Path: str("-x")}); !errors.Is(err, project.ErrInvalid) ||
		!errors.As(err, &fields) || len(fields["name"]) != 1 || len(fields["path"]) != 1 || len(fields) != 2 {
		t.Fatalf("invalid fields: %v", err)
	}
	if _, err := svc.UpdateProject(bobs, id(made), project.Fields{Description: str("mine")}); !errors.Is(err, project.ErrNotFound) {
		t.Fatalf("a stranger's edit of a private project: %v", err)
	}
	if _, err := svc.CreateProjectFor(ctx, bob.ID, project.Fields{Name: str("x")}); !errors.Is(err, project.ErrForbidden) {
		t.Fatalf("a user creating a project for another: %v", err)
	}
	if p, err := svc.CreateProjectFor(auth.WithPrincipal(context.Background(), auth.System()), bob.ID, project.Fields{Name: str("given")}); err != nil ||
		p.PathWithNamespace != "bob/given" {
		t.Fatalf("the system creating a project for bob: %+v %v", p, err)
	}

	// Groups and members.
	g, err := svc.CreateGroup(ctx, project.GroupFields{Name: str("Team"), Path: str("team"), Visibility: str(project.Internal)})
	if err != nil || g.FullPath != "team" || g.Visibility != project.Internal || g.ParentID != 0 {
		t.Fatalf("group %+v %v", g, err)
	}
	sub, err := svc.CreateGroup(ctx, project.GroupFields{Name: str("Backend"), Path: str("backend"), ParentID: &g.ID})
	if err != nil || sub.FullPath != "team/backend" || sub.FullName != "Team / Backend" || sub.ParentID != g.ID {
		t.Fatalf("subgroup %+v %v", sub, err)
	}
	if _, err := svc.CreateGroup(ctx, project.GroupFields{Name: str("x")}); !errors.Is(err, project.ErrMissing) ||
		!errors.As(err, &params) || !reflect.DeepEqual(params.Params, []string{"path"}) {
		t.Fatalf("a group without path: %v", err)
	}
	if _, err := svc.UpdateGroup(bobs, "team", project.GroupFields{Description: str("x")}); !errors.Is(err, project.ErrForbidden) {
		t.Fatalf("a non-member editing an internal group: %v", err)
	}
	if g2, err := svc.UpdateGroup(ctx, "team", project.GroupFields{Description: str("the team")}); err != nil || g2.Description != "the team" {
		t.Fatalf("group edit %+v %v", g2, err)
	}
	m, err := svc.AddMember(ctx, project.GroupMembers, "team/backend", project.MemberFields{UserID: &bob.ID, AccessLevel: level(project.Master), ExpiresAt: str("2999-01-02")})
	if err != nil || m.Kind != project.GroupMembers || m.SourceID != sub.ID || m.UserID != bob.ID || m.AccessLevel != project.Master ||
		m.ExpiresAt == nil || m.ExpiresAt.Format("2006-01-02") != "2999-01-02" {
		t.Fatalf("member %+v %v", m, err)
	}
	if _, err := svc.AddMember(ctx, project.GroupMembers, "team/backend", project.MemberFields{UserID: &bob.ID, AccessLevel: level(project.Guest)}); !errors.Is(err, project.ErrMemberExists) {
		t.Fatalf("adding a member twice: %v", err)
	}
	if _, err := svc.AddMember(ctx, project.ProjectMembers, id(made), project.MemberFields{UserID: &bob.ID, AccessLevel: level(project.Owner)}); !errors.Is(err, project.ErrInvalidValue) {
		t.Fatalf("a project Owner member: %v", err)
	}
	if _, err := svc.UpdateMember(ctx, project.GroupMembers, "team", alice.ID, project.MemberFields{AccessLevel: level(project.Master)}); !errors.Is(err, project.ErrLastOwner) {
		t.Fatalf("demoting the last Owner: %v", err)
	}
	if m, err := svc.UpdateMember(ctx, project.GroupMembers, "team/backend", bob.ID, project.MemberFields{AccessLevel: level(project.Developer), ExpiresAt: str("")}); err != nil ||
		m.AccessLevel != project.Developer || m.ExpiresAt != nil {
		t.Fatalf("member edit %+v %v", m, err)
	}
	if _, err := svc.AddMember(ctx, "team", "team", project.MemberFields{}); !errors.Is(err, project.ErrInvalidValue) {
		t.Fatalf("an unknown member kind: %v", err)
	}
	// The subgroup's creator is its Owner; bob is as the service left him.
	members, _, err := alice.Client.Groups.ListGroupMembers(sub.ID, nil)
	if err != nil || len(members) != 2 || members[0].Username != "alice" || members[0].AccessLevel != gitlab.OwnerPermissions ||
		members[1].Username != "bob" || members[1].AccessLevel != gitlab.DeveloperPermissions || members[1].ExpiresAt != nil {
		t.Fatalf("the API lists %+v, %v", members, err)
	}

	// Project commands: archive, star, share, fork, transfer, hooks.
	if p, err := svc.ArchiveProject(ctx, "alice/tools"); err != nil || !p.Archived {
		t.Fatalf("archive %+v %v", p, err)
	}
	if p, err := svc.UnarchiveProject(ctx, "alice/tools"); err != nil || p.Archived {
		t.Fatalf("unarchive %+v %v", p, err)
	}
	if p, err := svc.StarProject(ctx, id(made)); err != nil || p.StarCount != 1 {
		t.Fatalf("star %+v %v", p, err)
	}
	if _, err := svc.StarProject(ctx, id(made)); !errors.Is(err, project.ErrUnchanged) {
		t.Fatalf("starring twice: %v", err)
	}
	sh, err := svc.ShareProject(ctx, id(made), project.ShareFields{GroupID: g.ID, GroupAccess: project.Reporter, ExpiresAt: str("2999-05-06")})
	if err != nil || sh.ProjectID != made.ID || sh.GroupID != g.ID || sh.GroupAccess != project.Reporter || sh.ExpiresAt.Format("2006-01-02") != "2999-05-06" {
		t.Fatalf("share %+v %v", sh, err)
	}
	if _, err := svc.ShareProject(ctx, id(made), project.ShareFields{GroupID: g.ID, GroupAccess: project.Guest}); !errors.Is(err, project.ErrAlreadyShared) {
		t.Fatalf("sharing twice: %v", err)
	}
	// A share reaches the shared group's members (and its ancestors'), not
	// its subgroups': bob, of team/backend only, still does not see it.
	if _, err := svc.ForkProject(bobs, id(made), project.ForkFields{}); !errors.Is(err, project.ErrNotFound) {
		t.Fatalf("bob forking a project he cannot see: %v", err)
	}
	fork, err := svc.ForkProject(ctx, id(made), project.ForkFields{NamespaceID: &sub.ID})
	if err != nil || fork.PathWithNamespace != "team/backend/tools" || fork.ForkedFromID != made.ID || len(fork.GroupIDs) != 2 {
		t.Fatalf("fork %+v %v", fork, err)
	}
	var taken *project.TakenError
	if _, err := svc.ForkProject(ctx, id(made), project.ForkFields{NamespaceID: &sub.ID}); !errors.Is(err, project.ErrTaken) ||
		!errors.As(err, &taken) || len(taken.Fields) != 2 {
		t.Fatalf("forking twice into one namespace: %v", err)
	}
	var refused *project.TransferError
	if _, err := svc.TransferProject(ctx, id(fork), strconv.FormatInt(sub.ID, 10)); !errors.Is(err, project.ErrTransferRefused) ||
		!errors.As(err, &refused) || refused.Reason != "Please select a new namespace for your project." {
		t.Fatalf("a transfer to where it is: %v", err)
	}
	if moved, err := svc.TransferProject(ctx, id(fork), "team"); err != nil || moved.PathWithNamespace != "team/tools" || moved.NamespaceID != g.ID {
		t.Fatalf("transfer %+v %v", moved, err)
	}
	hook, err := svc.AddHook(ctx, id(made), project.HookFields{URL: "https://hooks.example.com/x", IssuesEvents: new(bool)})
	if err != nil || hook.ProjectID != made.ID || !hook.PushEvents || hook.IssuesEvents || !hook.EnableSSLVerification {
		t.Fatalf("hook %+v %v", hook, err)
	}
	if _, err := svc.UpdateHook(ctx, id(made), hook.ID, project.HookFields{URL: "ftp://x"}); !errors.Is(err, project.ErrInvalidHookURL) {
		t.Fatalf("a hook url the rules refuse: %v", err)
	}
	if err := svc.DeleteHook(ctx, id(made), hook.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteHook(ctx, id(made), hook.ID); !errors.Is(err, project.ErrHookNotFound) {
		t.Fatalf("deleting a hook twice: %v", err)
	}
	if err := svc.UnshareProject(ctx, id(made), g.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.UnshareProject(ctx, id(made), g.ID); !errors.Is(err, project.ErrShareNotFound) {
		t.Fatalf("unsharing twice: %v", err)
	}

	// Removals.
	if err := svc.RemoveMember(bobs, project.GroupMembers, "team/backend", bob.ID); err != nil {
		t.Fatalf("bob leaving: %v", err)
	}
	if err := svc.DeleteProject(ctx, id(made)); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteGroup(ctx, "team"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v4/projects/" + id(made), "/api/v4/projects/team%2Ftools", "/api/v4/groups/team%2Fbackend"} {
		if resp := s.Do(t, "GET", path, nil, "PRIVATE-TOKEN", alice.Token); resp.StatusCode != 404 {
			t.Fatalf("GET %s after the deletes: %d", path, resp.StatusCode)
		}
	}
}
