package projects_test

import (
	"context"
	"strconv"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestAccessWithoutRequest is how background work (the CI scheduler) asks
// projects.Access: by project id, as the system or as a given user, with no
// request behind it.
func TestAccessWithoutRequest(t *testing.T) {
	t.Parallel()
	var access projects.Access
	var users auth.UserLookup
	s := stocktest.Start(t, fennectest.WithExtract(&access, &users))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("secret"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	reporter := s.CreateUser(t, "")
	stranger := s.CreateUser(t, "")
	blocked := s.CreateUser(t, "")
	for _, u := range []*fennectest.User{reporter, blocked} {
		if _, _, err := s.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: u.ID, AccessLevel: gitlab.Ptr(gitlab.ReporterPermissions)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Client.Users.BlockUser(blocked.ID); err != nil {
		t.Fatal(err)
	}
	as := func(p *auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }
	asUser := func(id int64) context.Context {
		t.Helper()
		u, err := users.LookupUser(context.Background(), strconv.FormatInt(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		pr, err := auth.ForUser(u)
		if err != nil {
			t.Fatal(err)
		}
		return as(pr)
	}
	system := as(auth.System())
	id := int64(p.ID)

	cases := []struct {
		name   string
		ctx    context.Context
		id     int64
		action projects.Action
		want   int // 0: allowed, else the status of the refusal
	}{
		{"system reads a private project", system, id, projects.ReadCode, 0},
		{"system may delete it", system, id, projects.RemoveProject, 0},
		{"reporter reads code", asUser(reporter.ID), id, projects.ReadCode, 0},
		{"reporter may not push", asUser(reporter.ID), id, projects.PushCode, 403},
		{"a non-member does not see it", asUser(stranger.ID), id, projects.ReadProject, 404},
		{"no principal is anonymous", context.Background(), id, projects.ReadProject, 404},
		{"unknown id", system, id + 1000, projects.ReadProject, 404},
		{"id 0", system, 0, projects.ReadProject, 404},
		{"negative id", system, -id, projects.ReadProject, 404},
	}
	for _, c := range cases {
		info, err := access.RequireID(c.ctx, c.id, c.action)
		if got := statusOf(t, err); got != c.want {
			t.Errorf("%s: RequireID status %d (%v), want %d", c.name, got, err, c.want)
		}
		if c.want == 0 && info.ID != id {
			t.Errorf("%s: RequireID gave project %d, want %d", c.name, info.ID, id)
		}
	}

	// ResolveID is Resolve for an id: the same project, with the caller's level.
	byPath, err := access.Resolve(system, p.PathWithNamespace)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := access.ResolveID(system, id)
	if err != nil || byID != byPath || byID.Level != projects.Owner {
		t.Fatalf("ResolveID %+v %v, Resolve by path %+v", byID, err, byPath)
	}
	if info, err := access.ResolveID(asUser(reporter.ID), id); err != nil || info.Level != projects.Reporter {
		t.Fatalf("reporter's ResolveID %+v %v", info, err)
	}

	// A blocked user's background work is refused before it reaches Access.
	u, err := users.LookupUser(context.Background(), blocked.Username)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.ForUser(u); err == nil {
		t.Fatal("ForUser accepted a blocked user")
	}

	// An archived project refuses writes to everyone, the system too.
	if _, _, err := s.Client.Projects.ArchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := access.RequireID(system, id, projects.PushCode); statusOf(t, err) != 403 {
		t.Fatalf("system pushing to an archived project: %v", err)
	}
}

// statusOf is the HTTP status an error of Access turns into, 0 for nil.
func statusOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	e, ok := api.FromError(err)
	if !ok {
		t.Fatalf("unmapped error %v", err)
	}
	return e.Status
}
