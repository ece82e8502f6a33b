package activity_test

import (
	"context"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// TestFeedKinds is how a module (issues, merge requests) puts its entries
// in the feeds without a change to the activity module: it publishes
// feed.Event and registers a target.Kind for its target type with the
// collab module, whose Visible decides who sees each target. Entries of a target type nobody
// registered are not shown; entries without a target need only the project.
func TestFeedKinds(t *testing.T) {
	t.Parallel()
	// Widgets with an even id are visible, as a confidential issue would
	// not be.
	s := start(t, withKinds(target.Kind{Type: "Widget", Visible: func(_ context.Context, p projects.ProjectInfo, targetID int64) (bool, error) {
		return p.ID > 0 && targetID%2 == 0, nil
	}}))
	alice := s.CreateUser(t, "alice")
	p := project(t, alice.Client, "widgets", "public")
	s.Drain(t)
	s.publish(t,
		feed.Event{ProjectID: p.ID, AuthorID: alice.ID, ActionName: feed.Opened, TargetID: 1, TargetType: "Widget", TargetTitle: "hidden", Key: "w:1"},
		feed.Event{ProjectID: p.ID, AuthorID: alice.ID, ActionName: feed.Opened, TargetID: 2, TargetType: "Widget", TargetTitle: "shown", Key: "w:2"},
		feed.Event{ProjectID: p.ID, AuthorID: alice.ID, ActionName: feed.Opened, TargetID: 4, TargetType: "Gadget", Key: "g:4"},
		feed.Event{ProjectID: p.ID, AuthorID: alice.ID, ActionName: feed.Closed, Key: "plain"},
	)
	for _, path := range []string{"/api/v4/projects/" + store.IDString(p.ID) + "/events", "/api/v4/users/" + store.IDString(alice.ID) + "/events"} {
		list := get(t, s, "", path).list(t)
		wantFeed(t, path, list, at("closed", p.ID), at("opened", p.ID), at("created", p.ID))
		if list[1]["target_title"] != "shown" {
			t.Fatalf("%s: the visible widget is not the one shown: %v", path, list[1])
		}
	}
}
