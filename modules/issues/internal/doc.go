// Package internal implements the issues module: the issue, label and
// milestone tables and their ordering buckets, the service (create, update,
// close, delete, list), the GitLab 9.x operations, the kinds it registers
// with notes, todos and the feeds, and the push subscriber that closes
// issues named by commit messages.
package internal
