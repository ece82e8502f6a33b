// Package todos is the todos module: every user's list of things to act on
// (GET /todos, POST /todos/:id/mark_as_done, POST /todos/mark_as_done) and
// the service through which the modules that own targets (issues, merge
// requests) and the notes module add and close todos: on assignment, on an
// @mention, and on the explicit POST .../todo of a target. Targets are
// rendered by the kind their module registers (ProvideKinds), so this
// module knows no issue or merge request internals. It imports identity and
// projects. The contract's types live in package todo and are re-exported
// here; a deleted project's todos and a deleted user's list go with them.
package todos
