package stock_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Deleting a project with thousands of rows (issues, their notes and
// todos, feed entries) removes them all, in transactions short enough
// that no write of the server waits long behind them (issue 27, finding
// 5): before, every module removed its rows in one transaction, and the
// bus ran them all in one, which held the store for seconds.
func TestDeletingABigProjectHoldsNoWriteLong(t *testing.T) {
	const issues = 1000
	s := stocktest.Start(t)
	c := s.Client
	bob := s.CreateUser(t, "bob")
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("big")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: bob.ID, AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= issues; i = next.Add(1) {
				is, _, err := c.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(fmt.Sprint("issue ", i)),
					AssigneeIDs: &[]int64{bob.ID}, Labels: &gitlab.LabelOptions{"a", "b"}})
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if _, _, err := c.Notes.CreateIssueNote(p.ID, is.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("a note")}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	s.Drain(t)
	if todos, resp, err := bob.Client.Todos.ListTodos(nil); err != nil || resp.Header.Get("X-Total") != fmt.Sprint(issues) {
		t.Fatalf("bob's todos before: %d, X-Total %s, %v", len(todos), resp.Header.Get("X-Total"), err)
	}

	s.Store.ResetSlowestWrite()
	began := time.Now()
	if _, err := c.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	slowest := s.Store.SlowestWrite()
	t.Logf("removed in %v; the longest write took %v", time.Since(began), slowest)
	// A step removes a few hundred rows: tens of milliseconds, a few
	// hundred under the race detector on a busy machine. All of it in one
	// took seconds.
	if slowest > time.Second {
		t.Errorf("a write held the store for %v while the project's rows were removed", slowest)
	}
	if todos, resp, err := bob.Client.Todos.ListTodos(nil); err != nil || resp.Header.Get("X-Total") != "0" {
		t.Errorf("bob's todos after: %d, X-Total %s, %v", len(todos), resp.Header.Get("X-Total"), err)
	}
	if resp := s.Do(t, http.MethodGet, "/api/v4/issues?scope=all", nil, "PRIVATE-TOKEN", s.RootToken); resp.Header.Get("X-Total") != "0" {
		t.Errorf("issues after: X-Total %s", resp.Header.Get("X-Total"))
	}
	// Root opened every issue; the feed keeps only the deletion itself.
	if resp := s.Do(t, http.MethodGet, "/api/v4/events?per_page=100", nil, "PRIVATE-TOKEN", s.RootToken); resp.Header.Get("X-Total") != "1" {
		t.Errorf("root's events after: X-Total %s, want the deletion's alone", resp.Header.Get("X-Total"))
	}
}
