package projects_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

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
	id := p.ID

	cases := []struct {
		name   string
		ctx    context.Context
		id     int64
		action projects.Action
		want   error // nil: allowed, else the refusal
	}{
		{"system reads a private project", system, id, projects.ReadCode, nil},
		{"system may delete it", system, id, projects.RemoveProject, nil},
		{"reporter reads code", asUser(reporter.ID), id, projects.ReadCode, nil},
		{"reporter may not push", asUser(reporter.ID), id, projects.PushCode, projects.ErrForbidden},
		{"a non-member does not see it", asUser(stranger.ID), id, projects.ReadProject, projects.ErrNotFound},
		{"no principal is anonymous", context.Background(), id, projects.ReadProject, projects.ErrNotFound},
		{"unknown id", system, id + 1000, projects.ReadProject, projects.ErrNotFound},
		{"id 0", system, 0, projects.ReadProject, projects.ErrNotFound},
		{"negative id", system, -id, projects.ReadProject, projects.ErrNotFound},
	}
	for _, c := range cases {
		info, err := access.RequireID(c.ctx, c.id, c.action)
		if !refusedWith(err, c.want) {
			t.Errorf("%s: RequireID refused with %v, want %v", c.name, err, c.want)
		}
		if c.want == nil && info.ID != id {
			t.Errorf("%s: RequireID gave project %d, want %d", c.name, info.ID, id)
		}
	}

	// ResolveID is Resolve for an id: the same project, with the caller's level.
	byPath, err := access.Resolve(system, p.PathWithNamespace)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := access.ResolveID(system, id)
	if err != nil || !reflect.DeepEqual(byID, byPath) || byID.Level != projects.Owner {
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
	if _, err := access.RequireID(system, id, projects.PushCode); !errors.Is(err, projects.ErrForbidden) {
		t.Fatalf("system pushing to an archived project: %v", err)
	}
}

// refusedWith reports whether err is Access's refusal want (nil: no error),
// decided as background callers do: errors.Is on the module's sentinels.
func refusedWith(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}
