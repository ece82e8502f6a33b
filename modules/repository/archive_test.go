package repository_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// The archive holds exactly the commit's files, under "<project>-<ref>-<sha>/",
// with the executable bit and symlinks as git has them.
func TestArchiveMatchesTheTree(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	var want []string
	wantContent := map[string]string{}
	for _, line := range strings.Split(gitCmd(t, w.work, "ls-tree", "-r", "HEAD"), "\n") {
		meta, p, _ := strings.Cut(line, "\t")
		want = append(want, p)
		wantContent[p] = strings.Fields(meta)[0] + ":" + gitCmd(t, w.work, "show", "HEAD:"+p)
	}
	sort.Strings(want)
	top := "code-master-" + w.head + "/"
	for _, tc := range []struct{ path, ext string }{
		{"/repository/archive", "tar.gz"},
		{"/repository/archive?format=tar", "tar"},
		{"/repository/archive.zip", "zip"},
		{"/repository/archive.tar.gz?sha=master", "tar.gz"},
		{"/repository/archive.tar.bz2", "tar.bz2"},
		{"/repository/archive?format=tbz2", "tar.bz2"},
		// GitLab 9.x's other spellings (404 before).
		{"/repository/archive.tbz", "tar.bz2"},
		{"/repository/archive.tb2", "tar.bz2"},
		{"/repository/archive.bz2", "tar.bz2"},
		{"/repository/archive?format=tbz", "tar.bz2"},
		{"/repository/archive.gz", "tar.gz"},
	} {
		resp := w.s.Do(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+tc.path, nil)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.path, resp.StatusCode, raw)
		}
		if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="code-master-`+w.head+"."+tc.ext+`"` {
			t.Fatalf("%s: Content-Disposition %q", tc.path, cd)
		}
		got := map[string]string{}
		switch tc.ext {
		case "zip":
			zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				rc, _ := f.Open()
				b, _ := io.ReadAll(rc)
				rc.Close()
				mode := "100644"
				if f.Mode()&0o111 != 0 {
					mode = "100755"
				}
				got[f.Name] = mode + ":" + strings.TrimSpace(string(b))
			}
		default:
			var r io.Reader = bytes.NewReader(raw)
			switch tc.ext {
			case "tar.gz":
				gz, err := gzip.NewReader(r)
				if err != nil {
					t.Fatal(err)
				}
				r = gz
			case "tar.bz2":
				r = bzip2.NewReader(r) // the standard library's reader checks our writer
			}
			tr := tar.NewReader(r)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(tr)
				mode := "100644"
				if h.Mode&0o111 != 0 {
					mode = "100755"
				}
				got[h.Name] = mode + ":" + strings.TrimSpace(string(b))
			}
		}
		var names []string
		for n, v := range got {
			if !strings.HasPrefix(n, top) {
				t.Fatalf("%s: entry %q is outside %q", tc.path, n, top)
			}
			p := strings.TrimPrefix(n, top)
			names = append(names, p)
			if v != wantContent[p] {
				t.Errorf("%s: %s is %q, git has %q", tc.path, p, v, wantContent[p])
			}
		}
		sort.Strings(names)
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: files %v, git has %v", tc.path, names, want)
		}
	}
	resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/archive?format=rar", nil, nil)
	if resp.StatusCode != 400 || strings.TrimSpace(string(body)) != `{"error":"format does not have a valid value"}` {
		t.Fatalf("bad format: %d %s", resp.StatusCode, body)
	}
}
