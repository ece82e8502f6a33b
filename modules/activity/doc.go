// Package activity records what happens in projects (created, updated,
// joined, left, and later pushed to, opened, commented on...) and serves the
// activity feeds: GET /projects/:id/events and GET /users/:id/events.
//
// It listens to the events other modules publish through core/events and
// keeps its own table of feed entries; it never changes another module's
// data. Modules above it that have something to show in the feeds publish an
// activity.Event; modules below it (projects) are heard through their own
// event types. It imports core and the public packages of identity and
// projects only.
package activity
