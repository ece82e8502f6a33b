package projects_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
)

type actUpload struct {
	Alt      string `json:"alt"`
	URL      string `json:"url"`
	Markdown string `json:"markdown"`
}

// actMultipart builds a multipart body with a "file" part named filename
// (raw, unescaped in the header, as hostile clients send it).
func actMultipart(t *testing.T, field, filename string, content []byte) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	disposition := `form-data; name="` + field + `"; filename="` + quote(filename) + `"`
	if strings.ContainsFunc(filename, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		// Raw control characters are refused in part headers; RFC 2231
		// percent-encoding brings them through to the name.
		disposition = `form-data; name="` + field + `"; filename*=UTF-8''` + url.PathEscape(filename)
	}
	h.Set("Content-Disposition", disposition)
	h.Set("Content-Type", "application/octet-stream")
	w, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(content)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

// upload posts a multipart body and returns the status and body.
func (a *actServer) upload(t *testing.T, pid int64, token string, body io.Reader, contentType string) (int, []byte) {
	t.Helper()
	headers := []string{"Content-Type", contentType}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp, raw := a.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/uploads", pid), body, nil, headers...)
	return resp.StatusCode, raw
}

// fetch GETs a path outside the API with an optional token.
func (a *actServer) fetch(t *testing.T, path, token string) (*http.Response, []byte) {
	t.Helper()
	var headers []string
	if token != "" {
		headers = []string{"PRIVATE-TOKEN", token}
	}
	return a.JSON(t, http.MethodGet, path, nil, nil, headers...)
}

// actFiles lists the regular files under dir, relative to it.
func actFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestUploadsStoreAndServe(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "upowner")
	reader := a.CreateUser(t, "upreader")
	pub := actProject(t, owner.Client, "pics", gitlab.PublicVisibility)
	png := []byte("\x89PNG\r\n\x1a\nnot really a png")

	// Through client-go: an image.
	up, resp, err := owner.Client.ProjectMarkdownUploads.UploadProjectMarkdown(pub.ID, bytes.NewReader(png), "dk.png")
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %v", actStatus(resp), err)
	}
	secret := strings.TrimSuffix(strings.TrimPrefix(up.URL, "/uploads/"), "/dk.png")
	if len(secret) != 32 || strings.Trim(secret, "0123456789abcdef") != "" || up.Alt != "dk" ||
		up.Markdown != "![dk](/uploads/"+secret+"/dk.png)" {
		t.Fatalf("upload view %+v", up)
	}
	// Stored where ARCHITECTURE.md says.
	onDisk := filepath.Join(a.DataDir, "uploads", fmt.Sprint(pub.ID), secret, "dk.png")
	if b, err := os.ReadFile(onDisk); err != nil || !bytes.Equal(b, png) {
		t.Fatalf("on disk: %v", err)
	}
	// Exactly the three keys of the spec.
	body, ct := actMultipart(t, "file", "notes.txt", []byte("hello"))
	status, raw := a.upload(t, pub.ID, reader.Token, body, ct) // any signed-in reader of a public project
	if status != http.StatusCreated {
		t.Fatalf("text upload: %d %s", status, raw)
	}
	var view map[string]string
	// A file other than an image keeps its extension in alt and in the
	// link text (it was "notes" before, as for an image).
	if err := json.Unmarshal(raw, &view); err != nil || len(view) != 3 || view["alt"] != "notes.txt" ||
		view["markdown"] != "[notes.txt]("+view["url"]+")" {
		t.Fatalf("text upload view %s", raw)
	}

	// Served back with the project's rules, anonymously for a public project.
	r, got := a.fetch(t, "/upowner/pics"+up.URL, "")
	if r.StatusCode != 200 || !bytes.Equal(got, png) || r.Header.Get("Content-Type") != "image/png" ||
		r.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(r.Header.Get("Content-Disposition"), "inline") {
		t.Fatalf("get image: %d %q %v", r.StatusCode, got, r.Header)
	}
	r, got = a.fetch(t, "/upowner/pics"+view["url"], "")
	if r.StatusCode != 200 || string(got) != "hello" || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		r.Header.Get("Content-Disposition") != "attachment; filename=notes.txt" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("get text: %d %q %v", r.StatusCode, got, r.Header)
	}
	// The path is case-insensitive like the project's; HEAD works.
	if r, _ := a.fetch(t, "/UPOWNER/Pics"+up.URL, ""); r.StatusCode != 200 {
		t.Fatalf("case-folded path: %d", r.StatusCode)
	}
	if resp := a.Do(t, http.MethodHead, "/upowner/pics"+up.URL, nil); resp.StatusCode != 200 || resp.ContentLength != int64(len(png)) {
		t.Fatalf("HEAD: %d %d", resp.StatusCode, resp.ContentLength)
	} else {
		resp.Body.Close()
	}
	// An HTML upload is never rendered by the browser.
	body, ct = actMultipart(t, "file", "x.html", []byte("<script>alert(1)</script>"))
	_, raw = a.upload(t, pub.ID, owner.Token, body, ct)
	_ = json.Unmarshal(raw, &view)
	r, _ = a.fetch(t, "/upowner/pics"+view["url"], "")
	if !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") || r.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("html served as %v", r.Header)
	}

	// Unknown secret, file, project or another project's path: 404.
	for _, p := range []string{
		"/upowner/pics/uploads/0123456789abcdef0123456789abcdef/dk.png",
		"/upowner/pics/uploads/" + secret + "/other.png",
		"/upowner/nope" + up.URL,
		"/upreader/pics" + up.URL,
	} {
		if r, got := a.fetch(t, p, owner.Token); r.StatusCode != 404 || !strings.Contains(string(got), "404") {
			t.Fatalf("GET %s: %d %q", p, r.StatusCode, got)
		}
	}
}

func TestUploadsPrivateProject(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "prowner")
	member := a.CreateUser(t, "prmember")
	stranger := a.CreateUser(t, "prstranger")
	priv := actProject(t, owner.Client, "vault", gitlab.PrivateVisibility)
	actAddProjectMember(t, owner.Client, priv.ID, member.ID, gitlab.GuestPermissions)

	body, ct := actMultipart(t, "file", "plan.pdf", []byte("%PDF-1.4 secret"))
	status, raw := a.upload(t, priv.ID, member.Token, body, ct) // a Guest may upload
	if status != http.StatusCreated {
		t.Fatalf("guest upload: %d %s", status, raw)
	}
	var up actUpload
	_ = json.Unmarshal(raw, &up)
	link := "/prowner/vault" + up.URL
	for _, tc := range []struct {
		who    string
		token  string
		status int
	}{{"owner", owner.Token, 200}, {"member", member.Token, 200}, {"admin", a.RootToken, 200}, {"stranger", stranger.Token, 404}, {"anonymous", "", 404}} {
		r, got := a.fetch(t, link, tc.token)
		if r.StatusCode != tc.status {
			t.Fatalf("%s: %d %q", tc.who, r.StatusCode, got)
		}
		if tc.status == 404 {
			actSameJSON(t, tc.who, got, `{"message":"404 Not Found"}`)
			if strings.Contains(string(got), "PDF") {
				t.Fatal("leaked")
			}
		} else if string(got) != "%PDF-1.4 secret" || r.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("%s got %q %v", tc.who, got, r.Header)
		}
	}
	// Bad credentials are 401, as everywhere.
	if r, got := a.fetch(t, link, "not-a-token"); r.StatusCode != 401 {
		t.Fatalf("bad token: %d %s", r.StatusCode, got)
	}

	// Uploading: strangers cannot see the project, anonymous callers must sign in.
	body, ct = actMultipart(t, "file", "x.txt", []byte("x"))
	if status, raw := a.upload(t, priv.ID, stranger.Token, body, ct); status != 404 {
		t.Fatalf("stranger upload: %d %s", status, raw)
	}
	body, ct = actMultipart(t, "file", "x.txt", []byte("x"))
	if status, raw := a.upload(t, priv.ID, "", body, ct); status != 401 {
		t.Fatalf("anonymous upload: %d %s", status, raw)
	}
	// An archived project takes no uploads.
	if _, _, err := owner.Client.Projects.ArchiveProject(priv.ID); err != nil {
		t.Fatal(err)
	}
	body, ct = actMultipart(t, "file", "x.txt", []byte("x"))
	if status, raw := a.upload(t, priv.ID, owner.Token, body, ct); status != 403 {
		t.Fatalf("archived upload: %d %s", status, raw)
	}
	if _, _, err := owner.Client.Projects.UnarchiveProject(priv.ID); err != nil {
		t.Fatal(err)
	}

	// Deleting the project removes its uploads.
	dir := filepath.Join(a.DataDir, "uploads", fmt.Sprint(priv.ID))
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Client.Projects.DeleteProject(priv.ID, nil); err != nil {
		t.Fatal(err)
	}
	a.drain(t)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("uploads of a deleted project remain: %v", err)
	}
}

func TestUploadsHostileNames(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "hnowner")
	p := actProject(t, owner.Client, "names", gitlab.PublicVisibility)
	for _, tc := range []struct{ name, stored string }{
		{"../../etc/passwd", "passwd"},
		{`..\..\windows\win.ini`, "win.ini"},
		{"/abs/path/evil.sh", "evil.sh"},
		{"dir/", "dir"},
		{".htaccess", "htaccess"},
		{"...hidden.png", "hidden.png"},
		{"a\x00b\x07c\x7f.txt", "abc.txt"},
		{"my file (1).png", "my_file__1_.png"},
		{"semi;colon&amp<x>\"q'.txt", "semi_colon_amp_x__q_.txt"},
		{"café résumé.txt", "café_résumé.txt"},
		{"rtl\u202egnp.exe", "rtlgnp.exe"},
		{strings.Repeat("a", 300) + ".png", strings.Repeat("a", 196) + ".png"},
	} {
		body, ct := actMultipart(t, "file", tc.name, []byte("data"))
		status, raw := a.upload(t, p.ID, owner.Token, body, ct)
		if status != http.StatusCreated {
			t.Fatalf("%q: %d %s", tc.name, status, raw)
		}
		var up actUpload
		_ = json.Unmarshal(raw, &up)
		if !strings.HasSuffix(up.URL, "/"+tc.stored) {
			t.Fatalf("%q stored as %q, want %q", tc.name, up.URL, tc.stored)
		}
		if r, got := a.fetch(t, "/hnowner/names"+up.URL, ""); r.StatusCode != 200 || string(got) != "data" {
			t.Fatalf("%q: GET %s: %d", tc.name, up.URL, r.StatusCode)
		}
	}
	// Every file stayed under uploads/<project>/<secret>/.
	root := filepath.Join(a.DataDir, "uploads")
	for _, f := range actFiles(t, a.DataDir) {
		if f == "fennec.db" || f == "secret.key" || f == "fennec.sock.lock" || strings.HasPrefix(f, ".") ||
			strings.HasPrefix(f, "repositories"+string(filepath.Separator)) {
			continue // the store, its sealing key, the admin socket's lock and the repository module's own files
		}
		parts := strings.Split(f, string(filepath.Separator))
		if len(parts) != 4 || parts[0] != "uploads" || parts[1] != fmt.Sprint(p.ID) || len(parts[2]) != 32 {
			t.Fatalf("unexpected file %s (under %s)", f, root)
		}
	}

	// Nothing usable: 400.
	for _, tc := range []struct{ name, want string }{
		{"", `{"error":"file is missing"}`},
		{"..", `{"error":"file is invalid"}`},
		{"../..", `{"error":"file is invalid"}`},
	} {
		body, ct := actMultipart(t, "file", tc.name, []byte("x"))
		status, raw := a.upload(t, p.ID, owner.Token, body, ct)
		if status != 400 {
			t.Fatalf("%q: %d %s", tc.name, status, raw)
		}
		actSameJSON(t, tc.name, raw, tc.want)
	}
	// No file part, a file under another name, or not multipart at all.
	body, ct := actMultipart(t, "attachment", "a.txt", []byte("x"))
	if status, raw := a.upload(t, p.ID, owner.Token, body, ct); status != 400 {
		t.Fatalf("other field: %d %s", status, raw)
	} else {
		actSameJSON(t, "other field", raw, `{"error":"file is missing"}`)
	}
	if status, raw := a.upload(t, p.ID, owner.Token, strings.NewReader(`{"file":"x"}`), "application/json"); status != 400 {
		t.Fatalf("json: %d %s", status, raw)
	} else {
		actSameJSON(t, "json", raw, `{"error":"file is missing"}`)
	}
	if status, raw := a.upload(t, p.ID, owner.Token, strings.NewReader("--x\r\nbroken"), "multipart/form-data; boundary=x"); status != 400 {
		t.Fatalf("broken multipart: %d %s", status, raw)
	}
}

// Traversal attempts in the served URL never reach outside the uploads of
// the project (the store, fennec.db, sits right next to uploads/).
func TestUploadsTraversalURLs(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "trowner")
	p := actProject(t, owner.Client, "walk", gitlab.PublicVisibility)
	other := actProject(t, owner.Client, "other", gitlab.PublicVisibility)
	body, ct := actMultipart(t, "file", "a.txt", []byte("mine"))
	_, raw := a.upload(t, p.ID, owner.Token, body, ct)
	var up actUpload
	_ = json.Unmarshal(raw, &up)
	secret := strings.Split(up.URL, "/")[2]
	// A file of the other project, to be reached through this one.
	body, ct = actMultipart(t, "file", "b.txt", []byte("theirs"))
	_, raw = a.upload(t, other.ID, owner.Token, body, ct)
	var up2 actUpload
	_ = json.Unmarshal(raw, &up2)
	secret2 := strings.Split(up2.URL, "/")[2]

	for _, path := range []string{
		"/trowner/walk/uploads/../../fennec.db",
		"/trowner/walk/uploads/" + secret + "/../../../fennec.db",
		"/trowner/walk/uploads/" + secret + "/..%2F..%2F..%2Ffennec.db",
		"/trowner/walk/uploads/" + secret + "/%2e%2e%2f%2e%2e%2f%2e%2e%2ffennec.db",
		"/trowner/walk/uploads/" + secret + "/..%5c..%5c..%5cfennec.db",
		"/trowner/walk/uploads/" + secret + "/%2e%2e",
		"/trowner/walk/uploads/" + secret + "/.",
		"/trowner/walk/uploads/" + secret + "/",
		"/trowner/walk/uploads/" + secret2 + "/b.txt",
		"/trowner/walk/uploads/" + secret + "/..%2F" + secret2 + "%2Fb.txt",
		"/trowner/walk/uploads/" + secret + "/.tmp-x",
		"/trowner/%2e%2e/uploads/" + secret + "/a.txt",
		"/..%2F..%2F/walk/uploads/" + secret + "/a.txt",
		"/trowner/walk%2F..%2F../uploads/" + secret + "/a.txt",
		"/api/v4/../trowner/walk/uploads/" + secret + "/a.txt/../../../../fennec.db",
	} {
		req, err := http.NewRequest(http.MethodGet, a.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawPath = "" // send exactly what is written
		req.URL.Opaque = path
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || bytes.Contains(got, []byte("theirs")) || len(got) > 200 {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, got)
		}
	}
	// The real one still works.
	if r, got := a.fetch(t, "/trowner/walk"+up.URL, ""); r.StatusCode != 200 || string(got) != "mine" {
		t.Fatalf("GET %s: %d %q", up.URL, r.StatusCode, got)
	}
}

// Past the configured body limit: 413 with GitLab's body, and nothing left
// on disk, whether the client announced the length or not.
func TestUploadsTooLarge(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	a := actStart(t, fennectest.WithConfig(func(c *config.Config) { c.MaxBodyBytes = limit }))
	owner := a.CreateUser(t, "bigowner")
	p := actProject(t, owner.Client, "big", gitlab.PublicVisibility)
	big := bytes.Repeat([]byte("x"), 2*limit)

	body, ct := actMultipart(t, "file", "big.bin", big)
	status, raw := a.upload(t, p.ID, owner.Token, body, ct) // with Content-Length
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("announced: %d %s", status, raw)
	}
	actSameJSON(t, "announced", raw, `{"message":"413 Request Entity Too Large"}`)

	body, ct = actMultipart(t, "file", "big.bin", big)
	chunked := io.MultiReader(body) // unknown length: sent chunked
	status, raw = a.upload(t, p.ID, owner.Token, chunked, ct)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: %d %s", status, raw)
	}
	actSameJSON(t, "chunked", raw, `{"message":"413 Request Entity Too Large"}`)

	if files := actFiles(t, filepath.Join(a.DataDir, "uploads")); len(files) != 0 {
		t.Fatalf("left on disk: %v", files)
	}
	if entries, _ := os.ReadDir(filepath.Join(a.DataDir, "uploads", fmt.Sprint(p.ID))); len(entries) != 0 {
		t.Fatalf("directories left: %v", entries)
	}
	// Just under the limit is fine.
	body, ct = actMultipart(t, "file", "ok.bin", big[:limit-1024])
	if status, raw := a.upload(t, p.ID, owner.Token, io.MultiReader(body), ct); status != http.StatusCreated {
		t.Fatalf("under the limit: %d %s", status, raw)
	}
}
