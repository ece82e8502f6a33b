package merge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line case is a directory under testdata/lines with files base, ours and
// theirs, and two results recorded from C git with -update:
// merge-file.golden (`git merge-file -p`, which diffs with Myers and joins
// conflicts separated by punctuation) and merge-ort.golden (the same file
// merged by `git merge-tree --write-tree`, which diffs with histogram).

// lineGolden renders a line merge result: whether it was clean, how many
// conflicts merge-file counted, and the merged text.
func lineGolden(header string, conflicts int, merged []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\nconflicts %d\n== merged\n", header, conflicts)
	b.Write(merged)
	return b.Bytes()
}

func readLineCase(t *testing.T, dir string) (base, ours, theirs []byte) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return read("base"), read("ours"), read("theirs")
}

func TestMerge3Golden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/lines/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no line cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			base, ours, theirs := readLineCase(t, dir)
			fileGolden := filepath.Join(dir, "merge-file.golden")
			ortGolden := filepath.Join(dir, "merge-ort.golden")
			if *update {
				r := newGitRepo(t)
				for name, b := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
					if err := os.WriteFile(filepath.Join(r.dir, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				out, code := r.run(nil, "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
				// merge-file's exit status is the number of conflicts.
				header := fmt.Sprintf("recorded by go test -update from %s: git merge-file -p -L ours -L base -L theirs", gitVersion(r))
				if err := os.WriteFile(fileGolden, lineGolden(header, code, []byte(out)), 0o644); err != nil {
					t.Fatal(err)
				}
				c0 := r.commitTree(map[string]testFile{"f": {mode: "100644", content: base}}, "")
				c1 := r.commitTree(map[string]testFile{"f": {mode: "100644", content: ours}}, c0)
				c2 := r.commitTree(map[string]testFile{"f": {mode: "100644", content: theirs}}, c0)
				r.run(nil, "update-ref", "refs/heads/ours", c1)
				r.run(nil, "update-ref", "refs/heads/theirs", c2)
				o := r.mergeTree("ours", "theirs")
				header = fmt.Sprintf("recorded by go test -update from %s: git merge-tree --write-tree ours theirs, file f", gitVersion(r))
				n := strings.Count(string(o.blobs["f"]), "\n<<<<<<< ours") + btoi(bytes.HasPrefix(o.blobs["f"], []byte("<<<<<<< ours")))
				if err := os.WriteFile(ortGolden, lineGolden(header, n, o.blobs["f"]), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			for _, c := range []struct {
				golden string
				opts   LineOptions
			}{
				{fileGolden, LineOptions{OursLabel: "ours", TheirsLabel: "theirs", BaseLabel: "base", Algorithm: Myers, Level: LevelZealousAlnum}},
				{ortGolden, LineOptions{OursLabel: "ours", TheirsLabel: "theirs"}},
			} {
				want, err := os.ReadFile(c.golden)
				if err != nil {
					t.Fatalf("%v (record it with -update)", err)
				}
				merged, conflicts, err := Merge3(base, ours, theirs, c.opts)
				if err != nil {
					t.Fatalf("Merge3: %v", err)
				}
				got := lineGolden("", len(conflicts), merged)
				if w, g := stripComments(want), stripComments(got); !bytes.Equal(w, g) {
					t.Errorf("%s: result differs\n%s", c.golden, lineDiff(string(w), string(g)))
				}
				checkHunks(t, merged, conflicts, c.opts)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkHunks verifies that each hunk's Merged range starts and ends at its
// markers in the merged text.
func checkHunks(t *testing.T, merged []byte, hunks []Hunk, opts LineOptions) {
	t.Helper()
	lines := splitLines(merged)
	for _, h := range hunks {
		if h.Merged.Start < 0 || h.Merged.Start+h.Merged.Len > len(lines) || h.Merged.Len < 3 {
			t.Errorf("hunk %+v out of range of %d lines", h, len(lines))
			continue
		}
		first, last := string(lines[h.Merged.Start]), string(lines[h.Merged.Start+h.Merged.Len-1])
		size := opts.MarkerSize
		if size <= 0 {
			size = DefaultMarkerSize
		}
		if !strings.HasPrefix(first, strings.Repeat("<", size)) || !strings.HasPrefix(last, strings.Repeat(">", size)) {
			t.Errorf("hunk %+v: merged range is %q .. %q", h, first, last)
		}
		if want := h.Ours.Len + h.Theirs.Len + 3; opts.Style == StyleMerge && h.Merged.Len != want {
			t.Errorf("hunk %+v: %d merged lines, want %d", h, h.Merged.Len, want)
		}
	}
}

func TestMerge3(t *testing.T) {
	labels := LineOptions{OursLabel: "ours", TheirsLabel: "theirs", BaseLabel: "base"}
	with := func(f func(*LineOptions)) LineOptions {
		o := labels
		f(&o)
		return o
	}
	tests := []struct {
		name               string
		base, ours, theirs string
		opts               LineOptions
		want               string
		conflicts          int
		err                error
	}{
		{name: "all empty", opts: labels},
		{name: "empty base both add same", ours: "a\n", theirs: "a\n", want: "a\n", opts: labels},
		{name: "empty base both add different", ours: "a\n", theirs: "b\n", opts: labels,
			want: "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n", conflicts: 1},
		{name: "ours deletes everything", base: "a\nb\n", ours: "", theirs: "a\nb\n", want: "", opts: labels},
		{name: "theirs deletes everything", base: "a\nb\n", ours: "a\nb\n", theirs: "", want: "", opts: labels},
		{name: "delete everything vs edit", base: "a\nb\n", ours: "", theirs: "a\nB\n", opts: labels,
			want: "<<<<<<< ours\n=======\na\nB\n>>>>>>> theirs\n", conflicts: 1},
		{name: "crlf kept as is", base: "a\r\nb\r\nc\r\n", ours: "A\r\nb\r\nc\r\n", theirs: "a\r\nb\r\nC\r\n",
			want: "A\r\nb\r\nC\r\n", opts: labels},
		{name: "crlf markers", base: "a\r\nb\r\n", ours: "a\r\nB1\r\n", theirs: "a\r\nB2\r\n", opts: labels,
			want: "a\r\n<<<<<<< ours\r\nB1\r\n=======\r\nB2\r\n>>>>>>> theirs\r\n", conflicts: 1},
		{name: "crlf line differs from lf line", base: "a\nb\n", ours: "a\r\nb\n", theirs: "a\nb\n", want: "a\r\nb\n", opts: labels},
		{name: "very long lines", base: strings.Repeat("x", 1<<16) + "\n", ours: strings.Repeat("x", 1<<16) + "o\n",
			theirs: strings.Repeat("x", 1<<16) + "\nt\n", opts: labels,
			want: "<<<<<<< ours\n" + strings.Repeat("x", 1<<16) + "o\n=======\n" + strings.Repeat("x", 1<<16) + "\nt\n>>>>>>> theirs\n", conflicts: 1},
		{name: "missing newline inside conflict", base: "a\nb", ours: "a\nB1", theirs: "a\nB2", opts: labels,
			want: "a\n<<<<<<< ours\nB1\n=======\nB2\n>>>>>>> theirs\n", conflicts: 1},
		{name: "no labels", base: "a\n", ours: "b\n", theirs: "c\n",
			want: "<<<<<<<\nb\n=======\nc\n>>>>>>>\n", conflicts: 1},
		{name: "marker size", base: "a\n", ours: "b\n", theirs: "c\n", opts: with(func(o *LineOptions) { o.MarkerSize = 3 }),
			want: "<<< ours\nb\n===\nc\n>>> theirs\n", conflicts: 1},
		{name: "diff3 style", base: "a\nx\nz\n", ours: "a\ny\nz\n", theirs: "a\nw\nz\n", opts: with(func(o *LineOptions) { o.Style = StyleDiff3 }),
			want: "a\n<<<<<<< ours\ny\n||||||| base\nx\n=======\nw\n>>>>>>> theirs\nz\n", conflicts: 1},
		{name: "zdiff3 trims common ends", base: "a\nx\nz\n", ours: "a\nq\ny\nz\n", theirs: "a\nq\nw\nz\n",
			opts: with(func(o *LineOptions) { o.Style = StyleZealousDiff3 }),
			want: "a\nq\n<<<<<<< ours\ny\n||||||| base\nx\n=======\nw\n>>>>>>> theirs\nz\n", conflicts: 1},
		{name: "favor ours", base: "a\nx\nz\n", ours: "a\ny\nz\n", theirs: "a\nw\nz\n", opts: with(func(o *LineOptions) { o.Favor = FavorOurs }),
			want: "a\ny\nz\n"},
		{name: "favor theirs", base: "a\nx\nz\n", ours: "a\ny\nz\n", theirs: "a\nw\nz\n", opts: with(func(o *LineOptions) { o.Favor = FavorTheirs }),
			want: "a\nw\nz\n"},
		{name: "favor union", base: "a\nx\nz\n", ours: "a\ny\nz\n", theirs: "a\nw\nz\n", opts: with(func(o *LineOptions) { o.Favor = FavorUnion }),
			want: "a\ny\nw\nz\n"},
		{name: "minimal level keeps identical overlap as conflict", base: "a\nx\n", ours: "a\ny\n", theirs: "a\ny\n",
			opts: with(func(o *LineOptions) { o.Level = LevelMinimal }),
			want: "a\n<<<<<<< ours\ny\n=======\ny\n>>>>>>> theirs\n", conflicts: 1},
		{name: "binary keeps ours", base: "a\x00\n", ours: "b\x00\n", theirs: "c\x00\n", opts: labels,
			want: "b\x00\n", conflicts: 1, err: ErrBinary},
		{name: "binary favor theirs", base: "a\x00\n", ours: "b\x00\n", theirs: "c\x00\n",
			opts: with(func(o *LineOptions) { o.Favor = FavorTheirs }), want: "c\x00\n"},
		{name: "NUL after 8000 bytes is text", base: strings.Repeat("a\n", 4001) + "\x00\n", ours: "b\n" + strings.Repeat("a\n", 4000) + "\x00\n",
			theirs: strings.Repeat("a\n", 4001) + "\x00\nc\n", opts: labels,
			want: "b\n" + strings.Repeat("a\n", 4000) + "\x00\nc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged, conflicts, err := Merge3([]byte(tt.base), []byte(tt.ours), []byte(tt.theirs), tt.opts)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if string(merged) != tt.want {
				t.Errorf("merged =\n%q\nwant\n%q", merged, tt.want)
			}
			if len(conflicts) != tt.conflicts {
				t.Errorf("%d conflicts, want %d: %+v", len(conflicts), tt.conflicts, conflicts)
			}
			if tt.err == nil {
				checkHunks(t, merged, conflicts, tt.opts)
			}
		})
	}
}

func TestMerge3HunkRanges(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	ours := "1\n2\nA\n4\n5\n6\n7\n8\n9\n10\n"
	theirs := "1\n2\nB\nB\n4\n5\n6\n7\n8\nC\n10\n"
	merged, hunks, err := Merge3([]byte(base), []byte(ours), []byte(theirs), LineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Hunk{{Base: Range{2, 1}, Ours: Range{2, 1}, Theirs: Range{2, 2}, Merged: Range{2, 6}}}
	if fmt.Sprint(hunks) != fmt.Sprint(want) {
		t.Errorf("hunks = %+v, want %+v\n%s", hunks, want, merged)
	}
}

func TestIsBinary(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"text\n", false},
		{"a\x00b", true},
		{strings.Repeat("a", binaryProbe-1) + "\x00", true},
		{strings.Repeat("a", binaryProbe) + "\x00", false},
	} {
		if got := IsBinary([]byte(tt.in)); got != tt.want {
			t.Errorf("IsBinary(%d bytes) = %v, want %v", len(tt.in), got, tt.want)
		}
	}
}

// FuzzMerge3 checks the invariants of a three-way merge on any input: it
// never panics, merging a text with itself gives the text, and a side that
// changed nothing gives the other side's text, for every algorithm, level
// and style.
func FuzzMerge3(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nC\n"), uint8(0))
	f.Add([]byte("a\nb"), []byte("a\nb\n"), []byte(""), uint8(1))
	f.Add([]byte("}\n\n}\n"), []byte("}\n}\n\n}\n"), []byte("\n}\n"), uint8(2))
	f.Add([]byte("x\r\ny\r\n"), []byte("x\r\nz\r\n"), []byte("w\r\ny\r\n"), uint8(3))
	f.Add([]byte("a\x00"), []byte("b"), []byte("c"), uint8(4))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte, sel uint8) {
		opts := LineOptions{
			OursLabel:   "ours",
			TheirsLabel: "theirs",
			Algorithm:   Algorithm(sel & 1),
			Level:       Level(sel >> 1 & 3),
			Style:       Style(sel >> 3 % 3),
		}
		binary := IsBinary(base) || IsBinary(ours) || IsBinary(theirs)
		merged, conflicts, err := Merge3(base, ours, theirs, opts)
		if binary != errors.Is(err, ErrBinary) {
			t.Fatalf("binary = %v but err = %v", binary, err)
		}
		if binary {
			if !bytes.Equal(merged, ours) {
				t.Fatalf("binary merge did not keep ours")
			}
			return
		}
		if len(conflicts) == 0 && bytes.Contains(merged, []byte("<<<<<<< ours\n")) && !bytes.Contains(base, []byte("<<<<<<<")) &&
			!bytes.Contains(ours, []byte("<<<<<<<")) && !bytes.Contains(theirs, []byte("<<<<<<<")) {
			t.Fatalf("markers without conflicts")
		}
		if b := IsBinary(base); !b {
			check := func(what string, b, o, th, want []byte) {
				got, c, err := Merge3(b, o, th, opts)
				if err != nil || len(c) != 0 || !bytes.Equal(got, want) {
					t.Fatalf("%s: got %q (%d conflicts, err %v), want %q", what, got, len(c), err, want)
				}
			}
			check("merge(x, x, x)", base, base, base, base)
			check("merge(base, ours, base)", base, ours, base, ours)
			check("merge(base, base, theirs)", base, base, theirs, theirs)
			if opts.Level != LevelMinimal {
				check("merge(base, ours, ours)", base, ours, ours, ours)
			}
		}
	})
}
