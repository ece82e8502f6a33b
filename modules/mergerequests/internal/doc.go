// Package internal implements the merge requests module's contract
// (package mergerequest): the store (store.go: records, ordering keys), the
// service (service.go, mergerequests.go, merge.go, commitmrs.go,
// milestonemrs.go, labelevents.go, discussions.go), the registrations with
// notes, todos and feeds (kinds.go), the subscribers that follow pushes and
// pipelines and carry out merge when pipeline succeeds through the same
// Merge (subscribers.go), and the recovery of merges a stop cut short
// (recover.go). The service returns domain errors and imports no HTTP;
// the HTTP adapter is the http*.go files: they decode, call the service,
// render GitLab's views from its records and map its errors.
package internal
