package internal

// The command of an SSH session ("exec"), as git sends it:
//
//	git-upload-pack '/namespace/project.git'
//	git upload-pack 'namespace/project'
//	git-receive-pack '~/group/sub/project.git'
//
// It is never given to a shell. The parser splits words on spaces and tabs,
// takes single-quoted text literally (git quotes a ' in a path as '\''),
// a backslash outside quotes as escaping the next character, and refuses
// every other shell syntax (double quotes, $, `, ;, |, &, <, >, parentheses,
// globs, newlines and other control characters), so a command that would
// mean something else to a shell is refused rather than guessed at.

import (
	"errors"
	"strings"
)

// The git services served over SSH.
const (
	svcUploadPack    = "git-upload-pack"
	svcReceivePack   = "git-receive-pack"
	svcUploadArchive = "git-upload-archive"
)

var (
	// errSSHCommand: not a git command this server runs (a shell command,
	// another program, extra arguments).
	errSSHCommand = errors.New("ssh: command not allowed")
	// errSSHPath: a git command whose path cannot name a project (.., an
	// absolute path elsewhere, empty segments); answered as an unknown
	// project.
	errSSHPath = errors.New("ssh: not a project path")
)

// maxSSHCommand bounds a command: a service name and a project path.
const maxSSHCommand = 4096

// sshCommand is a parsed command: the service and the project's full path
// (namespace/project, without .git).
type sshCommand struct {
	service string
	project string
}

// parseSSHCommand parses the command of an exec request.
func parseSSHCommand(line string) (sshCommand, error) {
	if len(line) > maxSSHCommand {
		return sshCommand{}, errSSHCommand
	}
	argv, ok := splitSSHWords(line)
	if !ok || len(argv) == 0 {
		return sshCommand{}, errSSHCommand
	}
	service, args := argv[0], argv[1:]
	if service == "git" && len(args) > 0 {
		service, args = "git-"+args[0], args[1:]
	}
	switch service {
	case svcUploadPack, svcReceivePack, svcUploadArchive:
	default:
		return sshCommand{}, errSSHCommand
	}
	if len(args) != 1 {
		return sshCommand{}, errSSHCommand
	}
	project, ok := projectPath(args[0])
	if !ok {
		return sshCommand{service: service}, errSSHPath
	}
	return sshCommand{service: service, project: project}, nil
}

// splitSSHWords splits a command line into words with the quoting rules
// above; ok is false for anything else.
func splitSSHWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			quoted := s[i+1 : i+1+end]
			if strings.ContainsFunc(quoted, isControl) {
				return nil, false
			}
			cur.WriteString(quoted)
			inWord = true
			i += end + 1
		case c == '\\':
			if i+1 >= len(s) || isControl(rune(s[i+1])) {
				return nil, false
			}
			cur.WriteByte(s[i+1])
			inWord = true
			i++
		case isControl(rune(c)) || strings.IndexByte(shellSyntax, c) >= 0:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// shellSyntax are the characters that mean something to a shell outside
// quotes, refused there.
const shellSyntax = "\"$`;|&<>(){}[]*?!#"

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// projectPath turns the path git sends into a project's full path: an
// optional leading "/" or "~/" (or "~"), an optional ".git" (and trailing
// "/"), at least two segments, none empty, "." or "..", no backslash or
// NUL. The projects module then decides whether it names a project.
func projectPath(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "~/"):
		p = p[2:]
	case strings.HasPrefix(p, "~"):
		p = p[1:]
	case strings.HasPrefix(p, "/"):
		p = p[1:]
	}
	p = strings.TrimSuffix(p, "/")
	p = strings.TrimSuffix(p, ".git")
	segs := strings.Split(p, "/")
	if len(segs) < 2 {
		return "", false
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\\\x00") || strings.ContainsFunc(s, isControl) {
			return "", false
		}
	}
	return p, true
}
