package mergerequests_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestEventsAndTodos: every change publishes a MergeRequestEvent (the
// webhooks' Merge Request Hook) with the action and the merge request as
// it is after it; assignees and people mentioned get todos, done on merge.
func TestEventsAndTodos(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []event.MergeRequestEvent
	listener := fennec.NewModule("mr-listener", fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
		return []events.Subscriber{events.Subscribe("test.mergerequests", func(_ context.Context, ev event.MergeRequestEvent) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev)
			return nil
		})}
	}))
	s := start(t, fennectest.WithOptions(fennec.WithModules(listener)))
	p, w, alice := setup(t, s, "hooks")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	sha := w.commit("feature commit", map[string]string{"f": "f\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	mr, _, err := alice.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Hooked"),
		SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("master"), AssigneeID: gitlab.Ptr(bob.ID),
		Description: gitlab.Ptr("please look @carol"), Labels: &gitlab.LabelOptions{"b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	todosOf := func(token string) []map[string]any {
		return s.Call(t, token, http.MethodGet, "/api/v4/todos", nil).Expect(t, 200, "").List(t)
	}
	if td := todosOf(bob.Token); len(td) != 1 || td[0]["action_name"] != "assigned" || td[0]["target_type"] != "MergeRequest" {
		t.Fatalf("bob's todos %v", td)
	}
	if td := todosOf(carol.Token); len(td) != 1 || td[0]["action_name"] != "mentioned" {
		t.Fatalf("carol's todos %v", td)
	}
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"title": "Hooked!"}).Expect(t, 200, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"state_event": "close"}).Expect(t, 200, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"state_event": "reopen"}).Expect(t, 200, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 200, "")
	s.Drain(t)
	if td := todosOf(bob.Token); len(td) != 0 {
		t.Fatalf("bob's todos after the merge %v", td)
	}
	mu.Lock()
	defer mu.Unlock()
	var actions []string
	for _, ev := range got {
		if ev.Action == event.Update && ev.MergeRequest.Title == "Hooked" {
			continue // the background merge status check may publish none; pushes may
		}
		actions = append(actions, string(ev.Action)+":"+ev.MergeRequest.State+":"+ev.MergeRequest.Title)
	}
	want := []string{"open:opened:Hooked", "update:opened:Hooked!", "close:closed:Hooked!", "reopen:reopened:Hooked!", "merge:merged:Hooked!"}
	if !slices.Equal(actions, want) {
		t.Fatalf("events %v, want %v", actions, want)
	}
	ev := got[0]
	if ev.ProjectID != p.ID || ev.UserID != alice.ID || ev.MergeRequest.IID != 1 || ev.MergeRequest.URL != mr.WebURL ||
		!slices.Equal(ev.MergeRequest.Labels, []string{"a", "b"}) || ev.MergeRequest.AssigneeID != bob.ID ||
		ev.MergeRequest.SHA != sha || ev.MergeRequest.LastCommit == nil || ev.MergeRequest.LastCommit.ID != sha ||
		!strings.HasPrefix(ev.MergeRequest.LastCommit.Message, "feature commit") || ev.MergeRequest.SourceProjectID != p.ID {
		t.Fatalf("event %+v", ev)
	}
	if last := got[len(got)-1]; last.MergeRequest.MergeCommitSHA == "" {
		t.Fatalf("merge event %+v", last)
	}
}

// TestRemoveSourceBranchRules: a protected source branch, or the default
// branch, is kept after the merge even when removal is asked.
func TestRemoveSourceBranchRules(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "keep")
	w.commit("f", map[string]string{"f": "f\n"})
	w.git("push", "-q", "origin", "feature")
	s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, "/repository/branches/feature/protect"), nil).Expect(t, 200, "")
	w.git("checkout", "-q", "-b", "other", "master")
	w.commit("o", map[string]string{"o": "o\n"})
	w.git("push", "-q", "origin", "other")
	openMR(t, alice.Client, p.ID, "feature", "master", "protected source")
	openMR(t, alice.Client, p.ID, "other", "master", "plain source")
	for iid := int64(1); iid <= 2; iid++ {
		v := s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, iid, "/merge"), map[string]any{"should_remove_source_branch": true}).
			Expect(t, 200, "").Object(t)
		if v["should_remove_source_branch"] != true {
			t.Fatalf("!%d %v", iid, v)
		}
	}
	heads := w.git("ls-remote", "--heads", "origin")
	if !strings.Contains(heads, "refs/heads/feature") || strings.Contains(heads, "refs/heads/other") {
		t.Fatalf("heads after merges:\n%s", heads)
	}
}
