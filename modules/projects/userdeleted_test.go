package projects_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Deleting a user removes their personal projects (as GitLab does), through
// the identity.user_deleted event; other users' projects are untouched.
func TestDeletingAUserRemovesTheirPersonalProjects(t *testing.T) {
	t.Parallel()
	var bus *events.Bus
	s := stocktest.Start(t, fennectest.WithExtract(&bus))
	gone := s.CreateUser(t, "leaver")
	stays := s.CreateUser(t, "stayer")
	p1, _, err := gone.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("doomed")})
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := stays.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("kept")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.Users.DeleteUser(gone.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := s.Client.Projects.GetProject(p1.ID, nil); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted user's project is still there (%v)", err)
	}
	if _, _, err := s.Client.Projects.GetProject(p2.ID, nil); err != nil {
		t.Fatalf("another user's project was touched: %v", err)
	}
	// The path is free again for a new user of the same name.
	again := s.CreateUser(t, "leaver")
	if _, _, err := again.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("doomed")}); err != nil {
		t.Fatalf("recreating the path: %v", err)
	}
}
