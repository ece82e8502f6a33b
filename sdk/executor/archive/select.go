package archive

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// Selection is what Select chose: relative, slash-separated paths in walk
// order, and what it had to say about the rest.
type Selection struct {
	// Dirs are directories a pattern matched (and those under them), kept
	// so empty ones survive; Files are regular files.
	Dirs, Files []string
	// Warnings are for the job's trace: patterns that leave the directory
	// or are malformed, patterns that matched nothing, symbolic links left
	// out.
	Warnings []string
}

// Empty reports whether nothing was selected.
func (s Selection) Empty() bool { return len(s.Files) == 0 && len(s.Dirs) == 0 }

// Select walks root and picks what an artifacts spec asks for: every file
// and directory matching one of patterns (see Match; a matched directory
// brings its whole tree; a trailing "/" is allowed), and when untracked,
// every file not in tracked (git's tracked files, relative slash paths).
// Nothing under .git is ever picked, and symbolic links are neither
// followed nor picked: a job cannot make its executor read a file outside
// its work directory.
func Select(root string, patterns []string, untracked bool, tracked map[string]bool) (Selection, error) {
	var sel Selection
	var pats []string
	for _, p := range patterns {
		clean := path.Clean(strings.TrimSpace(p))
		switch {
		case p == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../"):
			sel.Warnings = append(sel.Warnings, "artifacts: "+quote(p)+" is outside the project directory; ignored")
		case !validPattern(clean):
			sel.Warnings = append(sel.Warnings, "artifacts: "+quote(p)+" is not a valid pattern; ignored")
		default:
			pats = append(pats, clean)
		}
	}
	matched := make([]bool, len(pats))
	matchedDirs := map[string]bool{}
	links := 0
	under := func(rel string) bool {
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if matchedDirs[d] {
				return true
			}
		}
		return false
	}
	matches := func(rel string) bool {
		hit := false
		for i, p := range pats {
			if p == "." || Match(p, rel) {
				matched[i] = true
				hit = true
			}
		}
		return hit
	}
	err := filepath.WalkDir(root, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if full == root {
			return nil
		}
		rel, err := filepath.Rel(root, full)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			if under(rel) || matches(rel) || (untracked && !tracked[rel]) {
				links++
			}
		case d.IsDir():
			if under(rel) || matches(rel) {
				matchedDirs[rel] = true
				sel.Dirs = append(sel.Dirs, rel)
			}
		case d.Type().IsRegular():
			if under(rel) || matches(rel) || (untracked && !tracked[rel]) {
				sel.Files = append(sel.Files, rel)
			}
		}
		return nil
	})
	if err != nil {
		return sel, err
	}
	for i, p := range pats {
		if !matched[i] {
			sel.Warnings = append(sel.Warnings, "artifacts: "+quote(p)+": no matching files")
		}
	}
	if links > 0 {
		sel.Warnings = append(sel.Warnings, "artifacts: symbolic links are not archived ("+itoa(links)+" left out)")
	}
	return sel, nil
}

func quote(s string) string { return `"` + s + `"` }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
