// Package internal implements the snippets module: the snippet table and
// the content bucket beside it, who may see and change a snippet, the
// project snippet and personal snippet operations, the "Snippet" noteable
// kind for the notes module and the subscribers that remove the snippets of
// deleted projects and users. Only modules/snippets may import it.
package internal
