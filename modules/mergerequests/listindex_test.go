package mergerequests_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/mergerequests/internal"
)

// TestListIndexesMigration: migration 4 builds the list filters' indexes
// and the dashboard's keys from the merge requests of a store that has
// none (one written before them): emptied, the filters and the dashboard
// find nothing; rebuilt, they find what they found before.
func TestListIndexesMigration(t *testing.T) {
	t.Parallel()
	f := newFiltersFixture(t)
	c := f.s.Client
	d := f.s.SignedIn(t, "dev", f.dev.Password)
	queries := map[string]gitlab.ListProjectMergeRequestsOptions{
		"label":     {Labels: labels("bug")},
		"no label":  {Labels: labels("None")},
		"milestone": {Milestone: gitlab.Ptr("v1")},
		"search":    {Search: gitlab.Ptr("segfault")},
		"author":    {AuthorID: gitlab.Ptr(f.dev.ID)},
		"assignee":  {AssigneeID: gitlab.AssigneeID(f.root)},
	}
	before := map[string][]int64{}
	for name, q := range queries {
		before[name], _ = f.list(t, c, q)
	}
	dashboard := func() string {
		return strings.Join(rowsOf(d.Get(t, "/dashboard/merge_requests?scope=all&state=all").Body, "root/filtered"), " ")
	}
	if got := dashboard(); got != "4 3 2 1" {
		t.Fatalf("dashboard before: %q", got)
	}
	var up func(*store.Tx) error
	for _, m := range internal.Migrations() {
		if m.Version == 4 {
			up = m.Up
		}
	}
	if up == nil {
		t.Fatal("no migration 4")
	}
	ctx := context.Background()
	if err := f.s.db.Update(ctx, func(tx *store.Tx) error {
		for _, name := range []string{"mergerequests.by_user", "mergerequests.merge_requests#author", "mergerequests.merge_requests#assignee",
			"mergerequests.merge_requests#label", "mergerequests.merge_requests#milestone", "mergerequests.merge_requests#has",
			"mergerequests.merge_requests#search"} {
			if _, err := store.Keys(name).DeletePrefix(tx, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Without the indexes the filters keep nothing ("None" keeps all).
	if got, _ := f.list(t, c, queries["label"]); len(got) != 0 {
		t.Fatalf("label without its index: %v", got)
	}
	if got := dashboard(); got != "" {
		t.Fatalf("dashboard without its keys: %q", got)
	}
	if err := f.s.db.Update(ctx, up); err != nil {
		t.Fatal(err)
	}
	for name, q := range queries {
		if got, _ := f.list(t, c, q); !slices.Equal(got, before[name]) {
			t.Errorf("%s after the migration: %v, want %v", name, got, before[name])
		}
	}
	if got := dashboard(); got != "4 3 2 1" {
		t.Errorf("dashboard after the migration: %q", got)
	}
	// And the rebuilt keys follow later changes.
	f.s.Call(t, f.s.RootToken, http.MethodPut, mrPath(f.project.ID, 3), map[string]any{"labels": "bug"}).Expect(t, 200, "")
	if got, _ := f.list(t, c, queries["label"]); !slices.Equal(got, []int64{3, 2, 1}) {
		t.Errorf("label after a change: %v", got)
	}
}
