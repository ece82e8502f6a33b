// Package gitrepo is the repository module's contract in the open (issue
// 36, "A module's anatomy"): the sentinel errors its services return, what
// a merge takes (MergeSpec) and the diff entries it returns (Diff), and
// the module's settings (Config). The module's internal/ implements the
// services over these types and its HTTP adapter maps the errors to
// GitLab's answers; other modules import this package (or the root
// package's re-exports) and decide with errors.Is.
//
// Commits are read as gitread.Commit; events are package event's. The
// package imports nothing of Fennec.
package gitrepo
