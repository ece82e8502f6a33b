package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the C git server too: gitbench starts
// os.Executable() with -serve-cgi.
func TestMain(m *testing.M) {
	if code, ok := serveMode(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestCGitTiny runs the whole harness against C git on a tiny reference
// repository, so the harness does not rot while nobody runs `make
// bench-git`.
func TestCGitTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"-servers", "git", "-commits", "150", "-files", "40", "-binaries", "-1",
		"-runs", "1", "-fetch-commits", "10", "-push-commits", "20", "-work", t.TempDir()}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"full clone", "--depth 1 clone", "fetch of the last 10 commits", "push of 20 new commits", "initial push", "fetch protocol spoken: v2"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "error") {
		t.Errorf("the report has errors:\n%s", out)
	}
}

func TestProcFigures(t *testing.T) {
	pid := os.Getpid()
	cpu, err := procCPU(pid)
	if err != nil || cpu < 0 {
		t.Fatalf("procCPU: %v, %v", cpu, err)
	}
	if err := resetHWM(pid); err != nil {
		t.Fatalf("resetHWM: %v", err)
	}
	hwm, err := procHWM(pid)
	if err != nil || hwm < 1<<20 {
		t.Fatalf("procHWM: %d, %v", hwm, err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"push http://root:s3cret@127.0.0.1:1/a.git x":    "push http://root:xxx@127.0.0.1:1/a.git x",
		"clone http://127.0.0.1:1/a.git http://u:p@h/":   "clone http://127.0.0.1:1/a.git http://u:xxx@h/",
		"ls-remote https://user@host/x":                  "ls-remote https://user@host/x",
		"fetch -q /tmp/dir +refs/heads/*:refs/remotes/*": "fetch -q /tmp/dir +refs/heads/*:refs/remotes/*",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMedianAndDiff(t *testing.T) {
	m := medianSample([]sample{{wall: 3 * time.Second, cpu: 1, rss: 30}, {wall: time.Second, cpu: 3, rss: 10}, {wall: 2 * time.Second, cpu: 2, rss: 20}})
	if m.wall != 2*time.Second || m.cpu != 2 || m.rss != 20 {
		t.Errorf("median = %+v", m)
	}
	if d := (refs{"a": "1", "b": "2"}).diff(refs{"a": "1", "c": "3"}); d != "extra c; missing b" {
		t.Errorf("diff = %q", d)
	}
	if v := verdict(&sample{wall: time.Second, rss: 100}, &sample{wall: 2 * time.Second, rss: 150}, nil, nil); v != "MISSED: wall 2.00x > 1.5x" {
		t.Errorf("verdict = %q", v)
	}
}
