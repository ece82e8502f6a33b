// Package snippets is the snippets module: project snippets
// (/projects/:id/snippets, the spec's section) and GitLab 9.x's personal
// snippets (/snippets), with their raw content, who may see and change
// them, and the "Snippet" target kind through which the collab module
// serves /projects/:id/snippets/:snippet_id/notes.
//
// A project snippet is as visible as the stricter of its own visibility and
// its project's: the caller must read the project with its snippets
// feature on (projects.Access, ReadSnippets), then members and
// administrators see every snippet, the author their own, and others the
// public ones (and internal ones when signed in and not external). Reporters
// and above create (projects.CreateSnippet); the author or a Master changes
// and deletes; archived projects refuse all three.
//
// Notes on snippets give no todos, as in GitLab 9.x (its notes skip todos
// for snippets): the module's kind has no Render, and the collab module
// gives no todo on a kind without one.
//
// Its contract is package snippet (modules/snippets/snippet): the
// snippet.Service this module provides, which the HTTP adapter, and any
// other caller, goes through; its records, inputs and errors. This package
// only wires the module (Module()).
//
// It owns the snippets and their content; it removes a deleted project's
// snippets and a deleted user's, and a deleted snippet's notes through
// target.Service. It imports core and the public packages of identity,
// projects and collab.
package snippets
