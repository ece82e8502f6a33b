package issues_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/event"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestIssueEvents: every change publishes an IssueEvent (the webhooks'
// Issue Hook) with the action and the issue as it is after the change.
func TestIssueEvents(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []event.IssueEvent
	listener := fennec.NewModule("issue-listener", fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
		return []events.Subscriber{events.Subscribe("test.issues", func(_ context.Context, ev event.IssueEvent) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev)
			return nil
		})}
	}))
	s := start(t, fennectest.WithOptions(fennec.WithModules(listener)))
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "hooks", "private")
	i := newIssue(t, alice.Client, p.ID, "first", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"b", "a"} })
	for _, o := range []*gitlab.UpdateIssueOptions{{Title: gitlab.Ptr("second")}, {StateEvent: gitlab.Ptr("close")},
		{StateEvent: gitlab.Ptr("close")}, {StateEvent: gitlab.Ptr("reopen")}} {
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, i.IID, o); err != nil {
			t.Fatal(err)
		}
	}
	s.Drain(t)
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
// text would close (target.Closer, the collab contract's seam), with each
// issue's reference from the asking project.
func TestCloser(t *testing.T) {
	t.Parallel()
	var closer target.Closer
	var access projects.Access
	var lookup auth.UserLookup
	s := start(t, fennectest.WithExtract(&closer, &access, &lookup))
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "mr", "public")
	other := stocktest.NewProject(t, alice.Client, "lib", "private")
	for k := 0; k < 3; k++ {
		newIssue(t, alice.Client, p.ID, "here")
	}
	newIssue(t, alice.Client, other.ID, "there")
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 3, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	var refs []string
	ask := func(u *fennectest.User, texts ...string) []int64 {
		t.Helper()
		ctx := context.Background()
		if u != nil {
			au, err := lookup.LookupUser(ctx, store.IDString(u.ID))
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
		refs = nil
		for _, c := range list {
			// The view is the issue's JSON, as closes_issues answers it.
			var v struct {
				ProjectID int64 `json:"project_id"`
				IID       int64 `json:"iid"`
			}
			if b, err := json.Marshal(c.View); err != nil || json.Unmarshal(b, &v) != nil {
				t.Fatalf("view %#v: %v", c.View, err)
			}
			out = append(out, v.ProjectID*100+v.IID)
			refs = append(refs, c.Ref)
		}
		return out
	}
	// #3 is closed already; #9 does not exist; lib is private.
	if got := ask(alice, "Fix login", "Closes #1, #3 and #9", "also fixes alice/lib#1 and #2"); !slices.Equal(got, []int64{p.ID*100 + 1, other.ID*100 + 1, p.ID*100 + 2}) {
		t.Fatalf("alice: %v", got)
	}
	if !slices.Equal(refs, []string{"#1", "alice/lib#1", "#2"}) {
		t.Fatalf("alice's references: %v", refs)
	}
	if got := ask(nil, "Closes #1, #3 and #9", "also fixes alice/lib#1 and #2"); !slices.Equal(got, []int64{p.ID*100 + 1, p.ID*100 + 2}) {
		t.Fatalf("anonymous: %v", got)
	}
}

// TestLabelAndMilestoneServices: what the merge requests module calls to
// attach labels and milestones (the collab contract's seams, which this
// module provides).
func TestLabelAndMilestoneServices(t *testing.T) {
	t.Parallel()
	var labels target.Labels
	var milestones target.Milestones
	s := start(t, fennectest.WithExtract(&labels, &milestones))
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "svc", "private")
	other := stocktest.NewProject(t, alice.Client, "svc2", "private")
	ctx := context.Background()
	ids, err := labels.Ensure(ctx, p.ID, []string{"zeta", "alpha", "zeta"})
	if err != nil || len(ids) != 2 {
		t.Fatalf("ensure %v %v", ids, err)
	}
	again, _ := labels.Ensure(ctx, p.ID, []string{"alpha"})
	if len(again) != 1 || again[0] != ids[1] {
		t.Fatalf("ensure again %v (first %v)", again, ids)
	}
	if _, err := labels.Ensure(ctx, p.ID, []string{"a,b"}); err == nil {
		t.Fatal("a label with a comma was made")
	}
	names, err := labels.Names(ctx, ids)
	if err != nil || !slices.Equal(names, []string{"alpha", "zeta"}) {
		t.Fatalf("names %v %v", names, err)
	}
	if found, _ := labels.Find(ctx, p.ID, []string{"zeta", "nope"}); !slices.Equal(found, ids[:1]) {
		t.Fatalf("find %v", found)
	}
	m, _, err := alice.Client.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1")})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := milestones.Milestone(ctx, p.ID, m.ID); err != nil || v.Title != "v1" || v.IID != 1 {
		t.Fatalf("milestone %+v %v", v, err)
	}
	if _, err := milestones.Milestone(ctx, other.ID, m.ID); !errors.Is(err, issue.ErrMilestoneNotFound) {
		t.Fatalf("another project's milestone: %v", err)
	}
	if v, err := milestones.ByTitle(ctx, p.ID, "v1"); err != nil || int64(v.ID) != m.ID {
		t.Fatalf("by title %+v %v", v, err)
	}
}
