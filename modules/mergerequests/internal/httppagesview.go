package internal

// The Changes tab's two switches: ?w=1 hides changes of whitespace alone
// and ?view=parallel shows the diff side by side. The service's diff has
// no whitespace option, so the page folds a removed run and an added run
// that differ only in spaces and tabs into unchanged lines; line comments
// are made on the whole diff only (their positions must name its lines).

import (
	"strings"

	"github.com/fennec-forge/fennec/modules/repository"
)

// squeezeSpace is a line with runs of spaces and tabs as one space and
// its ends trimmed (git diff -b with --ignore-space-at-eol).
func squeezeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// foldWhitespace is a file's hunks with the whitespace-only changes shown
// as unchanged lines (the new side's text), and whether any change is
// left.
func foldWhitespace(hunks string) (string, bool) {
	if !strings.HasPrefix(hunks, "@@") {
		return hunks, hunks != ""
	}
	lines := strings.SplitAfter(hunks, "\n")
	var b strings.Builder
	changed := false
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "-") {
			if strings.HasPrefix(lines[i], "+") {
				changed = true
			}
			b.WriteString(lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "-") {
			j++
		}
		k := j
		for k < len(lines) && strings.HasPrefix(lines[k], "+") {
			k++
		}
		same := k-j == j-i
		for n := 0; same && n < j-i; n++ {
			same = squeezeSpace(lines[i+n][1:]) == squeezeSpace(lines[j+n][1:])
		}
		if same {
			for _, l := range lines[j:k] {
				b.WriteString(" " + l[1:])
			}
		} else {
			for _, l := range lines[i:k] {
				b.WriteString(l)
			}
			changed = true
		}
		i = k
	}
	return b.String(), changed
}

// withoutWhitespace drops the files whose changes are whitespace alone
// (not those added, deleted or renamed) and folds the rest; hidden counts
// the dropped ones.
func withoutWhitespace(diffs []repository.DiffView) (out []repository.DiffView, hidden int) {
	for _, d := range diffs {
		folded, changed := foldWhitespace(d.Diff)
		if !changed && d.Diff != "" && !d.NewFile && !d.DeletedFile && !d.RenamedFile {
			hidden++
			continue
		}
		d.Diff = folded
		out = append(out, d)
	}
	return out, hidden
}

// parallelRow is a row of the side-by-side view: the old side's line and
// the new side's (either may be missing), or a hunk header.
type parallelRow struct {
	Hunk        *lineView
	Left, Right *lineView
}

// parallelRows pairs a file's lines: unchanged lines on both sides, a
// removed run beside the added run that follows it.
func parallelRows(lines []lineView) []parallelRow {
	var out []parallelRow
	for i := 0; i < len(lines); {
		l := &lines[i]
		switch l.Class {
		case "hunk":
			out = append(out, parallelRow{Hunk: l})
			i++
		case "":
			out = append(out, parallelRow{Left: l, Right: l})
			i++
		default:
			j := i
			for j < len(lines) && lines[j].Class == "del" {
				j++
			}
			k := j
			for k < len(lines) && lines[k].Class == "add" {
				k++
			}
			for n := 0; n < max(j-i, k-j); n++ {
				var row parallelRow
				if i+n < j {
					row.Left = &lines[i+n]
				}
				if j+n < k {
					row.Right = &lines[j+n]
				}
				out = append(out, row)
			}
			i = k
		}
	}
	return out
}
