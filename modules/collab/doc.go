// Package collab is the collaboration base: what issues, snippets and
// merge requests share, served once for every kind of target a module
// registers (ProvideKinds, one target.Kind per type: the one registry).
//
//   - notes on a target (/projects/:id/<targets>/:ref/notes), system notes
//     and @mentions; discussions, the threads notes make
//     (.../:ref/discussions), with line comments and resolvable threads on
//     the kinds that ask for them (Kind.CheckPosition, Kind.Resolvable);
//   - award emoji on targets and their notes (.../:ref/award_emoji,
//     .../notes/:note_id/award_emoji), whose thumbsup and thumbsdown the
//     owners show as upvotes and downvotes (Service.Votes);
//   - subscriptions and participants of a target's conversation;
//   - every user's todos (GET /todos, POST /todos/:id/mark_as_done, POST
//     /todos/mark_as_done), given on assignment, on an @mention and by the
//     explicit POST .../todo of a target;
//   - who may see a target, for the todos and the activity feeds
//     (Service.Visible, "Note" entries included).
//
// The contract is package target (the Service, Kind, Noteable, Target,
// the todo actions and the errors); NoteEvent is package event. It imports
// identity and projects, and knows no target's internals. The stores,
// outbox topics and subscriber names are those of the notes and todos
// modules it replaced (notes.notes, todos.todos, "notes.note"...), so data
// written before reads the same. A deleted project's notes, awards,
// subscriptions and todos go with it; a deleted user's notes and awards
// stay (by the ghost user), their own todo list goes.
package collab
