// Package entry is the public contract of the activity module: the Service
// that reads the activity feeds (a project's, a user's, the caller's own),
// the filter a read takes, the record it returns (Entry, named by an ID)
// and its errors.
//
// An HTTP request, a page and an embedder's Go code read the feeds through
// this Service, as the principal auth.FromContext(ctx) names; the module's
// HTTP adapter only decodes, calls it, renders GitLab's Event resource and
// maps the errors below to GitLab's answers. What a module publishes to add
// an entry is modules/projects/feed (feed.Event), below every publisher.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the cycle.
// It imports the feed contract (modules/projects/feed) only.
package entry
