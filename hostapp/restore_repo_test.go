package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	be "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// archiveEntry is one entry of a backup archive read back.
type archiveEntry struct {
	name string
	dir  bool
	data []byte
}

// readBackup reads a plain (uncompressed) backup archive: its manifest, as
// a map so that every field survives a rewrite, and its entries.
func readBackup(t *testing.T, path string) (map[string]any, []archiveEntry) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != "manifest.json" {
		t.Fatalf("first entry %v %v", hdr, err)
	}
	var manifest map[string]any
	if err := json.NewDecoder(tr).Decode(&manifest); err != nil {
		t.Fatal(err)
	}
	var entries []archiveEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, archiveEntry{name: strings.TrimSuffix(hdr.Name, "/"), dir: hdr.Typeflag == tar.TypeDir, data: b})
	}
	return manifest, entries
}

// writeBackup writes entries as a backup archive whose manifest (the
// original's other fields kept) lists them with right sizes and checksums,
// as a hostile operator who edited an archive would.
func writeBackup(t *testing.T, path string, manifest map[string]any, entries []archiveEntry) {
	t.Helper()
	var files []map[string]any
	var total int64
	for _, e := range entries {
		if e.dir {
			files = append(files, map[string]any{"path": e.name, "dir": true, "size": 0})
			continue
		}
		sum := sha256.Sum256(e.data)
		files = append(files, map[string]any{"path": e.name, "size": len(e.data), "sha256": hex.EncodeToString(sum[:])})
		total += int64(len(e.data))
	}
	m := map[string]any{}
	for k, v := range manifest {
		m[k] = v
	}
	m["files"], m["bytes"] = files, total
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "manifest.json", Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(raw))})
	_, _ = tw.Write(raw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(e.data))}
		if e.dir {
			h = &tar.Header{Name: e.name + "/", Typeflag: tar.TypeDir, Mode: 0o700}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(e.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lastLines is the end of a command's output, without its progress lines.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// emptyIndex is a valid git index with no entries: enough for git to read
// it, and so to ask core.fsmonitor what changed.
func emptyIndex() []byte {
	b := []byte("DIRC")
	b = be.BigEndian.AppendUint32(b, 2)
	b = be.BigEndian.AppendUint32(b, 0)
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// TestRestoreRefusesHostileRepositories: a genuine backup whose repository
// an operator edited (the manifest recomputed) is refused when it holds
// what Fennec never writes there (a work tree's index, hooks, info/,
// alternates, a config of its own: core.fsmonitor, include, includeIf,
// other keys, a HEAD outside refs/), with a message naming the file; git
// never runs the archive's commands, and nothing is moved into place. The
// operator's own git environment does not reach the check either. The
// genuine archive, and one whose config holds only what Fennec's holds,
// restore, with Fennec's own config.
func TestRestoreRefusesHostileRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")
	token := login(t, s)
	c := newCrashClient(s, token)
	defer c.close()
	var p struct {
		ID int `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, "/projects", map[string]any{"name": "p"}, http.StatusCreated, &p)
	git := gitRunner(t)
	work := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "one"},
		{"push", "-q", fmt.Sprintf("http://root:password-123@%s/root/p.git", s.addr), "main"}} {
		if out, err := git(work, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	archive := filepath.Join(t.TempDir(), "genuine.tar")
	if out, err := exec.Command(binary, "backup", "--data", data, archive).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	manifest, entries := readBackup(t, archive)
	sum := sha256.Sum256([]byte(fmt.Sprint(p.ID)))
	h := hex.EncodeToString(sum[:])
	repo := "repositories/@hashed/" + h[:2] + "/" + h[2:4] + "/" + h + ".git"
	var config []byte
	for _, e := range entries {
		if e.name == repo+"/config" {
			config = e.data
		}
	}
	if config == nil {
		t.Fatalf("no %s/config in the archive", repo)
	}

	scratch := t.TempDir()
	marker := filepath.Join(scratch, "ran")
	fsmonitor := fmt.Sprintf("[core]\n\tbare = true\n\tfsmonitor = \"touch %s; false\"\n", marker)
	evil := filepath.Join(scratch, "evil.config")
	if err := os.WriteFile(evil, []byte(fmt.Sprintf("[core]\n\tfsmonitor = \"touch %s; false\"\n", marker)), 0o600); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(scratch, "index")
	if err := os.WriteFile(index, emptyIndex(), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another repository of the host, which alternates would read.
	host := filepath.Join(scratch, "host.git")
	if out, err := git(scratch, "init", "-q", "--bare", host); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}

	// tamper returns the genuine entries with the repository's files
	// replaced (set) and added (add, in order; a nil data is a directory).
	type file struct {
		name string
		data []byte
		dir  bool
	}
	tamper := func(set map[string]string, add ...file) []archiveEntry {
		var out []archiveEntry
		for _, e := range entries {
			if v, ok := set[strings.TrimPrefix(e.name, repo+"/")]; ok && strings.HasPrefix(e.name, repo+"/") {
				e.data = []byte(v)
			}
			out = append(out, e)
		}
		for _, f := range add {
			out = append(out, archiveEntry{name: repo + "/" + f.name, dir: f.dir, data: f.data})
		}
		return out
	}
	cases := []struct {
		name    string
		entries []archiveEntry
		want    []string // in the refusal
	}{
		{"fsmonitor with an index", tamper(map[string]string{"config": fsmonitor}, file{name: "index", data: emptyIndex()}),
			[]string{"refused", repo + "/index"}},
		{"fsmonitor", tamper(map[string]string{"config": fsmonitor}), []string{"refused", repo + "/config", "core.fsmonitor"}},
		{"alternates", tamper(nil, file{name: "objects/info/alternates", data: []byte(host + "/objects\n")}),
			[]string{"refused", repo + "/objects/info/alternates"}},
		{"hooks", tamper(nil, file{name: "hooks", dir: true}, file{name: "hooks/post-checkout", data: []byte("#!/bin/sh\ntouch " + marker + "\n")}),
			[]string{"refused", repo + "/hooks"}},
		{"info", tamper(nil, file{name: "info", dir: true}, file{name: "info/grafts", data: []byte(strings.Repeat("0", 40) + "\n")}),
			[]string{"refused", repo + "/info"}},
		{"commondir", tamper(nil, file{name: "commondir", data: []byte(host + "\n")}), []string{"refused", repo + "/commondir"}},
		{"include", tamper(map[string]string{"config": "[core]\n\tbare = true\n[include]\n\tpath = " + evil + "\n"}),
			[]string{"refused", repo + "/config", "include"}},
		{"includeIf", tamper(map[string]string{"config": "[core]\n\tbare = true\n[includeIf \"gitdir:/\"]\n\tpath = " + evil + "\n"}),
			[]string{"refused", repo + "/config", "includeIf"}},
		{"unknown key", tamper(map[string]string{"config": "[core]\n\tbare = true\n\tsshCommand = touch " + marker + "\n"}),
			[]string{"refused", repo + "/config", "core.sshCommand"}},
		{"unknown section", tamper(map[string]string{"config": "[core]\n\tbare = true\n[uploadpack]\n\tpackObjectsHook = touch " + marker + "\n"}),
			[]string{"refused", repo + "/config", "uploadpack"}},
		{"HEAD outside refs", tamper(map[string]string{"HEAD": "ref: ../../config\n"}), []string{"refused", repo + "/HEAD"}},
	}
	for _, tc := range cases {
		hostile := filepath.Join(t.TempDir(), "hostile.tar")
		writeBackup(t, hostile, manifest, tc.entries)
		target := filepath.Join(t.TempDir(), "data")
		raw, err := exec.Command(binary, "restore", "--data", target, hostile).CombinedOutput()
		out := lastLines(raw, 3)
		t.Logf("%s: %s", tc.name, out)
		if err == nil {
			t.Errorf("%s: restored:\n%s", tc.name, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: the refusal does not say %q:\n%s", tc.name, w, out)
			}
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: restore ran the archive's command:\n%s", tc.name, out)
			_ = os.Remove(marker)
		}
		if in, _ := os.ReadDir(target); len(in) != 0 {
			t.Errorf("%s: restore left %v in the target", tc.name, in)
		}
	}

	// The operator's own git environment (another index, config from the
	// environment, another object directory) is not the check's.
	target := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(binary, "restore", "--data", target, archive)
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor",
		"GIT_CONFIG_VALUE_0=touch "+marker+"; false", "GIT_OBJECT_DIRECTORY="+filepath.Join(host, "objects"), "GIT_DIR="+host)
	raw, err := cmd.CombinedOutput()
	out := lastLines(raw, 3)
	if err != nil || !strings.Contains(out, "git fsck clean") {
		t.Fatalf("restore of the genuine archive: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("restore ran a command of the operator's git environment:\n%s", out)
	}

	// A config holding only what Fennec's holds, written differently,
	// restores; the restored repository has Fennec's own config.
	variant := filepath.Join(t.TempDir(), "variant.tar")
	writeBackup(t, variant, manifest, tamper(map[string]string{"config": "# written by hand\n[core]\n\trepositoryformatversion = 0\n\tbare = true\n"}))
	target = filepath.Join(t.TempDir(), "data")
	if raw, err := exec.Command(binary, "restore", "--data", target, variant).CombinedOutput(); err != nil || !strings.Contains(string(raw), "git fsck clean") {
		t.Fatalf("restore of a config Fennec could have written: %v\n%s", err, lastLines(raw, 3))
	}
	got, err := os.ReadFile(filepath.Join(target, filepath.FromSlash(repo), "config"))
	if err != nil || !bytes.Equal(got, config) {
		t.Fatalf("restored config %q, want Fennec's own %q (%v)", got, config, err)
	}
}
