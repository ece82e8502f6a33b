// Package internal implements the snippets module: the snippet table and
// the content bucket beside it (store.go), snippet.Service with who may see
// and change a snippet (service.go, project.go, personal.go, validate.go),
// the HTTP adapter that serves GitLab's project and personal snippet
// routes over that service (http*.go, the only files that speak HTTP), the
// "Snippet" target kind for the collab module (notekind.go) and the
// subscribers that remove the snippets of deleted projects and users
// (subscribers.go). Only modules/snippets may import it.
package internal
