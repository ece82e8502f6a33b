// Package activity serves the activity feeds, GET /projects/:id/events and
// GET /users/:id/events, from a table of feed entries it keeps itself.
//
// It only listens: it records what the events of the modules below it say
// (projects created, updated, deleted; members joined and left; refs pushed;
// users deleted) and the feed.Event entries any module publishes, and it
// never changes another module's data. A module with something to show in
// the feeds (notes, issues, merge requests) publishes feed.Event and
// registers a feed.Kind for its target type, both from
// modules/projects/feed, and needs no change here: that package sits below
// every publisher, this one above them all (see ARCHITECTURE.md, "Feed
// entries and noteables"). The names Event and Action here are that
// contract's, for readers of the feed.
//
// An entry is shown to callers who may read its project and, when it has a
// target, whom the target's kind lets see it; entries outside any project
// (a deleted project's tombstone) to their author and administrators.
//
// It imports core and the public packages of identity, projects (with
// projects/feed) and repository (for its push events).
package activity
