// Package markup is Fennec's one renderer of Markdown and source code, used
// by every page that shows either (README files, Markdown blobs, release
// notes, and later issues, merge requests and notes).
//
// Render turns GitLab-flavoured Markdown into sanitised HTML: GFM (tables,
// task lists, strikethrough, autolinks) with goldmark, heading anchors,
// fenced code highlighted by chroma, GitLab references (#12, !3, $4,
// @user, commit ids, group/project#12) linked when a Resolver says the
// viewer may see them, and relative links and images resolved into the
// repository at a ref. The HTML then passes bluemonday's user-content
// policy, so raw HTML, event handlers and javascript: or data: URLs never
// reach a page. Highlight colours a file line by line, each line's HTML
// whole on its own, for the blob view's numbered rows. Stylesheet is the
// CSS of both, light and dark.
//
// It imports no other package of this repository.
package markup
