package merge

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDiffLinesMatchesGit diffs random pairs of indented texts with
// DiffLines and with `git diff --no-index -U0`, with and without the
// indent heuristic, and wants the same hunks. The texts are made of a few
// code-like lines, so that changes can often slide and the heuristic has
// choices to make.
func TestDiffLinesMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	alphabet := []string{"}\n", "{\n", "\n", "\tx();\n", "\t}\n", "\treturn;\n", "\tif (a) {\n", "\t\ty();\n", "  z\n", "    \n"}
	gen := func(r *rand.Rand, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = alphabet[r.IntN(len(alphabet))]
		}
		return out
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(35, 1))
	heuristicMattered := 0
	for i := 0; i < 150; i++ {
		old := gen(r, 4+r.IntN(12))
		cur := append([]string(nil), old...)
		for n := 1 + r.IntN(3); n > 0; n-- {
			pos := r.IntN(len(cur) + 1)
			switch r.IntN(3) {
			case 0:
				cur = append(cur[:pos], append(gen(r, 1+r.IntN(4)), cur[pos:]...)...)
			case 1:
				if pos < len(cur) {
					cur = append(cur[:pos], cur[min(len(cur), pos+1+r.IntN(3)):]...)
				}
			default:
				if pos < len(cur) {
					cur[pos] = alphabet[r.IntN(len(alphabet))]
				}
			}
		}
		a, b := []byte(strings.Join(old, "")), []byte(strings.Join(cur, ""))
		var results [2]string
		for k, heuristic := range []bool{false, true} {
			want := gitHunks(t, dir, a, b, heuristic)
			got := formatEdits(DiffLines(a, b, DiffOptions{Algorithm: Myers, IndentHeuristic: heuristic}))
			if got != want {
				t.Fatalf("case %d (indent heuristic %v):\nold:\n%s\nnew:\n%s\ngit: %s\nours: %s", i, heuristic, a, b, want, got)
			}
			results[k] = got
		}
		if results[0] != results[1] {
			heuristicMattered++
		}
	}
	if heuristicMattered == 0 {
		t.Fatal("the indent heuristic changed no case: the test does not test it")
	}
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// gitHunks diffs a and b with git and renders its hunks as formatEdits
// does.
func gitHunks(t *testing.T, dir string, a, b []byte, heuristic bool) string {
	t.Helper()
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(pa, a, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	flag := "--no-indent-heuristic"
	if heuristic {
		flag = "--indent-heuristic"
	}
	cmd := exec.Command("git", "diff", "--no-index", "--no-color", "-U0", "--diff-algorithm=myers", flag, pa, pb)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("git diff: %v", err)
	}
	var edits []Edit
	for _, m := range hunkHeader.FindAllStringSubmatch(string(out), -1) {
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		oldStart, oldLines, newStart, newLines := num(m[1], 0), num(m[2], 1), num(m[3], 0), num(m[4], 1)
		// With no lines, a side's start is the line before the hunk.
		if oldLines > 0 {
			oldStart--
		}
		if newLines > 0 {
			newStart--
		}
		edits = append(edits, Edit{OldStart: oldStart, OldLines: oldLines, NewStart: newStart, NewLines: newLines})
	}
	return formatEdits(edits)
}

func formatEdits(edits []Edit) string {
	var b strings.Builder
	for _, e := range edits {
		fmt.Fprintf(&b, "[-%d,%d +%d,%d]", e.OldStart, e.OldLines, e.NewStart, e.NewLines)
	}
	return b.String()
}
