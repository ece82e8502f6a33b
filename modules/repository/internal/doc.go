// Package internal implements the repository module. Only
// modules/repository may import it.
//
// It has the anatomy of ARCHITECTURE.md ("A module's anatomy"): the
// services (Reader, Writer, Statuses, Merges, GitRead, Git, the importer,
// housekeeping, the SSH server) speak no HTTP and return the domain errors
// of package gitrepo and errors.go; the HTTP adapter is the files named
// http*.go: the REST routes with their inputs and GitLab views
// (httpviews.go: the commit resource with api.GitTime), git's smart HTTP
// protocol (httpgit.go, over the Git service that SSH serves too) and
// mapErrors (httperrors.go), the one table from domain errors to answers.
package internal
