package repository_test

import (
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestFilePagesRenderMarkdownAndCode: the overview renders the README with
// its relative image resolved into the repository at the default branch, a
// Markdown file in a directory resolves its links from there, raw HTML in
// it is cut down, and a Go file's lines are highlighted with the
// stylesheet's classes.
func TestFilePagesRenderMarkdownAndCode(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "docs", "public")
	stocktest.CommitFiles(t, s.Client, int64(p.ID), "master", "docs", map[string]string{
		"README.md":     "# Hello docs\n\n![logo](img/logo.png) See [the guide](docs/guide.md).\n\n<script>alert(1)</script>\n",
		"docs/guide.md": "# Guide\n\n[up](../README.md) ![shot](shot%201.png)\n",
		"main.go":       "package main\n\n/* a comment\nover two lines */\nfunc main() {}\n",
	})
	c := s.NewBrowser(t)
	home := c.Get(t, "/root/docs")
	wantPage(t, "overview", home, 200, `<h1 id="hello-docs">Hello docs`,
		`<img src="`+s.URL+`/root/docs/-/raw/master/img/logo.png" alt="logo">`,
		`<a href="`+s.URL+`/root/docs/-/blob/master/docs/guide.md" rel="nofollow noreferrer">the guide</a>`)
	if strings.Contains(home.Body, "<script>alert(1)") {
		t.Errorf("the README's script reached the page")
	}
	wantPage(t, "markdown in a directory", c.Get(t, "/root/docs/-/blob/master/docs/guide.md"), 200,
		`<a href="`+s.URL+`/root/docs/-/blob/master/README.md" rel="nofollow noreferrer">up</a>`,
		`<img src="`+s.URL+`/root/docs/-/raw/master/docs/shot%201.png" alt="shot">`)
	wantPage(t, "highlighted code", c.Get(t, "/root/docs/-/blob/master/main.go"), 200,
		`<span class="hl-kn">package</span>`, `<span class="hl-cm">over two lines */</span>`)
}
