package merge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// A tree case is a directory under testdata/trees with base/, ours/ and
// theirs/ file trees (a missing one is an empty tree), an optional modes
// file with lines "<side> <path> <mode>" (side base, ours, theirs or *;
// mode 100755, 120000 for a symlink whose content is its target, or 160000
// for a gitlink whose content is the commit hash), and expected.golden:
// C git's `merge-tree --write-tree` result, recorded with -update.

const treeGoldenHeader = "git merge-tree --write-tree --messages -z ours theirs"

type testFile struct {
	mode    string
	content []byte
}

func loadTreeCase(t *testing.T, dir string) [3]map[string]testFile {
	t.Helper()
	modes := map[string]string{} // "side path" -> mode
	if data, err := os.ReadFile(filepath.Join(dir, "modes")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Fields(line)
			if len(f) != 3 {
				t.Fatalf("%s/modes: bad line %q", dir, line)
			}
			modes[f[0]+" "+f[1]] = f[2]
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var sides [3]map[string]testFile
	for i, side := range []string{"base", "ours", "theirs"} {
		sides[i] = map[string]testFile{}
		root := filepath.Join(dir, side)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			content, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mode := "100644"
			if m, ok := modes["* "+rel]; ok {
				mode = m
			}
			if m, ok := modes[side+" "+rel]; ok {
				mode = m
			}
			sides[i][rel] = testFile{mode: mode, content: content}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return sides
}

// buildTree stores files as blobs and nested trees and returns the root.
func buildTree(t *testing.T, s storer.EncodedObjectStorer, files map[string]testFile) *object.Tree {
	t.Helper()
	m := &treeMerge{s: s}
	dirs := map[string]map[string]object.TreeEntry{"": {}}
	var add func(dir, name string, e object.TreeEntry)
	add = func(dir, name string, e object.TreeEntry) {
		if dirs[dir] == nil {
			dirs[dir] = map[string]object.TreeEntry{}
		}
		dirs[dir][name] = e
	}
	for p, f := range files {
		mode, err := strconv.ParseUint(f.mode, 8, 32)
		if err != nil {
			t.Fatalf("%s: bad mode %q", p, f.mode)
		}
		var h plumbing.Hash
		if f.mode == "160000" {
			h = plumbing.NewHash(strings.TrimSpace(string(f.content)))
		} else if h, err = m.writeBlob(f.content); err != nil {
			t.Fatal(err)
		}
		dir, name := "", p
		if i := strings.LastIndex(p, "/"); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		add(dir, name, object.TreeEntry{Name: name, Mode: filemode.FileMode(mode), Hash: h})
	}
	// Every ancestor directory needs an entry map, even one that only
	// holds directories; then write the deepest first.
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if dirs[d] == nil {
				dirs[d] = map[string]object.TreeEntry{}
			}
		}
	}
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		if d != "" {
			order = append(order, d)
		}
	}
	sort.Slice(order, func(i, j int) bool { return strings.Count(order[i], "/") > strings.Count(order[j], "/") })
	for _, d := range order {
		h, err := m.writeTreeObject(dirs[d])
		if err != nil {
			t.Fatal(err)
		}
		parent := path.Dir(d)
		if parent == "." {
			parent = ""
		}
		add(parent, path.Base(d), object.TreeEntry{Name: path.Base(d), Mode: filemode.Dir, Hash: h})
	}
	root, err := m.writeTreeObject(dirs[""])
	if err != nil {
		t.Fatal(err)
	}
	tree, err := object.GetTree(s, root)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// ourOutcome runs MergeTrees on a case and renders its result like git's.
func ourOutcome(t *testing.T, sides [3]map[string]testFile) *outcome {
	t.Helper()
	s := memory.NewStorage()
	var trees [3]*object.Tree
	for i := range sides {
		trees[i] = buildTree(t, s, sides[i])
	}
	res, err := MergeTrees(s, trees[0], trees[1], trees[2], Options{OursLabel: "ours", TheirsLabel: "theirs"})
	if err != nil {
		t.Fatalf("MergeTrees: %v", err)
	}
	if (res.Err() == nil) != res.Clean || (res.Err() != nil && !errors.Is(res.Err(), ErrConflict)) {
		t.Errorf("Err() = %v for Clean = %v", res.Err(), res.Clean)
	}
	o := &outcome{tree: res.Tree.String(), clean: res.Clean, blobs: map[string][]byte{}}
	root, err := object.GetTree(s, res.Tree)
	if err != nil {
		t.Fatalf("result tree not stored: %v", err)
	}
	var walk func(prefix string, tree *object.Tree)
	walk = func(prefix string, tree *object.Tree) {
		for _, e := range tree.Entries {
			p := prefix + e.Name
			if e.Mode == filemode.Dir {
				sub, err := object.GetTree(s, e.Hash)
				if err != nil {
					t.Fatal(err)
				}
				walk(p+"/", sub)
				continue
			}
			o.entries = append(o.entries, fmt.Sprintf("%06o %s %s", uint32(e.Mode), e.Hash, p))
			if e.Mode != filemode.Submodule {
				data, err := (&treeMerge{s: s}).readBlob(e.Hash, p)
				if err != nil {
					t.Fatal(err)
				}
				o.blobs[p] = data
			}
		}
	}
	walk("", root)
	for _, c := range res.Conflicts {
		var stages [3]*stageEntry
		for i, e := range []*Entry{c.Base, c.Ours, c.Theirs} {
			if e != nil {
				stages[i] = &stageEntry{mode: fmt.Sprintf("%06o", uint32(e.Mode)), hash: e.Hash.String()}
			}
		}
		o.conflicts = append(o.conflicts, conflictLine(c.Path, c.Kind, stages))
	}
	var msgs []pathMessage
	for _, m := range res.Messages {
		msgs = append(msgs, pathMessage{primary: m.Paths[0], line: messageLine(m.Kind, m.Paths, m.Text)})
	}
	for _, m := range sortedMessages(msgs) {
		o.messages = append(o.messages, m.line)
	}
	return o
}

// stripComments drops the leading "#" lines of a golden file, which name
// the git version that recorded it.
func stripComments(b []byte) []byte {
	for bytes.HasPrefix(b, []byte("#")) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	return b
}

func gitVersion(r *gitRepo) string { return r.trimmed(nil, "version") }

func TestMergeTreesGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/trees/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no tree cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			sides := loadTreeCase(t, dir)
			golden := filepath.Join(dir, "expected.golden")
			if *update {
				r := newGitRepo(t)
				base := r.commitTree(sides[0], "")
				ours := r.commitTree(sides[1], base)
				theirs := r.commitTree(sides[2], base)
				r.run(nil, "update-ref", "refs/heads/ours", ours)
				r.run(nil, "update-ref", "refs/heads/theirs", theirs)
				want := r.mergeTree("ours", "theirs")
				header := fmt.Sprintf("recorded by go test -update from %s: %s", gitVersion(r), treeGoldenHeader)
				if err := os.WriteFile(golden, want.render(header), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A case where we knowingly differ from git says why in
			// known-difference and pins our own result in ours.golden.
			got := ourOutcome(t, sides).render(treeGoldenHeader)
			if reason, err := os.ReadFile(filepath.Join(dir, "known-difference")); err == nil {
				t.Logf("known difference from git: %s", bytes.TrimSpace(reason))
				golden = filepath.Join(dir, "ours.golden")
				if *update {
					header := "our result, which differs from git's expected.golden; see known-difference"
					if err := os.WriteFile(golden, ourOutcome(t, sides).render(header), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record it with -update)", err)
			}
			if w, g := stripComments(want), stripComments(got); !bytes.Equal(w, g) {
				t.Errorf("result differs from %s\n%s", golden, lineDiff(string(w), string(g)))
			}
		})
	}
}

// lineDiff shows the lines that differ between want and got, in order.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  git: %q\n  we:  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
