// Package internal implements the issues module: the issue, label and
// milestone tables and their ordering buckets (store.go), the service that
// implements issue.Service (issues.go, labels.go, grouplabels.go,
// milestones.go, groupmilestones.go, labelevents.go), the kind it
// registers with the collab module (kinds.go) and the push and merge
// subscribers that close issues named by commit messages (closer.go). The
// files named http*.go are the HTTP adapter: GitLab 9.x's operations and
// views, the error table, and the collab seams' rendered views
// (httpseams.go).
package internal
