package gitserve

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// pkts encodes lines as pkt-lines; "" is a flush.
func pkts(lines ...string) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		if l == "" {
			b.WriteString("0000")
			continue
		}
		fmt.Fprintf(&b, "%04x%s", len(l)+4, l)
	}
	return b.Bytes()
}

// response is a parsed upload-pack response.
type response struct {
	lines    []string // text pkt-lines before the pack ("" for a flush)
	pack     []byte
	progress string
	errMsg   string
	maxPkt   int
}

// parseResponse splits a response; sideband says how the pack comes.
func parseResponse(t *testing.T, b []byte, sideband bool) response {
	t.Helper()
	var r response
	for len(b) > 0 {
		if !sideband && bytes.HasPrefix(b, []byte("PACK")) {
			r.pack = b
			break
		}
		if len(b) < 4 {
			t.Fatalf("truncated response: %q", b)
		}
		n, ok := unhex4(b[:4])
		if !ok {
			t.Fatalf("bad pkt-line: %q", b[:min(len(b), 20)])
		}
		if n == 0 {
			r.lines = append(r.lines, "")
			b = b[4:]
			continue
		}
		r.maxPkt = max(r.maxPkt, n)
		payload := b[4:n]
		b = b[n:]
		if sideband && len(payload) > 0 && payload[0] <= 3 {
			switch payload[0] {
			case 1:
				r.pack = append(r.pack, payload[1:]...)
			case 2:
				r.progress += string(payload[1:])
			case 3:
				r.errMsg += string(payload[1:])
			}
			continue
		}
		r.lines = append(r.lines, strings.TrimSuffix(string(payload), "\n"))
	}
	return r
}

// checkPack indexes a pack with git and returns its object count.
func checkPack(t *testing.T, pack []byte) int {
	t.Helper()
	if len(pack) < 12 || string(pack[:4]) != "PACK" {
		t.Fatalf("no pack (%d bytes)", len(pack))
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "x.pack")
	if err := os.WriteFile(p, pack, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "index-pack", "--strict", p)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("index-pack: %v\n%s", err, out)
	}
	return int(binary.BigEndian.Uint32(pack[8:12]))
}

type protoFixture struct {
	dir   string
	repo  Repo
	c     *gitClient
	head  plumbing.Hash
	tip20 plumbing.Hash // master~20
}

func newProtoFixture(t *testing.T) *protoFixture {
	c := newGitClient(t)
	dir := readOnlySmallRepo(t)
	st, err := gitpack.Open(dir, gitpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	repo, err := readRepo(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	return &protoFixture{
		dir: dir, repo: repo, c: c,
		head:  plumbing.NewHash(strings.TrimSpace(c.run(dir, "rev-parse", "master"))),
		tip20: plumbing.NewHash(strings.TrimSpace(c.run(dir, "rev-parse", "master~20"))),
	}
}

func (f *protoFixture) upload(t *testing.T, req []byte) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	err := UploadPack(context.Background(), &out, bytes.NewReader(req), f.repo)
	return out.Bytes(), err
}

func TestAdvertiseFormat(t *testing.T) {
	t.Parallel()
	f := newProtoFixture(t)
	var b bytes.Buffer
	if err := AdvertiseUploadPack(&b, f.repo); err != nil {
		t.Fatal(err)
	}
	r := parseResponse(t, b.Bytes(), false)
	if r.lines[0] != "# service=git-upload-pack" || r.lines[1] != "" || r.lines[len(r.lines)-1] != "" {
		t.Fatalf("framing: %q", r.lines)
	}
	first := r.lines[2]
	id, caps, ok := strings.Cut(first, "\x00")
	if !ok || id != f.head.String()+" HEAD" {
		t.Fatalf("first line %q", first)
	}
	for _, c := range []string{"multi_ack_detailed", "side-band-64k", "thin-pack", "ofs-delta", "shallow", "deepen-since",
		"deepen-not", "no-done", "include-tag", "no-progress", "symref=HEAD:refs/heads/master", "agent=" + Agent} {
		if !strings.Contains(" "+caps+" ", " "+c+" ") {
			t.Errorf("capability %s missing: %s", c, caps)
		}
	}
	if strings.Contains(caps, "filter") {
		t.Errorf("filter advertised: %s", caps)
	}
	// The rest is show-ref -d, sorted, peeled tags after their tag.
	want := strings.Split(strings.TrimSpace(f.c.run(f.dir, "show-ref", "-d")), "\n")
	got := r.lines[3 : len(r.lines)-1]
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("refs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Empty repository.
	b.Reset()
	if err := AdvertiseUploadPack(&b, Repo{Objects: f.repo.Objects, Head: "refs/heads/master"}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "001e# service=git-upload-pack\n00000000" {
		t.Errorf("empty: %q", got)
	}
	b.Reset()
	if err := AdvertiseReceivePack(&b, Repo{}, []string{"report-status", "delete-refs"}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "001f# service=git-receive-pack\n0000"+string(pkts("0000000000000000000000000000000000000000 capabilities^{}\x00report-status delete-refs\n"))+"0000"; got != want {
		t.Errorf("empty receive-pack: %q, want %q", got, want)
	}
	b.Reset()
	if err := AdvertiseReceivePack(&b, f.repo, []string{"report-status"}); err != nil {
		t.Fatal(err)
	}
	r = parseResponse(t, b.Bytes(), false)
	if !strings.HasSuffix(r.lines[2], " refs/heads/master\x00report-status") || strings.Contains(b.String(), "^{}") || strings.Contains(b.String(), "HEAD") {
		t.Errorf("receive-pack advertisement: %q", r.lines)
	}
}

func TestUploadPackSideBands(t *testing.T) {
	t.Parallel()
	f := newProtoFixture(t)
	want := "want " + f.head.String()
	for _, tc := range []struct {
		caps     string
		sideband bool
		maxPkt   int
	}{
		{"side-band-64k ofs-delta", true, 65520},
		{"side-band ofs-delta", true, 1000},
		{"ofs-delta", false, 65520},
		{"side-band-64k", true, 65520}, // ref deltas
	} {
		t.Run(tc.caps, func(t *testing.T) {
			out, err := f.upload(t, pkts(want+" "+tc.caps+"\n", "", "done\n"))
			if err != nil {
				t.Fatal(err)
			}
			r := parseResponse(t, out, tc.sideband)
			if r.lines[0] != "NAK" {
				t.Errorf("lines %q", r.lines)
			}
			if tc.sideband && r.lines[len(r.lines)-1] != "" {
				t.Errorf("no final flush: %q", r.lines)
			}
			if r.maxPkt > tc.maxPkt {
				t.Errorf("packet of %d bytes", r.maxPkt)
			}
			if tc.sideband && !strings.Contains(r.progress, "Enumerating objects") {
				t.Errorf("progress: %q", r.progress)
			}
			if n, want := checkPack(t, r.pack), objectsBetween(t, f.c, f.dir, "master"); n != want {
				t.Errorf("%d objects, want %d", n, want)
			}
		})
	}
	t.Run("no-progress", func(t *testing.T) {
		out, err := f.upload(t, pkts(want+" side-band-64k no-progress\n", "", "done\n"))
		if err != nil {
			t.Fatal(err)
		}
		if r := parseResponse(t, out, true); r.progress != "" {
			t.Errorf("progress: %q", r.progress)
		}
	})
}

func TestUploadPackNegotiation(t *testing.T) {
	t.Parallel()
	f := newProtoFixture(t)
	want := "want " + f.head.String()
	common := "have " + f.tip20.String() + "\n"
	unknown := "have 1111111111111111111111111111111111111111\n"

	cases := []struct {
		name  string
		req   []byte
		lines []string // expected text lines
		pack  bool
		full  bool // the pack has everything
	}{
		// Ready at the flush only when the round had nothing unknown.
		{"detailed round", pkts(want+" multi_ack_detailed side-band-64k\n", "", common, ""),
			[]string{"ACK " + f.tip20.String() + " common", "ACK " + f.tip20.String() + " ready", "NAK"}, false, false},
		{"detailed round with unknown", pkts(want+" multi_ack_detailed side-band-64k\n", "", unknown, common, ""),
			[]string{"ACK " + f.tip20.String() + " common", "NAK"}, false, false},
		{"detailed ready on unknown have", pkts(want+" multi_ack_detailed side-band-64k\n", "", common, unknown, ""),
			[]string{"ACK " + f.tip20.String() + " common", "ACK 1111111111111111111111111111111111111111 ready", "NAK"}, false, false},
		{"detailed nothing common", pkts(want+" multi_ack_detailed side-band-64k\n", "", unknown, ""),
			[]string{"NAK"}, false, false},
		{"detailed done", pkts(want+" multi_ack_detailed side-band-64k\n", "", common, "done\n"),
			[]string{"ACK " + f.tip20.String() + " common", "ACK " + f.tip20.String(), ""}, true, false},
		{"no-done", pkts(want+" multi_ack_detailed no-done side-band-64k\n", "", common, ""),
			[]string{"ACK " + f.tip20.String() + " common", "ACK " + f.tip20.String() + " ready", "NAK", "ACK " + f.tip20.String(), ""}, true, false},
		{"multi_ack round", pkts(want+" multi_ack side-band-64k\n", "", common, unknown, ""),
			[]string{"ACK " + f.tip20.String() + " continue", "ACK 1111111111111111111111111111111111111111 continue", "NAK"}, false, false},
		{"single ack round", pkts(want+" side-band-64k\n", "", unknown, common, common, ""),
			[]string{"ACK " + f.tip20.String()}, false, false},
		{"single ack done", pkts(want+" side-band-64k\n", "", common, "done\n"),
			[]string{"ACK " + f.tip20.String(), ""}, true, false},
		{"no haves done", pkts(want+" side-band-64k\n", "", "done\n"), []string{"NAK", ""}, true, true},
		{"wants only", pkts(want+" side-band-64k\n", ""), nil, false, false},
		{"empty", nil, nil, false, false},
		{"flush only", pkts(""), nil, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.upload(t, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			r := parseResponse(t, out, true)
			if strings.Join(r.lines, "|") != strings.Join(tc.lines, "|") {
				t.Errorf("lines:\n%q\nwant\n%q", r.lines, tc.lines)
			}
			if tc.pack {
				n := checkPackThin(t, f, r.pack)
				args := []string{"master", "--not", f.tip20.String()}
				if tc.full {
					args = args[:1]
				}
				if want := objectsBetween(t, f.c, f.dir, args...); n != want {
					t.Errorf("%d objects, want %d", n, want)
				}
			} else if r.pack != nil {
				t.Error("unexpected pack")
			}
		})
	}
}

// checkPackThin indexes a pack that may be thin against the fixture's
// repository and returns its object count.
func checkPackThin(t *testing.T, f *protoFixture, pack []byte) int {
	t.Helper()
	if len(pack) < 12 || string(pack[:4]) != "PACK" {
		t.Fatalf("no pack (%d bytes)", len(pack))
	}
	dst := filepath.Join(t.TempDir(), "x.git")
	f.c.run(filepath.Dir(dst), "clone", "-q", "--bare", "--no-local", f.dir, dst)
	cmd := f.c.cmd(dst, "index-pack", "--stdin", "--fix-thin", "--strict")
	cmd.Stdin = bytes.NewReader(pack)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("index-pack: %v\n%s", err, out)
	}
	return int(binary.BigEndian.Uint32(pack[8:12]))
}

func TestUploadPackErrors(t *testing.T) {
	t.Parallel()
	f := newProtoFixture(t)
	want := "want " + f.head.String() + " side-band-64k\n"
	cases := []struct {
		name string
		req  []byte
		msg  string
	}{
		{"unknown want", pkts("want 2222222222222222222222222222222222222222 side-band-64k\n", "", "done\n"), "not our ref 2222222222222222222222222222222222222222"},
		{"bad want", pkts("want xyz\n", ""), "expected to get object ID"},
		{"bad line", pkts(want, "frobnicate\n", ""), "unexpected 'frobnicate'"},
		{"deepen 0", pkts(want, "deepen 0\n", ""), "invalid deepen"},
		{"deepen and since", pkts(want, "deepen 2\n", "deepen-since 1\n", ""), "cannot be used together"},
		{"deepen-not unknown", pkts(want, "deepen-not nope\n", ""), "deepen-not is not a ref: nope"},
		{"since too late", pkts(want, "deepen-since 99999999999\n", ""), "no commits selected"},
		{"filter", pkts(want, "filter blob:none\n", ""), "filtering capability not negotiated"},
		{"bad have", pkts(want, "", "have zz\n", ""), "expected to get object ID"},
		{"garbage", []byte("zzzz"), "bad pkt-line length"},
		{"truncated", []byte("0032want"), "truncated pkt-line"},
		{"cut off wants", pkts(want), "request ended before the end of the want list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.upload(t, tc.req)
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error %v, want a bad request", err)
			}
			var re *RequestError
			if !errors.As(err, &re) || !strings.Contains(re.Msg, tc.msg) {
				t.Errorf("error %v, want %q", err, tc.msg)
			}
			r := parseResponse(t, out, true)
			if len(r.lines) == 0 || !strings.HasPrefix(r.lines[len(r.lines)-1], "ERR ") || !strings.Contains(r.lines[len(r.lines)-1], tc.msg) {
				t.Errorf("response %q", r.lines)
			}
		})
	}
}

func TestUploadPackCanceled(t *testing.T) {
	t.Parallel()
	f := newProtoFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := UploadPack(ctx, &out, bytes.NewReader(pkts("want "+f.head.String()+" side-band-64k\n", "", "done\n")), f.repo)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if r := parseResponse(t, out.Bytes(), true); !strings.Contains(r.errMsg, "request canceled") || r.pack != nil {
		t.Errorf("response %+v", r)
	}
}

// v2req builds a protocol v2 request: command, capabilities, delim,
// arguments, flush.
func v2req(command string, args ...string) []byte {
	var b bytes.Buffer
	b.Write(pkts("command="+command+"\n", "agent=git/2.39.5\n", "object-format=sha1\n"))
	b.WriteString("0001")
	for _, a := range args {
		b.Write(pkts(a + "\n"))
	}
	b.WriteString("0000")
	return b.Bytes()
}

// parseV2 splits a v2 response into text lines ("" flush, "|" delim)
// and the pack after "packfile".
func parseV2(t *testing.T, b []byte) response {
	t.Helper()
	var r response
	inPack := false
	for len(b) > 0 {
		n, ok := unhex4(b[:4])
		if !ok {
			t.Fatalf("bad pkt-line: %q", b[:min(len(b), 20)])
		}
		switch n {
		case 0:
			r.lines = append(r.lines, "")
			b = b[4:]
			continue
		case 1:
			r.lines = append(r.lines, "|")
			b = b[4:]
			continue
		}
		payload := b[4:n]
		b = b[n:]
		if inPack {
			switch payload[0] {
			case 1:
				r.pack = append(r.pack, payload[1:]...)
			case 2:
				r.progress += string(payload[1:])
			case 3:
				r.errMsg += string(payload[1:])
			}
			continue
		}
		line := strings.TrimSuffix(string(payload), "\n")
		r.lines = append(r.lines, line)
		inPack = line == "packfile"
	}
	return r
}

func (f *protoFixture) uploadV2(t *testing.T, req []byte) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	err := UploadPackV2(context.Background(), &out, bytes.NewReader(req), f.repo)
	return out.Bytes(), err
}

func TestProtocolV2(t *testing.T) {
	t.Parallel()
	f := newProtoFixture(t)
	for in, want := range map[string]bool{"version=2": true, "version=1": false, "": false, "foo=bar:version=2": true} {
		if got := IsProtocolV2(in); got != want {
			t.Errorf("IsProtocolV2(%q) = %v", in, got)
		}
	}
	var b bytes.Buffer
	if err := AdvertiseUploadPackV2(&b, f.repo); err != nil {
		t.Fatal(err)
	}
	if r := parseV2(t, b.Bytes()); r.lines[0] != "version 2" || !slices.Contains(r.lines, "fetch=shallow wait-for-done") || !slices.Contains(r.lines, "ls-refs") || r.lines[len(r.lines)-1] != "" {
		t.Errorf("advertisement %q", r.lines)
	}

	t.Run("ls-refs", func(t *testing.T) {
		out, err := f.uploadV2(t, v2req("ls-refs", "peel", "symrefs", "ref-prefix HEAD", "ref-prefix refs/tags/v"))
		if err != nil {
			t.Fatal(err)
		}
		v1 := strings.TrimSpace(f.c.run(f.dir, "rev-parse", "v1", "v1^{}", "v1-signed"))
		ids := strings.Fields(v1)
		want := []string{
			f.head.String() + " HEAD symref-target:refs/heads/master",
			ids[0] + " refs/tags/v1 peeled:" + ids[1],
			ids[2] + " refs/tags/v1-signed peeled:" + ids[1],
			"",
		}
		if got := parseV2(t, out).lines; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("ls-refs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		out, err = f.uploadV2(t, v2req("ls-refs"))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(parseV2(t, out).lines); n != len(f.repo.Refs)+2 {
			t.Errorf("ls-refs without prefixes: %d lines for %d refs", n, len(f.repo.Refs))
		}
	})

	want := "want " + f.head.String()
	common := "have " + f.tip20.String()
	unknown := "have 1111111111111111111111111111111111111111"
	for _, tc := range []struct {
		name  string
		args  []string
		lines []string
		pack  bool
	}{
		{"round nothing common", []string{want, unknown}, []string{"acknowledgments", "NAK", ""}, false},
		{"round ready", []string{want, "ofs-delta", unknown, common}, []string{"acknowledgments", "ACK " + f.tip20.String(), "ready", "|", "packfile"}, true},
		{"round wait-for-done", []string{want, "wait-for-done", common}, []string{"acknowledgments", "ACK " + f.tip20.String(), ""}, false},
		{"done", []string{want, "thin-pack", "ofs-delta", common, "done"}, []string{"packfile"}, true},
		{"deepen", []string{want, "deepen 1", "done"}, []string{"shallow-info", "shallow " + f.head.String(), "|", "packfile"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.uploadV2(t, v2req("fetch", tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			r := parseV2(t, out)
			lines := r.lines
			if tc.pack {
				if lines[len(lines)-1] != "" {
					t.Errorf("no final flush: %q", lines)
				}
				lines = lines[:len(lines)-1]
			}
			if strings.Join(lines, "|") != strings.Join(tc.lines, "|") {
				t.Errorf("lines %q, want %q", lines, tc.lines)
			}
			if tc.pack != (r.pack != nil) {
				t.Fatalf("pack: %d bytes", len(r.pack))
			}
			if tc.pack {
				checkPackThin(t, f, r.pack)
			}
		})
	}

	for _, tc := range []struct {
		name string
		req  []byte
		msg  string
	}{
		{"unknown command", v2req("frob"), "unknown command 'frob'"},
		{"no wants", v2req("fetch", "done"), "no wants"},
		{"bad argument", v2req("fetch", want, "frob"), "unexpected line: 'frob'"},
		{"not our ref", v2req("fetch", "want 2222222222222222222222222222222222222222", "done"), "not our ref"},
		{"filter", v2req("fetch", want, "filter blob:none", "done"), "filtering capability not negotiated"},
		{"no command", pkts("agent=x\n", ""), "expected a command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.uploadV2(t, tc.req)
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error %v", err)
			}
			r := parseV2(t, out)
			if last := r.lines[len(r.lines)-1]; !strings.HasPrefix(last, "ERR ") || !strings.Contains(last, tc.msg) {
				t.Errorf("response %q, want ERR %s", r.lines, tc.msg)
			}
		})
	}
}
