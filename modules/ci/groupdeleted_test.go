package ci_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

// A deleted group's CI variables go with it, its subgroups' too: they are
// secrets, kept for no one once the group is gone. Another group's stay.
func TestGroupVariablesGoWithTheGroup(t *testing.T) {
	t.Parallel()
	var bus *events.Bus
	s := startRunners(t, fennectest.WithExtract(&bus))
	c := s.Client
	newGroup := func(name string, parent int64) *gitlab.Group {
		t.Helper()
		opts := &gitlab.CreateGroupOptions{Name: gitlab.Ptr(name), Path: gitlab.Ptr(name)}
		if parent != 0 {
			opts.ParentID = gitlab.Ptr(parent)
		}
		g, _, err := c.Groups.CreateGroup(opts)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	gone := newGroup("gone", 0)
	sub := newGroup("sub", gone.ID)
	kept := newGroup("kept", 0)
	for _, g := range []*gitlab.Group{gone, sub, kept} {
		code, _, raw := rawJSON(t, http.MethodPost, fmt.Sprintf("%s/api/v4/groups/%d/variables", s.URL, g.ID),
			map[string]any{"key": "SECRET", "value": "secret-of-" + g.Path}, "PRIVATE-TOKEN", s.RootToken)
		if code != 201 {
			t.Fatalf("variable of %s: %d %s", g.Path, code, raw)
		}
	}
	if _, err := c.Groups.DeleteGroup(gone.ID, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// The store itself: no API shows a deleted group's variables.
	left := map[int64]int{}
	err := s.Store.View(context.Background(), func(tx *store.Tx) error {
		return store.Keys("ci.variables").ForEach(tx, func(_, raw []byte) error {
			var v struct {
				GroupID int64 `json:"group_id"`
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			left[v.GroupID]++
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if left[gone.ID] != 0 || left[sub.ID] != 0 || left[kept.ID] != 1 {
		t.Errorf("variables left: %v (gone %d, sub %d, kept %d)", left, gone.ID, sub.ID, kept.ID)
	}
	if list, _, err := c.GroupVariables.ListVariables(kept.ID, nil); err != nil || len(list) != 1 || list[0].Value != "secret-of-kept" {
		t.Errorf("the kept group's variables: %v %v", list, err)
	}
}
