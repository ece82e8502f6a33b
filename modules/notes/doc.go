// Package notes is the notes module: comments and system notes on the
// noteables other modules own (issues, project snippets, merge requests),
// served as /projects/:id/<noteables>/:ref/notes for every kind registered
// with ProvideKinds; @mentions (todos for the mentioned), participants and
// subscriptions of a noteable; award emoji on noteables and their notes
// (.../:ref/award_emoji, .../notes/:note_id/award_emoji), whose thumbsup and
// thumbsdown the owners show as upvotes and downvotes (Service.Votes);
// discussions, the threads notes make (.../:ref/discussions), with line
// comments and resolvable threads on the kinds that ask for them
// (Kind.CheckPosition, Kind.Resolvable). It imports identity, projects
// and todos, and knows no noteable's internals.
//
// It shows user notes in the activity feeds (feed kind "Note", seen by whoever
// may see the note's noteable) and publishes NoteEvent (package event) for the
// webhooks and notifications modules. The contract's types live in package
// noteable and are re-exported here; a deleted project's notes, awards and
// subscriptions go with it, a deleted user's notes and awards stay (by the
// ghost user).
package notes
