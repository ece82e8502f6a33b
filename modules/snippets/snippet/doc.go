// Package snippet is the public contract of the snippets module: the
// Service that creates, reads, changes and deletes project and personal
// snippets, its command input (Fields), the record it returns (Snippet,
// named by an ID), its errors and the noteable type of notes on snippets.
//
// An HTTP request, a page, an admin command and an embedder's Go code all
// go through this Service, as the principal auth.FromContext(ctx) names;
// the module's HTTP adapter only decodes, calls it, renders GitLab's JSON
// and maps the errors below to GitLab's answers.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the
// cycle. It imports the collab module's contract (target) only, so that
// ErrNotFound is a noteable's not-found for the modules that know no owner.
package snippet
