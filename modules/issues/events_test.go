package issues_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/issues"
	"github.com/fennec-forge/fennec/modules/projects"
)

// TestIssueEvents: every change publishes an IssueEvent (the webhooks'
// Issue Hook) with the action and the issue as it is after the change.
func TestIssueEvents(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []issues.IssueEvent
	listener := fennec.NewModule("issue-listener", fennec.ProvideSubscribers(func() []events.Subscriber {
		return []events.Subscriber{events.Subscribe("test.issues", func(_ context.Context, ev issues.IssueEvent) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev)
			return nil
		})}
	}))
	s := start(t, fennectest.WithOptions(fennec.WithModules(listener)))
	alice := s.CreateUser(t, "alice")
	p := newProject(t, alice.Client, "hooks", "private")
	i := newIssue(t, alice.Client, p.ID, "first", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"b", "a"} })
	for _, o := range []*gitlab.UpdateIssueOptions{{Title: gitlab.Ptr("second")}, {StateEvent: gitlab.Ptr("close")},
		{StateEvent: gitlab.Ptr("close")}, {StateEvent: gitlab.Ptr("reopen")}} {
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, i.IID, o); err != nil {
			t.Fatal(err)
		}
	}
	s.drain(t)
	mu.Lock()
	defer mu.Unlock()
	var actions []string
	for _, ev := range got {
		actions = append(actions, string(ev.Action)+":"+ev.Issue.State+":"+ev.Issue.Title)
	}
	want := []string{"open:opened:first", "update:opened:second", "close:closed:second", "reopen:reopened:second"}
	if !slices.Equal(actions, want) {
		t.Fatalf("events %v, want %v (a second close changes nothing)", actions, want)
	}
	ev := got[0]
	if ev.ProjectID != p.ID || ev.UserID != alice.ID || ev.Issue.IID != 1 || ev.Issue.URL != i.WebURL ||
		!slices.Equal(ev.Issue.Labels, []string{"a", "b"}) || ev.Issue.AuthorID != alice.ID {
		t.Fatalf("event %+v", ev)
	}
}

// TestCloser: the service the merge requests module asks which issues a
// text would close.
func TestCloser(t *testing.T) {
	t.Parallel()
	var closer issues.Closer
	var access projects.Access
	var lookup auth.UserLookup
	s := start(t, fennectest.WithExtract(&closer, &access, &lookup))
	alice := s.CreateUser(t, "alice")
	p := newProject(t, alice.Client, "mr", "public")
	other := newProject(t, alice.Client, "lib", "private")
	for k := 0; k < 3; k++ {
		newIssue(t, alice.Client, p.ID, "here")
	}
	newIssue(t, alice.Client, other.ID, "there")
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 3, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	ask := func(u *fennectest.User, texts ...string) []int64 {
		t.Helper()
		ctx := context.Background()
		if u != nil {
			au, err := lookup.LookupUser(ctx, itoa(u.ID))
			if err != nil {
				t.Fatal(err)
			}
			pr, err := auth.ForUser(au)
			if err != nil {
				t.Fatal(err)
			}
			ctx = auth.WithPrincipal(ctx, pr)
		}
		info, err := access.ResolveID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		list, err := closer.ClosedBy(ctx, info, texts...)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, v := range list {
			out = append(out, int64(v.ProjectID)*100+int64(v.IID))
		}
		return out
	}
	// #3 is closed already; #9 does not exist; lib is private.
	if got := ask(alice, "Fix login", "Closes #1, #3 and #9", "also fixes alice/lib#1 and #2"); !slices.Equal(got, []int64{p.ID*100 + 1, other.ID*100 + 1, p.ID*100 + 2}) {
		t.Fatalf("alice: %v", got)
	}
	if got := ask(nil, "Closes #1, #3 and #9", "also fixes alice/lib#1 and #2"); !slices.Equal(got, []int64{p.ID*100 + 1, p.ID*100 + 2}) {
		t.Fatalf("anonymous: %v", got)
	}
}
