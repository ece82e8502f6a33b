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
// Both are bounded, so a hostile file costs no more than its size: a text
// over MaxRenderBytes (1 MiB), or nested more than 100 quotes or lists
// deep, is rendered as escaped plain text in a <pre>; a file over
// MaxHighlightBytes (512 KiB) or MaxHighlightLines (20,000) is returned as
// escaped lines without colour. The same input gives the same bytes.
//
// Heading ids follow GitLab's slugs (lower case, letters, digits, "_" and
// "-" kept, spaces as "-", repeats numbered "-1", "-2"). Fully qualified
// links, the ones to this server's own pages included (they are built on
// Context.BaseURL), carry rel="nofollow noreferrer"; noreferrer implies
// noopener in browsers.
//
// It imports no other package of this repository.
package markup
