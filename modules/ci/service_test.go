package ci_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives cicd.Service's runner commands as an admin
// command, a page or an embedder would, with no request behind it: the
// same rules and domain errors as the API, and what it does is what the
// API then shows.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc cicd.Service
	var users auth.UserLookup
	s := startRunners(t, fennectest.WithExtract(&svc, &users))
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	as := func(id int64) context.Context { return fennectest.AsUser(t, users, id) }
	system := auth.WithPrincipal(context.Background(), auth.System())

	token, err := svc.RegistrationToken(system)
	if err != nil || token != sharedToken(t, s) {
		t.Fatalf("the system's registration token %q: %v", token, err)
	}
	if _, err := svc.ResetRegistrationToken(as(alice.ID)); !errors.Is(err, cicd.ErrAdminOnly) {
		t.Errorf("a user resets the token: %v", err)
	}
	p := stocktest.NewProject(t, alice.Client, "alpha", "private")
	full, _, _ := alice.Client.Projects.GetProject(p.ID, nil)
	mine := registerRunner(t, s, full.RunnersToken, map[string]any{"description": "alice's"})
	id := cicd.RunnerID(mine.ID)

	list, total, err := svc.Runners(as(alice.ID), cicd.RunnerQuery{Limit: 20})
	if err != nil || total != 1 || len(list) != 1 || list[0].ID != id || list[0].Description != "alice's" {
		t.Fatalf("alice's runners: %d %+v %v", total, list, err)
	}
	if _, _, err := svc.Runners(as(alice.ID), cicd.RunnerQuery{All: true, Limit: 20}); !errors.Is(err, cicd.ErrAdminOnly) {
		t.Errorf("every runner, for alice: %v", err)
	}
	if _, err := svc.Runner(as(bob.ID), id); !errors.Is(err, cicd.ErrNoRunnerAccess) {
		t.Errorf("bob reads alice's runner: %v", err)
	}
	if _, err := svc.UpdateRunner(as(alice.ID), id, cicd.RunnerFields{}); !errors.Is(err, cicd.ErrNoRunnerChange) {
		t.Errorf("an update of nothing: %v", err)
	}
	bad := []string{"a\x00b"}
	var tagsErr *cicd.InvalidTagsError
	if _, err := svc.UpdateRunner(as(alice.ID), id, cicd.RunnerFields{Tags: &bad}); !errors.As(err, &tagsErr) || tagsErr.Reason != `tag "a\x00b" is invalid` {
		t.Errorf("a hostile tag: %v", err)
	}
	desc, tags := "renamed", []string{"docker"}
	r, err := svc.UpdateRunner(as(alice.ID), id, cicd.RunnerFields{Description: &desc, Tags: &tags})
	if err != nil || r.Description != "renamed" || len(r.Projects) != 1 || r.Projects[0].ID != p.ID {
		t.Fatalf("update: %+v %v", r, err)
	}
	if got, _, err := alice.Client.Runners.GetRunnerDetails(mine.ID); err != nil || got.Description != "renamed" || len(got.TagList) != 1 || got.TagList[0] != "docker" {
		t.Errorf("the API after the update: %+v %v", got, err)
	}
	project := strconv.FormatInt(p.ID, 10)
	if err := svc.DisableProjectRunner(as(alice.ID), project, id); !errors.Is(err, cicd.ErrRunnerLastProject) {
		t.Errorf("disable on its only project: %v", err)
	}
	if _, err := svc.EnableProjectRunner(as(bob.ID), project, &id); !errors.Is(err, projects.ErrNotFound) {
		t.Errorf("bob enables it on alice's project: %v", err)
	}
	if err := svc.DeleteRunner(as(alice.ID), id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Runners.GetRunnerDetails(mine.ID); err == nil {
		t.Errorf("the API still shows the removed runner")
	}
}
