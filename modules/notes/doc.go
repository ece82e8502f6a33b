// Package notes is the notes module: comments and system notes on the
// noteables other modules own (issues, project snippets, merge requests),
// served as /projects/:id/<noteables>/:ref/notes for every kind registered
// with ProvideKinds; @mentions (todos for the mentioned), participants and
// subscriptions of a noteable. It imports identity, projects and todos, and
// knows no noteable's internals.
package notes
