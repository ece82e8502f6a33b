// Package webhooks delivers GitLab's hook payloads: project hooks (their
// configuration is the projects module's) and system hooks (kept here,
// GET/POST/DELETE /hooks, administrators only).
//
// It listens to the events of the modules below it through the outbox
// (core/events): pushes and tag pushes (repository), issues, notes (collab), merge
// requests, jobs and pipelines, project and user creation and removal. A
// handler runs in the bus's transaction and only enqueues: one delivery per
// hook in a persisted queue that commits with the event's
// acknowledgement. One worker per hook sends its queue in order, through
// core/netguard (local destinations refused unless allow_local_requests),
// retrying connection errors and 5xx with exponential backoff, and records
// every attempt in the hook's delivery log (module section "webhooks"),
// which project Masters read and resend through webhook.Service (the API
// is its adapter, internal/http.go; deliveries go out through
// internal/httpclient.go).
//
// It imports core, and the public packages of identity, projects,
// repository, ci, collab, issues and mergerequests (their events, and the
// projects module's Access and Hooks).
package webhooks
