package internal

// Uploads: files attached to Markdown (issue and merge request descriptions,
// notes), kept as the blob uploads/<project id>/<secret>/<file name> and
// served back at /<namespace>/<project>/uploads/<secret>/<file name> with
// the project's visibility. Only sanitised names ever become keys, and the
// blob store refuses any key that could leave its directory.

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/store"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// uploads holds what the upload operations need beyond the Service.
type uploads struct {
	s     *Service
	api   *api.API
	blobs blob.Store
	limit int64 // request body limit
}

// UploadDeps are what the upload routes are built from.
type UploadDeps struct {
	fennec.In
	Service *Service
	Config  config.Config
	Blobs   blob.Store
}

// NewUploadRoutes registers the uploads' operations.
func NewUploadRoutes(d UploadDeps) fennec.Routes {
	s, cfg := d.Service, d.Config
	u := &uploads{s: s, blobs: d.Blobs, limit: cfg.MaxBodyBytes}
	if u.limit <= 0 {
		u.limit = 10 << 20
	}
	return fennec.Routes{Name: "projects-uploads", Register: u.register}
}

// UploadView is the Upload resource of the spec.
type UploadView struct {
	Alt      string `json:"alt"`
	URL      string `json:"url"`
	Markdown string `json:"markdown"`
}

type uploadOutput struct{ Body *UploadView }

func (u *uploads) register(a *api.API) {
	u.api = a
	api.Register(a, api.Op{ID: "upload-project-file", Method: http.MethodPost, Path: "/projects/{id}/uploads", Tags: []string{"projects"},
		Summary: "Upload a file for use in Markdown",
		Description: "A multipart/form-data body with the file in the part named `file`. Answers 413 past the " +
			"configured body limit (max_body_bytes).",
		Access: api.SignedIn, RawBody: true, FileField: "file", MaxBodyBytes: u.limit}, u.upload)
	a.Intercept("project-upload", isUploadPath, http.HandlerFunc(u.serve))
}

var secretRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// maxFileName bounds a stored name in bytes (file systems allow 255).
const maxFileName = 200

// sanitizeFileName keeps the last path element of a client's file name and
// only letters, digits, '_', '.', '-' and '+' in it (others become '_';
// control characters and invalid UTF-8 are dropped), without leading dots,
// at most maxFileName bytes with the extension kept. "" means nothing usable
// was left.
func sanitizeFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(name[i:], string(utf8.RuneError)):
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '_', r == '.', r == '-', r == '+':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if len(s) > maxFileName {
		ext := path.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		base := s[:maxFileName-len(ext)]
		for !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
		s = base + ext
	}
	return s
}

// Images are shown inline; other files are served as attachments. SVG can
// carry scripts, so it is an image in Markdown (<img> does not run them)
// but an attachment when opened directly.
var (
	markdownImages = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true,
		".tiff": true, ".tif": true, ".ico": true, ".webp": true, ".svg": true}
	inlineImages = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true,
		".tiff": true, ".tif": true, ".ico": true, ".webp": true}
)

// contentTypes are the types that must not depend on the host's mime.types.
var contentTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".bmp": "image/bmp",
	".tiff": "image/tiff", ".tif": "image/tiff", ".ico": "image/x-icon", ".webp": "image/webp",
	".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8",
	".log": "text/plain; charset=utf-8", ".pdf": "application/pdf", ".zip": "application/zip",
	".json": "application/json", ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
}

func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// upload stores the "file" part of a multipart body. It needs the right to
// create issues (Guest, or reading a public or internal project) and checks
// it before reading the body. The body is streamed into one blob Put, so a
// refused or broken upload leaves nothing behind.
func (u *uploads) upload(ctx context.Context, in *ProjectPath) (*uploadOutput, error) {
	r, err := u.s.require(ctx, in.ID, project.CreateIssue)
	if err != nil {
		return nil, err
	}
	req := api.Request(ctx)
	if req == nil {
		return nil, api.Missing("file")
	}
	if req.ContentLength > u.limit {
		return nil, api.TooLarge()
	}
	mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, api.Missing("file")
	}
	mr := multipart.NewReader(http.MaxBytesReader(nil, req.Body, u.limit), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, api.Missing("file")
		}
		if err != nil {
			return nil, bodyError(err)
		}
		if part.FormName() != "file" {
			continue
		}
		if part.FileName() == "" {
			return nil, api.Missing("file")
		}
		name := sanitizeFileName(part.FileName())
		if name == "" {
			return nil, api.Invalid("file")
		}
		secret := newToken()
		if err := u.store(ctx, r.p.ID, secret, name, part); err != nil {
			return nil, err
		}
		rel := "/uploads/" + secret + "/" + name
		// An image is named without its extension (its alt text), any other
		// file with it, since the name is the link's text (test.txt stays
		// test.txt); a ']' in the name would end the link text early.
		image := markdownImages[strings.ToLower(path.Ext(name))]
		alt := name
		if image {
			alt = strings.TrimSuffix(name, path.Ext(name))
		}
		md := "[" + strings.ReplaceAll(alt, "]", `\]`) + "](" + rel + ")"
		if image {
			md = "!" + md
		}
		return &uploadOutput{Body: &UploadView{Alt: alt, URL: rel, Markdown: md}}, nil
	}
}

func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return api.TooLarge()
	}
	return api.BadRequest("400 Bad request - malformed multipart body")
}

// uploadKey is the blob of a project's upload.
func uploadKey(pid int64, secret, name string) string {
	return "uploads/" + store.IDString(pid) + "/" + secret + "/" + name
}

// store keeps src as the upload <project>/<secret>/<name>: whole, or
// nothing when the body or the write fails.
func (u *uploads) store(ctx context.Context, pid int64, secret, name string, src io.Reader) error {
	body := &bodyReader{r: src}
	_, err := u.blobs.Put(ctx, uploadKey(pid, secret, name), body)
	if body.err != nil {
		return bodyError(body.err) // the client's fault: too big, cut short
	}
	return err
}

// bodyReader remembers a failed read of the request body, to tell the
// client's errors (400, 413) from the disk's (500).
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

// isUploadPath matches GET and HEAD of /<namespace...>/<project>/uploads/
// <32 hex>/<file> outside the API; serve checks the rest.
func isUploadPath(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.EscapedPath()
	if strings.HasPrefix(p, api.Prefix+"/") || strings.HasPrefix(p, "/-/") {
		return false
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	n := len(segs)
	return n >= 5 && segs[n-3] == "uploads" && secretRE.MatchString(segs[n-2])
}

// serve answers a file to those who may read the project; anything else,
// including a project the caller may not see, is the same 404.
func (u *uploads) serve(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	n := len(segs)
	secret := segs[n-2]
	name, err := url.PathUnescape(segs[n-1])
	if err != nil || name == "" || sanitizeFileName(name) != name {
		api.WriteJSON(w, http.StatusNotFound, api.NotFound(""))
		return
	}
	parts := make([]string, 0, n-3)
	for _, seg := range segs[:n-3] {
		s, err := url.PathUnescape(seg)
		if err != nil || s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\") {
			api.WriteJSON(w, http.StatusNotFound, api.NotFound(""))
			return
		}
		parts = append(parts, s)
	}
	pr, err := u.api.Authenticate(w, r)
	if err != nil {
		u.api.WriteError(w, err)
		return
	}
	ctx := u.api.Context(r, pr)
	res, err := u.s.resolve(ctx, strings.Join(parts, "/"))
	if err != nil {
		api.WriteJSON(w, http.StatusNotFound, api.NotFound(""))
		return
	}
	f, err := u.blobs.Open(ctx, uploadKey(res.p.ID, secret, name))
	if err != nil {
		api.WriteJSON(w, http.StatusNotFound, api.NotFound(""))
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", contentType(name))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	h.Set("Cache-Control", "max-age=0, private, must-revalidate")
	disposition := "attachment"
	if inlineImages[strings.ToLower(path.Ext(name))] {
		disposition = "inline"
	}
	if cd := mime.FormatMediaType(disposition, map[string]string{"filename": name}); cd != "" {
		disposition = cd
	}
	h.Set("Content-Disposition", disposition)
	http.ServeContent(w, r, name, f.ModTime(), f)
}
