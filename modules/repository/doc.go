// Package repository owns the git repositories of projects: one bare
// repository per project on disk, created, forked and removed with the
// project; and (in later issues) git over HTTP, the repository API, and the
// merge engine in repository/merge.
//
// Repositories live at <data>/repositories/@hashed/ab/cd/<sha256(id)>.git,
// keyed by the project id so renames and transfers move nothing. The module
// imports the public packages of identity and projects, and core.
package repository
