// Package mergerequest is the public contract of the merge requests
// module: the Service that opens, changes, merges and reads merge
// requests, its command inputs, the record it returns (MergeRequest,
// named by an ID and, in its project, an IID), and its errors. The event
// the module publishes is package event's.
//
// An HTTP request, a page, a background subscriber (merge when pipeline
// succeeds), an admin command and an embedder's Go code all go through
// this Service, as the principal auth.FromContext(ctx) names; the
// module's HTTP adapter only decodes, calls it, renders GitLab's JSON and
// maps the errors below to GitLab's answers.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the
// cycle. It imports the collab module's contract (target), so that
// ErrNotFound is a noteable's not-found for the modules that know no
// owner.
package mergerequest
