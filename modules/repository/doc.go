// Package repository owns the git repositories of projects and everything
// served from them:
//
//   - one bare repository per project on disk, created, forked (objects
//     hard-linked) and removed with the project, imported from import_url
//     in the background, repacked by housekeeping and by `fennec repo gc`
//     (`repo fsck` checks one); the object database and pack protocol are
//     its own (internal/gitpack, internal/gitserve);
//   - git over smart HTTP (clone, fetch, push with branch protection), and
//     over SSH (ssh_listen) with the SSH keys users add through the identity
//     module, on the same engine and rules (internal/sshserver.go);
//   - the repository API: tree, blobs, files, raw, archive, commits (list,
//     create, diff, cherry-pick), compare, contributors, branches and
//     protected branches, tags and releases (9.x's release notes of a tag
//     and the releases API with asset links, one table), commit statuses,
//     comments and the discussions (threads) made of them;
//   - the merge engine, repository/merge (pure Go three-way merges);
//   - PushEvent (package event): every ref that moves, by a push or the API,
//     is journaled before it moves and yields exactly one PushEvent through
//     the outbox, replayed at start after a crash.
//
// Repositories live at <data>/repositories/@hashed/ab/cd/<sha256(id)>.git,
// keyed by the project id so renames and transfers move nothing. The module
// imports core and the public packages of identity and projects; Store is
// what other modules may use of it. Its contract is defined in the open:
// package gitrepo (errors, MergeSpec, Diff, Config), gitread (the read
// surface), commitstatus and event.
package repository
