package internal

// The project's overview and its Files pages: tree, blob, raw and blame,
// at GitLab's URLs (/<project>, /<project>/-/tree/<ref>/<path>, ...), and
// the redirects of GitLab 9.x's URLs without "/-/".

import (
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
)

const (
	// treePageSize bounds the entries a tree page lists: a tree of
	// 100,000 entries is a hundred pages with next and previous links.
	treePageSize = 1000
	// maxDisplayBlob is the largest file the blob page shows; a larger
	// one is a link to its raw bytes, and nothing past its header is read.
	maxDisplayBlob = 1 << 20
	// maxRefOptions bounds the branches, and the tags, of the ref switcher.
	maxRefOptions = 100
	// maxOldPathTries bounds the projects a 9.x path is tried as.
	maxOldPathTries = 8
)

func (pg *pages) registerFilePages(s *web.Site) {
	t := s.Templates(pageTemplates, "templates/files/*.html", "templates/_shared.html")
	// The blob page's one script: line ranges (#L10-20), an enhancement.
	s.AddAsset("lines.js", linesScript)
	s.AddProjectTab(web.ProjectTab{Key: "home", Label: "Overview", Order: 10})
	// Reading the code needs ReadCode, which depends on the visibility
	// and on the visitor being external, not on a level alone: MinLevel
	// cannot say it, so the tab is always shown and the page answers (404
	// to a member who may not read the code, as the API's 403 would).
	s.AddProjectTab(web.ProjectTab{Key: "files", Label: "Files", Suffix: "/-/tree", Order: 20})
	s.Project("GET tree", func(w http.ResponseWriter, r *http.Request) { pg.tree(w, r, t) })
	s.Project("GET blob", func(w http.ResponseWriter, r *http.Request) { pg.blob(w, r, t) })
	s.Project("GET blame", func(w http.ResponseWriter, r *http.Request) { pg.blame(w, r, t) })
	s.Project("GET raw", pg.raw)
	s.Path(func(w http.ResponseWriter, r *http.Request, p string) bool { return pg.bare(w, r, p, t) })
}

// commitLine is a commit as a line of a page.
type commitLine struct {
	SHA, Title, Author, Href string
	When                     time.Time
}

func (pg *pages) commitLine(fullPath string, c *object.Commit) *commitLine {
	if c == nil {
		return nil
	}
	title, _, _ := strings.Cut(c.Message, "\n")
	return &commitLine{SHA: c.Hash.String(), Title: strings.TrimRight(title, "\r"), Author: c.Author.Name, When: c.Author.When,
		Href: pg.site.URL(projectURL(fullPath, "commit", c.Hash.String(), ""))}
}

// refSwitch is the ref switcher: a GET form to the page's key with the
// path, so that it works without scripts.
type refSwitch struct {
	Action, Path, Current string
	// Other is Current when it is none of the branches and tags listed
	// (a commit id, or past the bound).
	Other                  bool
	Branches, Tags         []string
	MoreBranches, MoreTags bool
}

// refSwitcher lists at most maxRefOptions branches (by name) and as many
// tags (in reverse name order, as the API's tags are).
func (pg *pages) refSwitcher(repo *git.Repository, fullPath, key, current, p string) refSwitch {
	rs := refSwitch{Action: pg.site.URL(projectURL(fullPath, key, "", "")), Path: p, Current: current}
	if iter, err := repo.Branches(); err == nil {
		_ = iter.ForEach(func(r *plumbing.Reference) error { rs.Branches = append(rs.Branches, r.Name().Short()); return nil })
	}
	if iter, err := repo.Tags(); err == nil {
		_ = iter.ForEach(func(r *plumbing.Reference) error { rs.Tags = append(rs.Tags, r.Name().Short()); return nil })
	}
	sort.Strings(rs.Branches)
	sort.Sort(sort.Reverse(sort.StringSlice(rs.Tags)))
	if len(rs.Branches) > maxRefOptions {
		rs.Branches, rs.MoreBranches = rs.Branches[:maxRefOptions], true
	}
	if len(rs.Tags) > maxRefOptions {
		rs.Tags, rs.MoreTags = rs.Tags[:maxRefOptions], true
	}
	rs.Other = !slices.Contains(rs.Branches, current) && !slices.Contains(rs.Tags, current)
	return rs
}

// switchRef answers the ref switcher's form (?ref=x&path=y on the bare
// key): the page of that ref and path. ok is false when the request is
// not one.
func (pg *pages) switchRef(w http.ResponseWriter, r *http.Request, key string) bool {
	q := r.URL.Query()
	ref := q.Get("ref")
	if ref == "" || r.PathValue("rest") != "" {
		return false
	}
	p, ok := cleanTreePath(q.Get("path"))
	if !ok || !validRef(ref) {
		pg.site.NotFound(w, r)
		return true
	}
	pg.site.Redirect(w, r, projectURL(r.PathValue("owner"), key, ref, p))
	return true
}

// entryView is one entry of a tree page; Icon names its CSS icon
// (ficon-dir, -file, -link, -submodule), drawn without a font.
type entryView struct {
	Icon, Label, Name, Type, Href, Size string
	Commit                              *commitLine
}

// treeView is a tree's listing: one page of its entries.
type treeView struct {
	Entries             []entryView
	ParentHref          string
	Page, Pages, Total  int
	PrevHref, NextHref  string
	LastCommitsPartial  bool
	FirstEntry, LastOne int
}

// listing builds the page'th page of the tree at dir of commit c.
func (pg *pages) listing(r *http.Request, info projects.ProjectInfo, repo *git.Repository, c *object.Commit, ref, dir string, t *object.Tree, page int) (treeView, error) {
	entries, err := listTree(repo, t, dir, false)
	if err != nil {
		return treeView{}, err
	}
	full := info.PathWithNamespace
	tv := treeView{Total: len(entries), Pages: max(1, (len(entries)+treePageSize-1)/treePageSize)}
	page = min(max(page, 1), tv.Pages)
	tv.Page = page
	lo, hi := (page-1)*treePageSize, min(page*treePageSize, len(entries))
	window := entries[lo:hi]
	tv.FirstEntry, tv.LastOne = lo+1, hi
	here := pg.site.URL(projectURL(full, "tree", ref, dir))
	if page > 1 {
		tv.PrevHref = here + "?page=" + strconv.Itoa(page-1)
	}
	if page < tv.Pages {
		tv.NextHref = here + "?page=" + strconv.Itoa(page+1)
	}
	if dir != "" {
		tv.ParentHref = pg.site.URL(projectURL(full, "tree", ref, parentDir(dir)))
	}
	objs, err := pg.rd.store.Objects(info.ID)
	if err != nil {
		return treeView{}, err
	}
	names := make([]string, len(window))
	for i, e := range window {
		names[i] = e.Name
	}
	last, complete := pg.lastCommits.of(r.Context(), repo, info.ID, c, dir, page, names)
	tv.LastCommitsPartial = !complete
	for _, e := range window {
		v := entryView{Name: visible(e.Name), Type: e.Type}
		switch e.Type {
		case "tree":
			v.Icon, v.Label, v.Href = "dir", "Directory", pg.site.URL(projectURL(full, "tree", ref, e.Path))
		case "commit":
			v.Icon, v.Label = "submodule", "Submodule"
		default:
			v.Icon, v.Label, v.Href = "file", "File", pg.site.URL(projectURL(full, "blob", ref, e.Path))
			if e.Mode == "120000" {
				v.Icon, v.Label = "link", "Symbolic link"
			}
			if _, size, err := objs.Stat(plumbing.NewHash(e.ID)); err == nil {
				v.Size = web.HumanSize(size)
			}
		}
		v.Commit = pg.commitLine(full, last[e.Name])
		tv.Entries = append(tv.Entries, v)
	}
	return tv, nil
}

// dirTree is the id of the tree at segs under root (zero when none).
func dirTree(repo *git.Repository, root plumbing.Hash, segs []string) plumbing.Hash {
	h := root
	for _, seg := range segs {
		t, err := repo.TreeObject(h)
		if err != nil {
			return plumbing.ZeroHash
		}
		e, err := t.FindEntry(seg)
		if err != nil || e.Mode != filemode.Dir {
			return plumbing.ZeroHash
		}
		h = e.Hash
	}
	return h
}

// treeEntries are a tree's entries by name (none for a zero or missing
// tree).
func treeEntries(repo *git.Repository, h plumbing.Hash) map[string]plumbing.Hash {
	out := map[string]plumbing.Hash{}
	if h == plumbing.ZeroHash {
		return out
	}
	t, err := repo.TreeObject(h)
	if err != nil {
		return out
	}
	for _, e := range t.Entries {
		out[e.Name] = e.Hash
	}
	return out
}

// crumbs lead from the project's files at ref to p, the last without a
// link.
func crumbs(info projects.ProjectInfo, ref, p string) []web.Crumb {
	out := []web.Crumb{{Label: info.Path, Href: projectURL(info.PathWithNamespace, "tree", ref, "")}}
	if p == "" {
		out[0].Href = ""
		return out
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		c := web.Crumb{Label: visible(seg)}
		if i < len(segs)-1 {
			c.Href = projectURL(info.PathWithNamespace, "tree", ref, strings.Join(segs[:i+1], "/"))
		}
		out = append(out, c)
	}
	return out
}

// treePage is the tree page's data.
type treePage struct {
	Ref, Dir string
	Commit   *commitLine
	Refs     refSwitch
	Tree     treeView
}

// tree is /-/tree/<ref>/<dir>; without a ref, the default branch's root.
func (pg *pages) tree(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	if pg.switchRef(w, r, "tree") {
		return
	}
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return
	}
	rest := r.PathValue("rest")
	var ref, dir string
	var c *object.Commit
	if rest == "" {
		var err error
		if c, err = resolveCommit(repo, "", info.DefaultBranch); err != nil {
			// An empty repository: the overview says how to fill it.
			pg.site.Redirect(w, r, projectURL(info.PathWithNamespace, "", "", ""))
			return
		}
		ref = info.DefaultBranch
	} else if ref, dir, c, ok = splitRef(repo, rest); !ok {
		pg.site.NotFound(w, r)
		return
	}
	dir, ok = cleanTreePath(dir)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	root, err := c.Tree()
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	sub := root
	if dir != "" {
		e, err := treeEntryAt(repo, root, dir)
		switch {
		case err == nil && e.Mode == filemode.Dir:
			sub, err = repo.TreeObject(e.Hash)
			if err != nil {
				pg.fail(w, r, err)
				return
			}
		case err == nil && e.Mode.IsFile():
			pg.site.Redirect(w, r, projectURL(info.PathWithNamespace, "blob", ref, dir))
			return
		default:
			pg.site.NotFound(w, r)
			return
		}
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	tv, err := pg.listing(r, info, repo, c, ref, dir, sub, page)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	title := "Files"
	if dir != "" {
		title = dir
	}
	t.Render(w, r, "tree", web.Page{Title: visible(title+" · "+ref) + " · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "files",
		Crumbs: crumbs(info, ref, dir),
		Data: treePage{Ref: ref, Dir: visible(dir), Commit: pg.commitLine(info.PathWithNamespace, c),
			Refs: pg.refSwitcher(repo, info.PathWithNamespace, "tree", ref, dir), Tree: tv}})
}

// parentDir is the directory holding p ("" at the root).
func parentDir(p string) string {
	return strings.TrimPrefix(path.Dir("/"+p), "/")
}

// treeEntryAt finds the entry at path p (clean, not empty) under root. It
// walks the trees itself because go-git's FindEntry refuses names with
// control characters, which a push may bring: their pages must work too.
func treeEntryAt(repo *git.Repository, root *object.Tree, p string) (*object.TreeEntry, error) {
	t := root
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		var found *object.TreeEntry
		for k := range t.Entries {
			if t.Entries[k].Name == seg {
				found = &t.Entries[k]
				break
			}
		}
		if found == nil {
			return nil, object.ErrEntryNotFound
		}
		if i == len(segs)-1 {
			return found, nil
		}
		if found.Mode != filemode.Dir {
			return nil, object.ErrEntryNotFound
		}
		var err error
		if t, err = repo.TreeObject(found.Hash); err != nil {
			return nil, err
		}
	}
	return nil, object.ErrEntryNotFound
}

// fileAtRef resolves the page's rest to a file: its ref, path and blob.
// ok is false once the page answered (404 for no such ref or file; a
// directory is redirected to its tree).
func (pg *pages) fileAtRef(w http.ResponseWriter, r *http.Request, key string) (projects.ProjectInfo, string, *fileAt, bool) {
	if pg.switchRef(w, r, key) {
		return projects.ProjectInfo{}, "", nil, false
	}
	info, repo, ok := pg.openCode(w, r)
	if !ok {
		return info, "", nil, false
	}
	ref, p, c, ok := splitRef(repo, r.PathValue("rest"))
	if !ok {
		pg.site.NotFound(w, r)
		return info, "", nil, false
	}
	if p, ok = cleanTreePath(p); !ok || p == "" {
		pg.site.NotFound(w, r)
		return info, "", nil, false
	}
	root, err := c.Tree()
	if err != nil {
		pg.fail(w, r, err)
		return info, "", nil, false
	}
	e, err := treeEntryAt(repo, root, p)
	switch {
	case err != nil || e.Mode == filemode.Submodule:
		pg.site.NotFound(w, r)
		return info, "", nil, false
	case e.Mode == filemode.Dir:
		pg.site.Redirect(w, r, projectURL(info.PathWithNamespace, "tree", ref, p))
		return info, "", nil, false
	}
	return info, ref, &fileAt{projectID: info.ID, repo: repo, commit: c, path: p, blob: e.Hash}, true
}

// imageTypes are the files the blob page shows as images, and the raw
// page serves with their type.
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".ico": "image/x-icon", ".avif": "image/avif",
	".svg": "image/svg+xml",
}

// activeTypes are files a browser would run as a page of this site: the
// raw page serves them as attachments in a sandbox, never inline.
var activeTypes = map[string]bool{".svg": true, ".html": true, ".htm": true, ".xhtml": true, ".xht": true, ".xml": true, ".shtml": true}

// isMarkdown says whether a file is rendered as Markdown.
func isMarkdown(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown", ".mkd", ".mkdn":
		return true
	}
	return false
}

// lineView is a line of a file with its number.
type lineView struct {
	N    int
	HTML template.HTML
}

func numbered(frags []template.HTML) []lineView {
	out := make([]lineView, len(frags))
	for i, f := range frags {
		out[i] = lineView{N: i + 1, HTML: f}
	}
	return out
}

// blobPage is the blob page's data.
type blobPage struct {
	Ref, Path, Name string
	Size            string
	// Kind is what is shown: "text", "markdown", "image", "binary",
	// "large" or "empty".
	Kind                            string
	Lines                           []lineView
	Markdown                        template.HTML
	RawHref, BlameHref, HistoryHref string
	SourceHref, RenderedHref        string
	Refs                            refSwitch
}

// blob is /-/blob/<ref>/<path>: the file highlighted with numbered lines
// (#L10), Markdown rendered (?plain=1: its source), images shown, binary
// and large files as a link to raw. At most maxDisplayBlob bytes are read.
func (pg *pages) blob(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	info, ref, f, ok := pg.fileAtRef(w, r, "blob")
	if !ok {
		return
	}
	full, name := info.PathWithNamespace, path.Base(f.path)
	d := blobPage{Ref: ref, Path: f.path, Name: visible(name),
		RawHref:     pg.site.URL(projectURL(full, "raw", ref, f.path)),
		BlameHref:   pg.site.URL(projectURL(full, "blame", ref, f.path)),
		HistoryHref: pg.site.URL(projectURL(full, "commits", ref, f.path)),
		Refs:        pg.refSwitcher(f.repo, full, "blob", ref, f.path)}
	br, err := pg.rd.openBlob(r.Context(), f.projectID, f.blob)
	if isMissing(err) {
		pg.site.NotFound(w, r)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	defer br.Close()
	d.Size = web.HumanSize(br.Size)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case imageTypes[ext] != "":
		d.Kind = "image"
	case br.Size > maxDisplayBlob:
		d.Kind = "large"
	case br.Size == 0:
		d.Kind = "empty"
	default:
		head, ct, err := sniffBlob(br)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		if ct != "text/plain; charset=utf-8" {
			d.Kind = "binary"
			break
		}
		rest, err := io.ReadAll(io.LimitReader(br, maxDisplayBlob))
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		text := string(head) + string(rest)
		plain := r.URL.Query().Get("plain") == "1"
		here := pg.site.URL(projectURL(full, "blob", ref, f.path))
		switch {
		case isMarkdown(name) && !plain:
			d.Kind, d.SourceHref = "markdown", here+"?plain=1"
			d.Markdown = pg.markdown(r.Context(), info, ref, parentDir(f.path), text)
		default:
			d.Kind, d.Lines = "text", numbered(highlight(name, text))
			if isMarkdown(name) {
				d.RenderedHref = here
			}
		}
	}
	t.Render(w, r, "blob", web.Page{Title: visible(f.path+" · "+ref) + " · " + info.NameWithNamespace, Project: projectHeader(info), Tab: "files",
		Crumbs: crumbs(info, ref, f.path), Data: d})
}

// raw is /-/raw/<ref>/<path>: the file's bytes, streamed (only the first
// 8000 are held, to tell text from binary). Text is text/plain, images
// have their type, anything else is an octet-stream attachment; SVG and
// HTML files (anything a browser would run as this site's page) are
// attachments too, and every answer is sandboxed by its CSP and never
// sniffed.
func (pg *pages) raw(w http.ResponseWriter, r *http.Request) {
	_, _, f, ok := pg.fileAtRef(w, r, "raw")
	if !ok {
		return
	}
	br, err := pg.rd.openBlob(r.Context(), f.projectID, f.blob)
	if isMissing(err) {
		pg.site.NotFound(w, r)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	defer br.Close()
	head, ct, err := sniffBlob(br)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	name := path.Base(f.path)
	ext := strings.ToLower(path.Ext(name))
	if img := imageTypes[ext]; img != "" {
		ct = img
	}
	hdr := w.Header()
	hdr.Set("Content-Type", ct)
	hdr.Set("Content-Length", strconv.FormatInt(br.Size, 10))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "sandbox")
	hdr.Set("Cache-Control", "private, no-cache")
	if activeTypes[ext] || ct == "application/octet-stream" {
		hdr.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	pg.rd.streamBlob(w, br, head)
}

// blameGroup is a run of lines of one commit.
type blameGroup struct {
	Commit *commitLine
	Lines  []lineView
}

// blamePage is the blame page's data.
type blamePage struct {
	Ref, Path         string
	Groups            []blameGroup
	Problem           string
	RawHref, BlobHref string
}

// blame is /-/blame/<ref>/<path>: the file's lines in runs of the commit
// that last changed them (the API's blame, bounded the same way: a file or
// a history too large is a message and a link to raw).
func (pg *pages) blame(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	info, ref, f, ok := pg.fileAtRef(w, r, "blame")
	if !ok {
		return
	}
	full := info.PathWithNamespace
	d := blamePage{Ref: ref, Path: visible(f.path), RawHref: pg.site.URL(projectURL(full, "raw", ref, f.path)),
		BlobHref: pg.site.URL(projectURL(full, "blob", ref, f.path))}
	ranges, err := pg.rd.blameAt(r.Context(), f)
	switch {
	case errors.Is(err, errBlameTooLarge):
		d.Problem = "This file is too large to blame."
	case errors.Is(err, errBlameTooLong):
		d.Problem = "This file's history is too long to blame."
	case isMissing(err):
		pg.site.NotFound(w, r)
		return
	case err != nil:
		pg.fail(w, r, err)
		return
	}
	var all []string
	for _, rg := range ranges {
		all = append(all, rg.Lines...)
	}
	frags := highlight(path.Base(f.path), strings.Join(all, "\n"))
	n := 0
	for _, rg := range ranges {
		g := blameGroup{Commit: &commitLine{SHA: rg.Commit.ID, Title: firstLine(rg.Commit.Message), Author: rg.Commit.AuthorName,
			When: time.Time(rg.Commit.AuthoredDate), Href: pg.site.URL(projectURL(full, "commit", rg.Commit.ID, ""))}}
		for range rg.Lines {
			if n < len(frags) {
				g.Lines = append(g.Lines, lineView{N: n + 1, HTML: frags[n]})
			}
			n++
		}
		d.Groups = append(d.Groups, g)
	}
	t.Render(w, r, "blame", web.Page{Title: "Blame · " + visible(f.path+" · "+ref), Project: projectHeader(info), Tab: "files",
		Crumbs: crumbs(info, ref, f.path), Data: d})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimRight(line, "\r")
}

// readmeNames are the files shown as a project's README, in order of
// preference (compared without case).
var readmeNames = []string{"readme.md", "readme.markdown", "readme.mdown", "readme", "readme.txt", "readme.rst"}

// overviewPage is the overview's data.
type overviewPage struct {
	Name, Path, Description, Visibility string
	HTTPURL, SSHURL                     string
	// ReadCode: the visitor may read the code (else only the project's
	// name and description are shown).
	ReadCode bool
	Empty    bool
	Ref      string
	Commit   *commitLine
	Refs     refSwitch
	Tree     treeView
	FilesURL string
	Readme   *readmeView
}

type readmeView struct {
	Name, Href string
	HTML       template.HTML
	TooLarge   bool
}

// bare serves the bare paths that are a project's: its overview
// (/<namespace>/<project>), GitLab 9.x's paths without "/-/"
// (/ns/p/tree/master) and the clone URL (/ns/p.git), redirected.
//
// A path that is no project the visitor may see is left to the other
// handlers (a signed-in visitor gets the 404 page), except that an
// anonymous visitor is sent to sign in, as GitLab does, when the path is
// shaped as a project of a namespace they can see (a user's, or a visible
// group's): whether the project is hidden or missing is never told, as
// the answer depends only on what the visitor may see. Paths in a ".git"
// directory are git's, for git clients: left to the 404.
func (pg *pages) bare(w http.ResponseWriter, r *http.Request, p string, t *web.Templates) bool {
	p = strings.TrimSuffix(p, "/")
	if !strings.Contains(p, "/") {
		return false // a user's or a group's page
	}
	ctx := r.Context()
	info, err := pg.rd.access.Resolve(ctx, p)
	if err == nil {
		pg.overview(w, r, info, t)
		return true
	}
	if !errors.Is(err, projects.ErrNotFound) {
		pg.fail(w, r, err)
		return true
	}
	if pg.redirectOld(w, r, p) {
		return true
	}
	// The clone URL opened in a browser: the project's page, as GitLab.
	if trimmed, ok := strings.CutSuffix(p, ".git"); ok {
		if info, err := pg.rd.access.Resolve(ctx, trimmed); err == nil {
			http.Redirect(w, r, pg.site.URL(projectURL(info.PathWithNamespace, "", "", "")), http.StatusMovedPermanently)
			return true
		}
	}
	if auth.FromContext(ctx).User != nil {
		return false
	}
	segs := strings.Split(p, "/")
	for _, seg := range segs {
		if strings.HasSuffix(seg, ".git") {
			return false
		}
	}
	if _, err := pg.teams.ResolveGroup(ctx, p); err == nil {
		return false // a group's page, another module's
	}
	// The project the path would be: all of it, or what comes before a
	// project page's key (9.x).
	candidates := [][]string{segs}
	keys := pg.site.ProjectKeys()
	for i := 2; i < len(segs) && len(candidates) < maxOldPathTries; i++ {
		if slices.Contains(keys, segs[i]) {
			candidates = append(candidates, segs[:i])
		}
	}
	for _, c := range candidates {
		if pg.visibleNamespace(r, c[:len(c)-1]) {
			pg.site.Missing(w, r)
			return true
		}
	}
	return false
}

// pathRE is the shape of a namespace's or a project's path (the projects
// module's rule).
var pathRE = regexp.MustCompile(`^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$`)

// visibleNamespace says whether segs name a namespace the visitor sees:
// a top-level name (a user's, whose namespaces are public, or a group's:
// GitLab sends anonymous visitors of any of them to sign in alike) or a
// subgroup they may see.
func (pg *pages) visibleNamespace(r *http.Request, segs []string) bool {
	for _, seg := range segs {
		if !pathRE.MatchString(seg) {
			return false // no namespace has such a name: the 404
		}
	}
	if len(segs) == 1 {
		return true
	}
	_, err := pg.teams.ResolveGroup(r.Context(), strings.Join(segs, "/"))
	return err == nil
}

// redirectOld redirects a 9.x path (/ns/p/tree/master/dir) to its "/-/"
// form, the query kept, when its start is a project the visitor sees and
// the segment after it a project page's key.
func (pg *pages) redirectOld(w http.ResponseWriter, r *http.Request, p string) bool {
	segs := strings.Split(p, "/")
	keys := pg.site.ProjectKeys()
	tries := 0
	for i := 2; i < len(segs) && tries < maxOldPathTries; i++ {
		if !slices.Contains(keys, segs[i]) {
			continue
		}
		tries++
		proj := strings.Join(segs[:i], "/")
		info, err := pg.rd.access.Resolve(r.Context(), proj)
		if err != nil {
			continue
		}
		target := projectURL(info.PathWithNamespace, segs[i], "", "")
		if rest := strings.Join(segs[i+1:], "/"); rest != "" {
			target += "/" + web.EscapePath(rest)
		}
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, pg.site.URL(target), http.StatusMovedPermanently)
		return true
	}
	return false
}

// overview is a project's page: its name, description and clone URLs,
// and for those who may read the code the default branch's last commit,
// root tree and README, or, for an empty repository, how to push one.
func (pg *pages) overview(w http.ResponseWriter, r *http.Request, info projects.ProjectInfo, t *web.Templates) {
	d := overviewPage{Name: info.Name, Path: info.Path, Description: info.Description, Visibility: info.Visibility,
		HTTPURL: info.HTTPURLToRepo, SSHURL: info.SSHURLToRepo, Ref: info.DefaultBranch}
	pgData := web.Page{Title: info.NameWithNamespace, Project: projectHeader(info), Tab: "home"}
	info2, repo, err := pg.rd.open(r.Context(), info.PathWithNamespace, projects.ReadCode)
	switch {
	case errors.Is(err, projects.ErrForbidden):
		pgData.Data = d
		t.Render(w, r, "overview", pgData)
		return
	case err != nil:
		pg.fail(w, r, err)
		return
	}
	d.ReadCode = true
	c, err := resolveCommit(repo, "", info2.DefaultBranch)
	if err != nil {
		d.Empty = true
		pgData.Data = d
		t.Render(w, r, "overview", pgData)
		return
	}
	full := info.PathWithNamespace
	d.Commit = pg.commitLine(full, c)
	d.FilesURL = pg.site.URL(projectURL(full, "tree", d.Ref, ""))
	d.Refs = pg.refSwitcher(repo, full, "tree", d.Ref, "")
	root, err := c.Tree()
	if err == nil {
		d.Tree, err = pg.listing(r, info2, repo, c, d.Ref, "", root, 1)
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.Readme = pg.readme(r, info2, root, d.Ref)
	pgData.Data = d
	t.Render(w, r, "overview", pgData)
}

// readme finds the README of the root tree and renders it (Markdown, or
// plain text), reading at most maxDisplayBlob bytes.
func (pg *pages) readme(r *http.Request, info projects.ProjectInfo, root *object.Tree, ref string) *readmeView {
	var found *object.TreeEntry
	for _, want := range readmeNames {
		for i := range root.Entries {
			if e := &root.Entries[i]; e.Mode.IsFile() && strings.EqualFold(e.Name, want) {
				found = e
				break
			}
		}
		if found != nil {
			break
		}
	}
	if found == nil {
		return nil
	}
	v := &readmeView{Name: found.Name, Href: pg.site.URL(projectURL(info.PathWithNamespace, "blob", ref, found.Name))}
	br, err := pg.rd.openBlob(r.Context(), info.ID, found.Hash)
	if err != nil {
		return nil
	}
	defer br.Close()
	if br.Size > maxDisplayBlob {
		v.TooLarge = true
		return v
	}
	raw, err := io.ReadAll(io.LimitReader(br, maxDisplayBlob))
	if err != nil {
		return nil
	}
	if isMarkdown(found.Name) {
		v.HTML = pg.markdown(r.Context(), info, ref, "", string(raw))
	} else {
		v.HTML = template.HTML(`<pre class="plain">` + template.HTMLEscapeString(string(raw)) + `</pre>`) //nolint:gosec // escaped
	}
	return v
}
