package internal

import "strings"

// withoutWhitespaceChanges is a file's unified diff (its hunks) with the
// changes of whitespace alone shown as unchanged lines, as the pages'
// "hide whitespace changes" (?w=1) shows them: in each run of removed
// lines followed by as many added lines, a pair that differs only in
// spaces and tabs (their amount, or at the ends) becomes one context
// line, the new side's text. Runs of different lengths stay as they are,
// so the hunks' line counts still hold. A hunk left with no change is
// dropped; changed reports whether any change remains.
func withoutWhitespaceChanges(diff string) (out string, changed bool) {
	if diff == "" || !strings.HasPrefix(diff, "@@") {
		return diff, diff != ""
	}
	lines := strings.SplitAfter(diff, "\n")
	var b, hunk strings.Builder
	hunkChanged := false
	flush := func() {
		if hunkChanged {
			b.WriteString(hunk.String())
			changed = true
		}
		hunk.Reset()
		hunkChanged = false
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@"):
			flush()
			hunk.WriteString(l)
			i++
		case strings.HasPrefix(l, "-"):
			j := i
			for j < len(lines) && strings.HasPrefix(lines[j], "-") {
				j++
			}
			k := j
			for k < len(lines) && strings.HasPrefix(lines[k], "+") {
				k++
			}
			removed, added := lines[i:j], lines[j:k]
			if len(removed) == len(added) && sameIgnoringSpace(removed, added) {
				for _, a := range added {
					hunk.WriteString(" " + a[1:])
				}
			} else {
				for _, x := range lines[i:k] {
					hunk.WriteString(x)
				}
				hunkChanged = true
			}
			i = k
		default:
			if strings.HasPrefix(l, "+") {
				hunkChanged = true
			}
			hunk.WriteString(l)
			i++
		}
	}
	flush()
	return b.String(), changed
}

// sameIgnoringSpace says whether each removed line equals its added line
// once runs of spaces and tabs are one space and the ends trimmed (git
// diff -b with --ignore-space-at-eol).
func sameIgnoringSpace(removed, added []string) bool {
	for n := range removed {
		if squeeze(removed[n][1:]) != squeeze(added[n][1:]) {
			return false
		}
	}
	return true
}

func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }
