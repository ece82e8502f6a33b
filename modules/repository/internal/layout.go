package internal

// What a repository directory holds, for restore, which trusts no archive.
// Fennec writes only HEAD, config, packed-refs, refs/ and objects/ (loose
// objects, and packs with their index and Fennec's sidecar) in a bare
// repository (see captureRepo); everything else git knows (an index,
// hooks/, info/, objects/info/alternates, commondir, worktrees/...) is a
// file a git process would act on: run a command (core.fsmonitor with an
// index, a hook), read another directory (alternates, commondir), or change
// what history is (grafts). Restore refuses an archive holding any of them
// (acceptEntry, before anything is written), takes no config but one that
// says what Fennec's says, and writes Fennec's own config in its place
// before git fsck runs.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// repoConfig is the config Fennec writes in every repository (go-git's
// bare init writes exactly this; TestRepoConfigIsFennecs checks).
const repoConfig = "[core]\n\tbare = true\n"

// keepsOnly ends every refusal of a repository file.
const keepsOnly = "a repository restored holds only what Fennec writes (HEAD, config, packed-refs, refs/, objects/)"

// acceptEntry is the repository participant's BackupSpec.Accept: name is an
// archive path under repositories/.
func acceptEntry(name string, dir bool) error {
	parts := strings.Split(name, "/")
	if parts[0] != "repositories" {
		return fmt.Errorf("%s: not under repositories/", name)
	}
	hashed := len(parts) >= 2 && parts[1] == "@hashed"
	switch {
	case len(parts) == 1:
	case len(parts) == 2 && hashed:
	case len(parts) == 3 && hashed && isLowerHex(parts[2], 2):
	case len(parts) == 4 && hashed && isLowerHex(parts[2], 2) && isLowerHex(parts[3], 2):
	case len(parts) == 5 && hashed && isRepoDir(parts[2], parts[3], parts[4]):
	case len(parts) > 5 && hashed && isRepoDir(parts[2], parts[3], parts[4]):
		return acceptInRepo(name, strings.Join(parts[5:], "/"), dir)
	default:
		return fmt.Errorf("%s: not a repository's place (repositories/@hashed/ab/cd/<sha256 of the project id>.git)", name)
	}
	if !dir {
		return fmt.Errorf("%s: a file where the repositories' directories are", name)
	}
	return nil
}

// isRepoDir: <a><b>...(64 hex).git, in @hashed/<a>/<b>/ (Storage.Path).
func isRepoDir(a, b, name string) bool {
	h, ok := strings.CutSuffix(name, ".git")
	return ok && isLowerHex(h, 64) && h[:2] == a && h[2:4] == b
}

// acceptInRepo checks rel, a path inside a repository (name is the whole
// archive path, for the message).
func acceptInRepo(name, rel string, dir bool) error {
	parts := strings.Split(rel, "/")
	wantDir := false
	switch {
	case rel == "HEAD" || rel == "config" || rel == "packed-refs":
	case rel == "objects" || rel == "objects/info" || rel == "objects/pack" || rel == "refs":
		wantDir = true
	case parts[0] == "refs":
		// Directories and refs: every name a ref may have, which also keeps
		// out *.lock and names starting with a dot.
		if !checkRefFormat(rel) {
			return fmt.Errorf("%s: %q is not a ref name; %s", name, rel, keepsOnly)
		}
		return nil
	case len(parts) == 2 && parts[0] == "objects" && isLowerHex(parts[1], 2):
		wantDir = true
	case len(parts) == 3 && parts[0] == "objects" && isLowerHex(parts[1], 2) && isLowerHex(parts[2], 38):
	case len(parts) == 3 && parts[0] == "objects" && parts[1] == "pack" && isPackFile(parts[2]):
	default:
		return fmt.Errorf("%s: %s; %s", name, whyRefused(parts), keepsOnly)
	}
	if dir != wantDir {
		what := "a directory where Fennec writes a file"
		if wantDir {
			what = "a file where Fennec writes a directory"
		}
		return fmt.Errorf("%s: %s; %s", name, what, keepsOnly)
	}
	return nil
}

// isPackFile: pack-<40 hex>.pack, .idx, or .fennec (gitpack's sidecar).
func isPackFile(name string) bool {
	base, ext, ok := strings.Cut(name, ".")
	h, isPack := strings.CutPrefix(base, "pack-")
	return ok && isPack && isLowerHex(h, 40) && (ext == "pack" || ext == "idx" || ext == "fennec")
}

// whyRefused says what a file Fennec never writes would do.
func whyRefused(parts []string) string {
	switch {
	case parts[0] == "index":
		return "a work tree's index, which Fennec never writes (git reading it runs core.fsmonitor)"
	case parts[0] == "hooks":
		return "hooks are commands git runs, and Fennec writes none"
	case parts[0] == "info":
		return "info/ (attributes, exclude, grafts) changes what git reads, and Fennec writes none"
	case len(parts) >= 3 && parts[0] == "objects" && parts[1] == "info" && strings.HasSuffix(parts[2], "alternates"):
		return "alternates would make the repository read another directory's objects"
	case parts[0] == "commondir" || parts[0] == "worktrees" || parts[0] == "modules":
		return "it points git at another directory"
	}
	return "not a file Fennec writes in a repository"
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// maxRepoFile bounds the config and HEAD read from an archive.
const maxRepoFile = 64 << 10

// readSmall reads a small file of a restored repository.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRepoFile+1))
	if err == nil && len(b) > maxRepoFile {
		err = fmt.Errorf("larger than %d bytes", maxRepoFile)
	}
	return b, err
}

// checkRepoConfig takes an archive's config only if it says nothing but
// what Fennec's says: the section core with bare = true (and
// repositoryformatversion = 0, which git's own init adds), blank lines and
// comments. Anything else is refused, and so is any way of writing it this
// reading might take otherwise than git (a key on a header's line, quotes,
// continuations), since the config is replaced by Fennec's own anyway.
func checkRepoConfig(b []byte) error {
	if bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }) {
		return errors.New("it holds control characters")
	}
	core := false
	for i, line := range strings.Split(string(b), "\n") {
		l := strings.TrimSpace(line)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if l[0] == '[' {
			end := strings.IndexByte(l, ']')
			if end < 0 || strings.TrimSpace(l[end+1:]) != "" {
				return fmt.Errorf("line %d (%q) is not a section header as Fennec writes one", i+1, l)
			}
			name := strings.TrimSpace(l[1:end])
			base, _, _ := strings.Cut(name, " ")
			base, _, _ = strings.Cut(base, ".")
			switch strings.ToLower(base) {
			case "core":
				if !strings.EqualFold(name, "core") {
					return fmt.Errorf("line %d: section [%s] is not one Fennec writes", i+1, name)
				}
				core = true
			case "include", "includeif":
				return fmt.Errorf("line %d: [%s] would make git read another file", i+1, name)
			default:
				return fmt.Errorf("line %d: section [%s] is not one Fennec writes", i+1, name)
			}
			continue
		}
		key, value, _ := strings.Cut(l, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !core {
			return fmt.Errorf("line %d: %q is outside any section", i+1, key)
		}
		switch strings.ToLower(key) {
		case "bare":
			if value != "true" {
				return fmt.Errorf("line %d: core.bare = %q (Fennec's repositories are bare)", i+1, value)
			}
		case "repositoryformatversion":
			if value != "0" {
				return fmt.Errorf("line %d: core.repositoryformatversion = %q (Fennec's repositories are version 0)", i+1, value)
			}
		default:
			return fmt.Errorf("line %d: core.%s is not a setting Fennec writes", i+1, key)
		}
	}
	return nil
}

// checkHEAD takes a HEAD that names a ref under refs/, or a commit.
func checkHEAD(b []byte) error {
	l := strings.TrimSuffix(string(b), "\n")
	if target, sym := strings.CutPrefix(l, "ref: "); sym {
		if strings.HasPrefix(target, "refs/") && checkRefFormat(target) {
			return nil
		}
	} else if isLowerHex(l, 40) {
		return nil
	}
	return fmt.Errorf("%q names neither a ref under refs/ nor a commit", l)
}
