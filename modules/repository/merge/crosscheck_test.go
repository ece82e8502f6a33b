package merge

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// -crosscheck N runs N random line merges through both Merge3 and C git
// (merge-file, and merge-tree for the histogram diff merge-ort uses) and
// fails on the first difference. It needs git, so it is off by default.
var crosscheck = flag.Int("crosscheck", 0, "compare N random line merges with C git (needs git)")

// randomText derives a text from base with a few random line edits, over a
// small alphabet so that repeated lines and ambiguous alignments are common.
func randomText(r *rand.Rand, base []string) []string {
	alphabet := []string{"a\n", "b\n", "c\n", "d\n", "e\n", "\n", "}\n", "a\r\n", "x y\n"}
	out := append([]string(nil), base...)
	for n := r.IntN(4); n > 0; n-- {
		pos := 0
		if len(out) > 0 {
			pos = r.IntN(len(out) + 1)
		}
		switch r.IntN(3) {
		case 0: // insert
			ins := []string{}
			for k := r.IntN(3) + 1; k > 0; k-- {
				ins = append(ins, alphabet[r.IntN(len(alphabet))])
			}
			out = append(out[:pos], append(ins, out[pos:]...)...)
		case 1: // delete
			if pos < len(out) {
				end := min(len(out), pos+r.IntN(3)+1)
				out = append(out[:pos], out[end:]...)
			}
		default: // replace
			if pos < len(out) {
				out[pos] = alphabet[r.IntN(len(alphabet))]
			}
		}
	}
	return out
}

func joinText(r *rand.Rand, lines []string) []byte {
	s := strings.Join(lines, "")
	if len(s) > 0 && r.IntN(6) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return []byte(s)
}

func TestCrossCheckWithGit(t *testing.T) {
	if *crosscheck == 0 {
		t.Skip("use -crosscheck N to compare with C git")
	}
	dir := t.TempDir()
	git := func(stdin []byte, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.Output()
		return string(out), err
	}
	if _, err := git(nil, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, uint64(*crosscheck)))
	alphabet := []string{"a\n", "b\n", "c\n", "d\n", "e\n", "\n", "}\n"}
	for i := 0; i < *crosscheck; i++ {
		var baseLines []string
		for n := r.IntN(12); n > 0; n-- {
			baseLines = append(baseLines, alphabet[r.IntN(len(alphabet))])
		}
		base := joinText(r, baseLines)
		ours := joinText(r, randomText(r, baseLines))
		theirs := joinText(r, randomText(r, baseLines))

		// merge-file: Myers, alnum joining.
		for name, b := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := git(nil, "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
		got, _, _ := Merge3(base, ours, theirs, LineOptions{OursLabel: "ours", TheirsLabel: "theirs",
			Algorithm: Myers, Level: LevelZealousAlnum})
		if string(got) != want {
			t.Fatalf("merge-file case %d differs\nbase:\n%q\nours:\n%q\ntheirs:\n%q\ngit:\n%s\nwe:\n%s", i, base, ours, theirs, want, got)
		}

		// merge-tree: histogram, zealous.
		var commits [3]string
		for k, b := range [][]byte{base, ours, theirs} {
			blob, err := git(b, "hash-object", "-w", "--stdin")
			if err != nil {
				t.Fatal(err)
			}
			tree, err := git([]byte(fmt.Sprintf("100644 blob %s\tf\n", strings.TrimSpace(blob))), "mktree")
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"commit-tree", strings.TrimSpace(tree), "-m", "x"}
			if k > 0 {
				args = append(args, "-p", commits[0])
			}
			c, err := git(nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			commits[k] = strings.TrimSpace(c)
		}
		out, _ := git(nil, "merge-tree", "--write-tree", "--name-only", commits[1], commits[2])
		tree := strings.SplitN(out, "\n", 2)[0]
		want, _ = git(nil, "cat-file", "-p", tree+":f")
		got, _, _ = Merge3(base, ours, theirs, LineOptions{OursLabel: commits[1], TheirsLabel: commits[2]})
		if string(got) != want {
			t.Fatalf("merge-tree case %d differs\nbase:\n%q\nours:\n%q\ntheirs:\n%q\ngit:\n%s\nwe:\n%s", i, base, ours, theirs, want, got)
		}
	}
}
