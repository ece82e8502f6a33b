// Package event is the public contract of the event the merge requests
// module publishes (MergeRequestEvent): what listeners such as the webhooks
// module need to build GitLab's Merge Request Hook. It imports no Fennec
// package; the payload waits in the outbox, so its JSON and topic are frozen.
package event
