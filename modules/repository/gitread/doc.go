// Package gitread is the everyday read surface of a project's repository
// for the modules above the repository module (CI's .gitlab-ci.yml, the
// issue closer's walk over a push, the commit lookups of notifications and
// webhooks, and the web pages): resolve a revision, read a commit, a file,
// a page of a tree, a walk of the history, an annotated tag. It hands out
// plain values, never go-git's types, so the engine behind it can change
// without its callers.
//
// Every method asks projects.Access for the right to read the code, as
// the principal in ctx: background work passes auth.System() (see
// ARCHITECTURE.md, "Background principals"). A project the caller may not
// see is projects.ErrNotFound; one whose code they may not read,
// projects.ErrForbidden.
//
// The package imports nothing of Fennec; its implementation is the
// repository module's (internal/gitread.go).
package gitread
