package merge

// Helpers shared by the golden tests: running C git to record expected
// results (-update), and the text format both git's and our results are
// rendered to for comparison.

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "record expected results in testdata from C git (needs git >= 2.38)")

// gitRepo is a scratch repository for recording expected results.
type gitRepo struct {
	t   *testing.T
	dir string
	env []string // extra environment for the next commands
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("-update needs git in PATH")
	}
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.run(nil, "init", "-q", "-b", "main")
	return r
}

// run runs git and returns its stdout and exit status; statuses below 128
// are accepted, as merge-tree and merge-file use them to report conflicts.
func (r *gitRepo) run(stdin []byte, args ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+r.dir, "LC_ALL=C",
		"GIT_AUTHOR_NAME=fennec", "GIT_AUTHOR_EMAIL=fennec@example.com",
		"GIT_COMMITTER_NAME=fennec", "GIT_COMMITTER_EMAIL=fennec@example.com",
		"GIT_AUTHOR_DATE=2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2000-01-01T00:00:00Z")
	cmd.Env = append(cmd.Env, r.env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() >= 128 {
			r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

func (r *gitRepo) trimmed(stdin []byte, args ...string) string {
	out, _ := r.run(stdin, args...)
	return strings.TrimSpace(out)
}

// outcome is a merge result in a comparable form.
type outcome struct {
	tree      string
	clean     bool
	entries   []string          // "mode hash path", in tree order
	blobs     map[string][]byte // path -> content, for the blobs in entries
	conflicts []string          // "path kind stages"
	messages  []string          // "kind | paths | text"
}

// render writes an outcome in the golden file format.
func (o *outcome) render(header string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", header)
	fmt.Fprintf(&b, "tree %s\nclean %v\n", o.tree, o.clean)
	b.WriteString("== entries\n")
	for _, e := range o.entries {
		b.WriteString(e + "\n")
	}
	b.WriteString("== conflicts\n")
	for _, c := range o.conflicts {
		b.WriteString(c + "\n")
	}
	b.WriteString("== messages\n")
	for _, m := range o.messages {
		b.WriteString(m + "\n")
	}
	paths := make([]string, 0, len(o.blobs))
	for p := range o.blobs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "== blob %s %d\n", strconv.Quote(p), len(o.blobs[p]))
		b.Write(o.blobs[p])
		b.WriteString("\n")
	}
	return b.Bytes()
}

// kindOfMessage derives the conflict kind from the text of a git message;
// "" for informational ones.
func kindOfMessage(text string) ConflictKind {
	switch {
	case strings.HasPrefix(text, "CONFLICT ("):
		k := strings.TrimPrefix(text, "CONFLICT (")
		return ConflictKind(k[:strings.Index(k, ")")])
	case strings.HasPrefix(text, "warning: Cannot merge binary files"):
		return ConflictBinary
	case strings.HasPrefix(text, "Failed to merge submodule"):
		return ConflictSubmodule
	}
	return ""
}

func messageLine(kind ConflictKind, paths []string, text string) string {
	k := string(kind)
	if k == "" {
		k = "info"
	}
	return fmt.Sprintf("%s | %s | %s", k, strings.Join(paths, ", "), strings.TrimSuffix(text, "\n"))
}

type stageEntry struct {
	mode, hash string
}

func conflictLine(path string, kind ConflictKind, stages [3]*stageEntry) string {
	parts := []string{path, "[" + string(kind) + "]"}
	for i, s := range stages {
		if s == nil {
			parts = append(parts, fmt.Sprintf("%d:-", i+1))
		} else {
			parts = append(parts, fmt.Sprintf("%d:%s:%s", i+1, s.mode, s.hash))
		}
	}
	return strings.Join(parts, " ")
}

// sortMessages orders messages as git prints them: by the first path they
// name, keeping the order in which they were made for one path.
type pathMessage struct {
	primary string
	line    string
	kind    ConflictKind
	paths   []string
}

func sortedMessages(ms []pathMessage) []pathMessage {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].primary < ms[j].primary })
	return ms
}

// gitMergeTree records C git's result of merging the trees of two commits.
func (r *gitRepo) mergeTree(ours, theirs string) *outcome {
	out, code := r.run(nil, "merge-tree", "--write-tree", "--messages", "-z", ours, theirs)
	tokens := strings.Split(out, "\x00")
	o := &outcome{tree: tokens[0], clean: code == 0, blobs: map[string][]byte{}}
	i := 1
	stages := map[string]*[3]*stageEntry{}
	var conflicted []string
	for ; i < len(tokens) && tokens[i] != ""; i++ {
		// "<mode> <hash> <stage>\t<path>"
		meta, path, _ := strings.Cut(tokens[i], "\t")
		f := strings.Fields(meta)
		st, _ := strconv.Atoi(f[2])
		if stages[path] == nil {
			stages[path] = &[3]*stageEntry{}
			conflicted = append(conflicted, path)
		}
		stages[path][st-1] = &stageEntry{mode: f[0], hash: f[1]}
	}
	i++
	var msgs []pathMessage
	for i < len(tokens) && tokens[i] != "" {
		n, err := strconv.Atoi(tokens[i])
		if err != nil {
			// Free text after the messages: git's advice on
			// resolving submodule conflicts by hand.
			break
		}
		paths := tokens[i+1 : i+1+n]
		text := tokens[i+2+n]
		i += 3 + n
		msgs = append(msgs, pathMessage{primary: paths[0], kind: kindOfMessage(text), paths: paths,
			line: messageLine(kindOfMessage(text), paths, text)})
	}
	msgs = sortedMessages(msgs)
	for _, m := range msgs {
		o.messages = append(o.messages, m.line)
	}
	sort.Strings(conflicted)
	for _, p := range conflicted {
		kind := ConflictKind("")
		for _, m := range msgs {
			if m.kind != "" && slices.Contains(m.paths, p) {
				kind = m.kind
				break
			}
		}
		o.conflicts = append(o.conflicts, conflictLine(p, kind, *stages[p]))
	}
	ls, _ := r.run(nil, "ls-tree", "-r", "-z", o.tree)
	for _, line := range strings.Split(strings.TrimSuffix(ls, "\x00"), "\x00") {
		if line == "" {
			continue
		}
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		o.entries = append(o.entries, fmt.Sprintf("%s %s %s", f[0], f[2], path))
		if f[1] == "blob" {
			content, _ := r.run(nil, "cat-file", "blob", f[2])
			o.blobs[path] = []byte(content)
		}
	}
	return o
}

// commitTree commits a flat listing of files into the scratch repository
// and returns the commit. files maps path to mode and content; a gitlink's
// content is its commit hash.
func (r *gitRepo) commitTree(files map[string]testFile, parent string) string {
	var index bytes.Buffer
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := files[p]
		hash := strings.TrimSpace(string(f.content))
		if f.mode != "160000" {
			tmp := filepath.Join(r.dir, ".blob")
			if err := os.WriteFile(tmp, f.content, 0o644); err != nil {
				r.t.Fatal(err)
			}
			hash = r.trimmed(nil, "hash-object", "-w", tmp)
		}
		fmt.Fprintf(&index, "%s %s\t%s\n", f.mode, hash, p)
	}
	indexFile := filepath.Join(r.dir, ".index")
	os.Remove(indexFile)
	r.env = []string{"GIT_INDEX_FILE=" + indexFile}
	defer func() { r.env = nil }()
	r.run(index.Bytes(), "update-index", "--add", "--index-info")
	tree := r.trimmed(nil, "write-tree")
	args := []string{"commit-tree", tree, "-m", "x"}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return r.trimmed(nil, args...)
}
