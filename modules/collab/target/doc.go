// Package target is the public contract of the collab module: the
// targets of collaboration (a Noteable as its owning module describes it,
// a Target as a todo names it), the one registry of their kinds (Kind:
// type, path, how to resolve, who may see, how to render, who may
// comment), the Service the owners, the notifications and the activity
// feeds call, the todo actions, the sentinel errors and the rule of what
// an @mention is (Mentions). Other modules import this package; the
// module's root package (collab) only wires it. It imports the projects
// module's public package (a kind resolves within a project).
package target
