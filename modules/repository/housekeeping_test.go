package repository_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// POST /projects/:id/housekeeping has a Master's repository repacked in
// the background: 201 at once, 409 while that repack is queued or
// running, and the repository ends in one pack.
func TestHousekeeping(t *testing.T) {
	var hk *internal.Housekeeper
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&hk, &repos))
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("kept")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := c.RepositoryFiles.CreateFile(p.ID, fmt.Sprintf("f%d.txt", i), &gitlab.CreateFileOptions{
			Branch: gitlab.Ptr("master"), Content: gitlab.Ptr(fmt.Sprint(i)), CommitMessage: gitlab.Ptr("add")}); err != nil {
			t.Fatal(err)
		}
	}
	// What a repack tidies: packs, and loose objects (the files API's).
	untidy := func() (packs, loose int) {
		list, _ := filepath.Glob(filepath.Join(repos.Path(p.ID), "objects", "pack", "*.pack"))
		objs, _ := filepath.Glob(filepath.Join(repos.Path(p.ID), "objects", "[0-9a-f][0-9a-f]", "*"))
		return len(list), len(objs)
	}
	if packs, loose := untidy(); packs < 2 && loose == 0 {
		t.Fatalf("%d packs and no loose object before housekeeping: nothing to tidy", packs)
	}

	entered, release := make(chan int64, 4), make(chan struct{})
	hk.SetBeforeRepack(func(id int64) {
		entered <- id
		<-release
	})
	url := fmt.Sprintf("/api/v4/projects/%d/housekeeping", p.ID)
	root := []string{"PRIVATE-TOKEN", s.RootToken}
	resp, raw := s.JSON(t, http.MethodPost, url, nil, nil, root...)
	if resp.StatusCode != 201 || len(raw) != 0 {
		t.Fatalf("housekeeping: %d %q", resp.StatusCode, raw)
	}
	select {
	case id := <-entered:
		if id != p.ID {
			t.Fatalf("repacked project %d, want %d", id, p.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no repack started")
	}
	// Running: a second one is refused.
	resp, raw = s.JSON(t, http.MethodPost, url, nil, nil, root...)
	if resp.StatusCode != 409 || strings.TrimSpace(string(raw)) != `{"message":"Housekeeping of this project's repository is already queued or running"}` {
		t.Fatalf("housekeeping while one runs: %d %s", resp.StatusCode, raw)
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		packs, loose := untidy()
		if packs == 1 && loose == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d packs and %d loose objects after housekeeping", packs, loose)
		}
	}
	// Done: it may be asked again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, raw = s.JSON(t, http.MethodPost, url, nil, nil, root...)
		if resp.StatusCode == 201 {
			break
		}
		if resp.StatusCode != 409 || time.Now().After(deadline) {
			t.Fatalf("housekeeping after the first ended: %d %s", resp.StatusCode, raw)
		}
	}

	// Masters only; the project is private.
	dev := s.CreateUser(t, "")
	if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(dev.ID),
		AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	outsider := s.CreateUser(t, "")
	for _, tc := range []struct {
		headers []string
		code    int
		body    string
	}{
		{[]string{"PRIVATE-TOKEN", dev.Token}, 403, `{"message":"403 Forbidden"}`},
		{[]string{"PRIVATE-TOKEN", outsider.Token}, 404, `{"message":"404 Project Not Found"}`},
		{nil, 401, `{"message":"401 Unauthorized"}`},
	} {
		resp, raw := s.JSON(t, http.MethodPost, url, nil, nil, tc.headers...)
		if resp.StatusCode != tc.code || strings.TrimSpace(string(raw)) != tc.body {
			t.Errorf("housekeeping by %v: %d %s, want %d %s", tc.headers, resp.StatusCode, raw, tc.code, tc.body)
		}
	}
}
