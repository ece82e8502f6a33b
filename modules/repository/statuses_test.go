package repository_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestCommitStatuses(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	st, resp, err := c.Commits.SetCommitStatus(w.project.ID, w.head, &gitlab.SetCommitStatusOptions{
		State: gitlab.Pending, Ref: gitlab.Ptr("master"), Context: gitlab.Ptr("ci/build"), TargetURL: gitlab.Ptr("https://ci.example.com/1"),
	})
	if err != nil || resp.StatusCode != 201 || st.Status != "pending" || st.Name != "ci/build" || st.SHA != w.head || st.Ref != "master" {
		t.Fatalf("post %+v %v", st, err)
	}
	// The same sha, name and ref updates the status in place.
	st2, _, err := c.Commits.SetCommitStatus(w.project.ID, w.head, &gitlab.SetCommitStatusOptions{
		State: gitlab.Running, Ref: gitlab.Ptr("master"), Name: gitlab.Ptr("ci/build"),
	})
	if err != nil || st2.ID != st.ID || st2.Status != "running" || st2.StartedAt == nil || st2.FinishedAt != nil {
		t.Fatalf("update %+v %v", st2, err)
	}
	if _, _, err := c.Commits.SetCommitStatus(w.project.ID, w.head, &gitlab.SetCommitStatusOptions{State: gitlab.Failed}); err != nil {
		t.Fatal(err)
	}
	list, _, err := c.Commits.GetCommitStatuses(w.project.ID, w.head, nil)
	if err != nil || len(list) != 2 || list[0].Name != "default" || list[0].Status != "failed" || list[0].FinishedAt == nil {
		t.Fatalf("list %+v %v", list, err)
	}
	byRef, _, err := c.Commits.GetCommitStatuses(w.project.ID, w.head, &gitlab.GetCommitStatusesOptions{Ref: gitlab.Ptr("master")})
	if err != nil || len(byRef) != 1 || byRef[0].Name != "ci/build" {
		t.Fatalf("ref filter %+v %v", byRef, err)
	}
	// Statuses posted through the API are of the stage "external" (the
	// parameter was parsed and ignored before: stage=build listed both).
	if ext, _, err := c.Commits.GetCommitStatuses(w.project.ID, w.head, &gitlab.GetCommitStatusesOptions{Stage: gitlab.Ptr("external")}); err != nil || len(ext) != 2 {
		t.Fatalf("stage=external %+v %v", ext, err)
	}
	if none, _, err := c.Commits.GetCommitStatuses(w.project.ID, w.head, &gitlab.GetCommitStatusesOptions{Stage: gitlab.Ptr("build")}); err != nil || len(none) != 0 {
		t.Fatalf("stage=build %+v %v", none, err)
	}
	one, _, err := c.Commits.GetCommit(w.project.ID, w.head, nil)
	if err != nil || one.Status == nil || *one.Status != "failed" {
		t.Fatalf("commit status %+v %v", one.Status, err)
	}
	// Who may post: developers and above; readers of a public project may not.
	reader := w.s.CreateUser(t, "reader")
	if _, resp, err := reader.Client.Commits.SetCommitStatus(w.project.ID, w.head, &gitlab.SetCommitStatusOptions{State: gitlab.Success}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("non-member posting a status: %v", resp.StatusCode)
	}
	for body, want := range map[string]string{
		`{"state":"exploded"}`: `{"error":"state does not have a valid value"}`,
		`{}`:                   `{"error":"state is missing"}`,
	} {
		resp, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(w.project.ID)+"/statuses/"+w.head, strings.NewReader(body), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		if resp.StatusCode != 400 || strings.TrimSpace(string(raw)) != want {
			t.Errorf("%s: %d %s", body, resp.StatusCode, raw)
		}
	}
	resp2, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(w.project.ID)+"/statuses/0123456789abcdef0123456789abcdef01234567?state=success", nil, nil, "PRIVATE-TOKEN", w.s.RootToken)
	if resp2.StatusCode != 404 || strings.TrimSpace(string(raw)) != `{"message":"404 Commit Not Found"}` {
		t.Fatalf("unknown sha: %d %s", resp2.StatusCode, raw)
	}
}
