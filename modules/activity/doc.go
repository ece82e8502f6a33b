// Package activity serves the activity feeds, GET /projects/:id/events and
// GET /users/:id/events, from a table of feed entries it keeps itself.
//
// It only listens: it records what the events of the modules below it say
// (projects created, updated, deleted; members joined and left; refs pushed;
// users deleted) and the feed.Event entries any module publishes, and it
// never changes another module's data. A module with something to show in
// the feeds (issues, merge requests, the collab module's notes) publishes
// feed.Event (modules/projects/feed, below every publisher) and registers
// its target type with the collab module (collab.ProvideKinds, the one
// registry of target kinds), whose target.Service.Visible this module asks;
// it needs no change for a new kind (see ARCHITECTURE.md, "Feed entries and
// noteables" and "The collaboration base"). The names Event and Action here
// are the feed contract's, for readers of the feed.
//
// An entry is shown to callers who may read its project and, when it has a
// target, whom the target's kind lets see it (none without the collab
// module); entries outside any project (a deleted project's tombstone) to
// their author and administrators.
//
// The feeds are read through entry.Service (modules/activity/entry, the
// contract: the Service, its Filter, the Entry record and its errors);
// internal/ implements it, and its HTTP adapter (internal/http*.go) only
// decodes, calls it and renders GitLab's Event resource.
//
// It imports core and the public packages of identity, projects (with
// projects/feed), repository (for its push events) and collab (target).
package activity
