// Package internal implements the merge requests module: the store
// (records, ordering keys), the API operations, the merge, and the event
// subscribers that follow pushes and pipelines.
package internal
