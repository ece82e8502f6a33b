package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/fennec-forge/fennec/core/markup"
)

//go:embed templates static
var templateFiles embed.FS

// Static assets are served at /-/static/<name>-<hash>.<ext>: the name
// changes with the content, so browsers may keep each for a year without
// asking again, and a new release's assets are new URLs.

type asset struct {
	body, gz    []byte
	contentType string
}

type assets struct {
	mu     sync.RWMutex
	byFile map[string]*asset // "fennec-1a2b3c4d5e.css"
	urls   map[string]string // "fennec.css" -> "/-/static/fennec-1a2b3c4d5e.css"
}

func newAssets() *assets {
	return &assets{byFile: map[string]*asset{}, urls: map[string]string{}}
}

// AddAsset serves content as the static asset name ("fennec.css"); pages
// link it with {{.Asset "fennec.css"}}. Adding a name again replaces it.
func (s *Site) AddAsset(name string, content []byte) {
	sum := sha256.Sum256(content)
	ext := path.Ext(name)
	file := strings.TrimSuffix(name, ext) + "-" + hex.EncodeToString(sum[:5]) + ext
	a := &asset{body: content, contentType: mime.TypeByExtension(ext)}
	if a.contentType == "" {
		a.contentType = "application/octet-stream"
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(content)
	_ = zw.Close()
	if buf.Len() < len(content) {
		a.gz = buf.Bytes()
	}
	s.assets.mu.Lock()
	defer s.assets.mu.Unlock()
	s.assets.byFile[file] = a
	s.assets.urls[name] = "/-/static/" + file
}

func (as *assets) url(name string) string {
	as.mu.RLock()
	defer as.mu.RUnlock()
	if u, ok := as.urls[name]; ok {
		return u
	}
	return "/-/static/missing-" + name
}

// addCoreAssets adds the site's one stylesheet: its own rules and those of
// highlighted code and rendered Markdown (core/markup), one file so that a
// page loads one.
func (s *Site) addCoreAssets() {
	css, err := templateFiles.ReadFile("static/fennec.css")
	if err != nil {
		panic("web: the embedded stylesheet is missing: " + err.Error())
	}
	s.AddAsset("fennec.css", append(css, markup.Stylesheet()...))
	// The icon every page links (a browser asks /favicon.ico of a page
	// that names none, a 404 each time).
	icon, err := templateFiles.ReadFile("static/favicon.svg")
	if err != nil {
		panic("web: the embedded icon is missing: " + err.Error())
	}
	s.AddAsset("favicon.svg", icon)
}

// serveAsset is GET /-/static/{file}.
func (s *Site) serveAsset(w http.ResponseWriter, r *http.Request) {
	s.assets.mu.RLock()
	a := s.assets.byFile[r.PathValue("file")]
	s.assets.mu.RUnlock()
	hdr := w.Header()
	if a == nil {
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		hdr.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 Not Found\n"))
		return
	}
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Vary", "Accept-Encoding")
	body := a.body
	if a.gz != nil && acceptsGzip(r) {
		body = a.gz
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
