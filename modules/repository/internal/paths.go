package internal

// Paths a commit may write, and tree entry names a push may bring. A tree
// holding ".git" in any disguise (.GIT, .git with characters HFS+ ignores,
// .git. or GIT~1 on NTFS, .git::$INDEX_ALLOCATION...) fails git fsck
// (hasDotgit), cannot be checked out by stock git, and on an old client
// writes into the repository's own .git (hooks: code execution). Git and
// libgit2 refuse them on every platform; so does Fennec, in the commit and
// files APIs (validWritePath) and, unless turned off, in pushes
// (checkTreeEntry).

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// validWritePath checks a path the commit or files API writes (file_path,
// previous_path) and returns it cleaned of leading and trailing slashes:
// relative, no empty, "." or ".." component, no control character, and no
// component git would take for .git.
func validWritePath(p string) (string, bool) {
	clean, ok := cleanTreePath(p)
	if !ok || clean == "" {
		return "", false
	}
	for i := 0; i < len(clean); i++ {
		if clean[i] < 0x20 || clean[i] == 0x7f {
			return "", false
		}
	}
	for _, c := range strings.Split(clean, "/") {
		if treeEntryProblem(c) != "" {
			return "", false
		}
		// On Windows a backslash separates directories: a\..\b climbs.
		for _, piece := range strings.Split(c, `\`) {
			if piece == "." || piece == ".." {
				return "", false
			}
		}
	}
	return clean, true
}

// treeEntryProblem says what is wrong with a tree entry's name, in git
// fsck's words ("" when nothing is).
func treeEntryProblem(name string) string {
	switch {
	case name == "":
		return "emptyName: contains empty pathname"
	case strings.ContainsRune(name, '/'):
		return "fullPathname: contains full pathnames"
	case name == ".":
		return "hasDot: contains '.'"
	case name == "..":
		return "hasDotdot: contains '..'"
	}
	if isDotGit(name) {
		return "hasDotgit: contains '.git'"
	}
	// On NTFS a backslash separates directories too: every piece counts.
	if strings.ContainsRune(name, '\\') {
		for _, piece := range strings.Split(name, `\`) {
			if isDotGit(piece) {
				return "hasDotgit: contains '.git'"
			}
		}
	}
	return ""
}

// isDotGit reports whether a file system could take name for ".git".
// It allocates nothing: a push's check calls it on every tree entry.
func isDotGit(name string) bool {
	return len(name) >= 4 && (ntfsDotGit(name) || hfsDotGit(name))
}

// hfsIgnored are the code points HFS+ drops when it compares names
// (zero-width joiners, directional marks and the like): ".g\u200cit" is
// ".git" there.
func hfsIgnored(r rune) bool {
	switch {
	case r == 0x200c || r == 0x200d || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x206a && r <= 0x206f:
		return true
	}
	return r == 0xfeff
}

// hfsDotGit: name is ".git" once HFS+'s ignored code points are dropped,
// in any case. (Plain ASCII names are ntfsDotGit's.)
func hfsDotGit(name string) bool {
	ascii := true
	for i := 0; i < len(name); i++ {
		ascii = ascii && name[i] < utf8.RuneSelf
	}
	if ascii {
		return false
	}
	const want = ".git"
	n := 0
	for _, r := range name {
		if hfsIgnored(r) {
			continue
		}
		if n == len(want) || unicode.ToLower(r) != rune(want[n]) {
			return false
		}
		n++
	}
	return n == len(want)
}

// ntfsDotGit: name is ".git" or its 8.3 short name "git~1" (any case)
// followed only by what NTFS drops, trailing dots and spaces, up to the
// end or to a ':' that starts a stream name (".git::$INDEX_ALLOCATION" is
// the directory .git itself).
func ntfsDotGit(name string) bool {
	var rest string
	switch {
	case hasPrefixFold(name, ".git"):
		rest = name[len(".git"):]
	case hasPrefixFold(name, "git~1"):
		rest = name[len("git~1"):]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '.', ' ':
		case ':':
			return true
		default:
			return false
		}
	}
	return true
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case (prefix is
// lower-case ASCII).
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// entryNameProblem is treeEntryProblem for a name read from a tree
// object, with a fast path for the names that cannot be refused (most of
// them): at least three bytes, no slash or backslash, and a first byte
// that no refused name starts with ('.', 'g', or a non-ASCII byte such as
// an HFS+-ignored code point's).
func entryNameProblem(name []byte) string {
	if len(name) > 2 && bytes.IndexByte(name, '/') < 0 && bytes.IndexByte(name, '\\') < 0 {
		if c := name[0]; c != '.' && c != 'g' && c != 'G' && c < utf8.RuneSelf {
			return ""
		}
	}
	return treeEntryProblem(string(name))
}
