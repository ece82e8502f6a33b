package merge

// This file owns the line-level three-way merge: diff the base against each
// side, walk the two edit scripts together, take changes made on one side
// only, and mark overlapping changes as conflicts, narrowed and joined the
// way git's xdl_merge does.

import (
	"bytes"
	"slices"
)

// Level says how hard Merge3 works to shrink conflicts.
type Level int

const (
	// LevelZealous is the default and what merge-ort uses: changes that
	// overlap are compared line by line, lines both sides agree on are
	// moved out of the conflict, and conflicts separated by three lines
	// or fewer are joined into one.
	LevelZealous Level = iota
	// LevelZealousAlnum additionally joins conflicts separated only by
	// lines without letters or digits; `git merge-file` uses it.
	LevelZealousAlnum
	// LevelEager marks overlapping changes as a conflict unless they are
	// identical.
	LevelEager
	// LevelMinimal marks all overlapping changes as conflicts.
	LevelMinimal
)

// Style is how a conflict is written into the merged text.
type Style int

const (
	// StyleMerge writes ours and theirs: <<<<<<< ours ======= theirs >>>>>>>.
	StyleMerge Style = iota
	// StyleDiff3 also writes the base between ||||||| and =======. It
	// implies LevelEager, as in git.
	StyleDiff3
	// StyleZealousDiff3 is StyleDiff3 with the lines both sides agree on
	// at the start and end of a conflict moved out of it (git's zdiff3).
	StyleZealousDiff3
)

// Favor resolves conflicting hunks instead of writing markers.
type Favor int

const (
	// FavorNone leaves conflicts in the result.
	FavorNone Favor = iota
	// FavorOurs takes our side of each conflicting hunk (-Xours).
	FavorOurs
	// FavorTheirs takes their side of each conflicting hunk (-Xtheirs).
	FavorTheirs
	// FavorUnion takes our side followed by theirs (merge=union).
	FavorUnion
)

// DefaultMarkerSize is the length of git's conflict markers.
const DefaultMarkerSize = 7

// binaryProbe is how much of a file git looks at for a NUL byte.
const binaryProbe = 8000

// maxMergeSize is git's MAX_XDIFF_SIZE: larger files are merged as binary.
const maxMergeSize = 1024 * 1024 * 1023

// LineOptions configures Merge3. The zero value merges as `git merge` does,
// with unlabelled markers.
type LineOptions struct {
	// OursLabel, TheirsLabel and BaseLabel follow the conflict markers
	// (<<<<<<< OursLabel, >>>>>>> TheirsLabel, ||||||| BaseLabel).
	OursLabel, TheirsLabel, BaseLabel string
	Algorithm                         Algorithm
	Level                             Level
	Style                             Style
	Favor                             Favor
	// MarkerSize is the marker length; 0 means DefaultMarkerSize.
	MarkerSize int
}

// Range is a run of lines: Start is 0-based, Len may be 0 (a position).
type Range struct {
	Start, Len int
}

// Hunk is one conflict Merge3 left in its result.
type Hunk struct {
	// Ours and Theirs are the conflicting lines of each side.
	Ours, Theirs Range
	// Base is the base region the two sides changed differently. Zealous
	// merging may split one such region into several hunks; each keeps
	// the whole region.
	Base Range
	// Merged is where the hunk is in the merged text, markers included.
	Merged Range
}

// IsBinary reports whether git would treat content as binary: a NUL byte
// in the first 8000 bytes.
func IsBinary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), binaryProbe)], 0) >= 0
}

// Merge3 merges the changes from base to ours and from base to theirs. Lines
// are compared byte for byte including their end of line, so a CRLF line
// differs from the same line ending in LF, and a last line without a newline
// differs from the same line with one.
//
// It returns the merged content and the conflicts left in it, if any. When
// any input is binary it returns ours, one hunk covering all of it, and
// ErrBinary.
func Merge3(base, ours, theirs []byte, opts LineOptions) (merged []byte, conflicts []Hunk, err error) {
	if tooBigOrBinary(base) || tooBigOrBinary(ours) || tooBigOrBinary(theirs) {
		merged = slices.Clone(ours)
		switch opts.Favor {
		case FavorOurs:
			return merged, nil, nil
		case FavorTheirs:
			return slices.Clone(theirs), nil, nil
		}
		n := len(splitLines(ours))
		h := Hunk{
			Base:   Range{0, len(splitLines(base))},
			Ours:   Range{0, n},
			Theirs: Range{0, len(splitLines(theirs))},
			Merged: Range{0, n},
		}
		return merged, []Hunk{h}, ErrBinary
	}
	m := newMerger(base, ours, theirs, opts)
	merged, conflicts = m.run()
	return merged, conflicts, nil
}

func tooBigOrBinary(b []byte) bool { return len(b) > maxMergeSize || IsBinary(b) }

// splitLines cuts content into lines, each keeping its "\n"; the last line
// may lack one.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i+1])
		b = b[i+1:]
	}
	return lines
}

// merger holds one Merge3 call: the three texts as lines and as line
// classes (equal lines share a class), and the options.
type merger struct {
	opts                LineOptions
	raw                 [3][]byte
	lines               [3][][]byte
	ids                 [3][]int
	level               Level
	markerSize          int
	oursMark, theirMark string
}

func newMerger(base, ours, theirs []byte, opts LineOptions) *merger {
	m := &merger{opts: opts, raw: [3][]byte{base, ours, theirs}, level: opts.Level}
	classes := make(map[string]int)
	for i, b := range m.raw {
		m.lines[i] = splitLines(b)
		m.ids[i] = make([]int, len(m.lines[i]))
		for j, l := range m.lines[i] {
			id, ok := classes[string(l)]
			if !ok {
				id = len(classes)
				classes[string(l)] = id
			}
			m.ids[i][j] = id
		}
	}
	if opts.Style != StyleMerge && (m.level == LevelZealous || m.level == LevelZealousAlnum) {
		// Showing the base next to a refined conflict would be
		// misleading, so diff3 styles stop at eager merging.
		m.level = LevelEager
	}
	m.markerSize = opts.MarkerSize
	if m.markerSize <= 0 {
		m.markerSize = DefaultMarkerSize
	}
	return m
}

// Hunk kinds of the merge walk.
const (
	takeConflict  = 0
	takeOurs      = 1
	takeTheirs    = 2
	takeBoth      = 3 // FavorUnion
	takeIdentical = 4 // a conflict whose sides turned out equal
)

// chunk is one changed region of the merge walk. i0/n0 are base lines,
// i1/n1 ours, i2/n2 theirs; rb/rn is the base region reported in a Hunk.
type chunk struct {
	take           int
	i0, n0, i1, n1 int
	i2, n2, rb, rn int
}

func (m *merger) run() ([]byte, []Hunk) {
	base, ours, theirs := m.ids[0], m.ids[1], m.ids[2]
	alg := m.opts.Algorithm
	e1 := diffIDs(base, ours, alg)
	e2 := diffIDs(base, theirs, alg)
	// When one side did not change anything the other side is the
	// result, byte for byte.
	if len(e1) == 0 {
		return slices.Clone(m.raw[2]), nil
	}
	if len(e2) == 0 {
		return slices.Clone(m.raw[1]), nil
	}
	chunks := m.walk(e1, e2)
	switch {
	case m.opts.Style == StyleZealousDiff3:
		m.trimConflicts(chunks)
	case m.level == LevelZealous || m.level == LevelZealousAlnum:
		chunks = m.refine(chunks)
		chunks = m.joinConflicts(chunks)
	}
	return m.write(chunks)
}

// walk goes through both edit scripts in base order. A change on one side
// that ends before the next change on the other side begins is taken;
// changes that overlap or touch are one conflict, unless both sides made
// the very same change.
func (m *merger) walk(e1, e2 []edit) []chunk {
	var out []chunk
	add := func(take, i0, n0, i1, n1, i2, n2 int) {
		if k := len(out); k > 0 {
			c := &out[k-1]
			if i1 <= c.i1+c.n1 || i2 <= c.i2+c.n2 {
				if take != c.take {
					c.take = takeConflict
				}
				c.n0 = i0 + n0 - c.i0
				c.n1 = i1 + n1 - c.i1
				c.n2 = i2 + n2 - c.i2
				c.rn = c.n0
				return
			}
		}
		out = append(out, chunk{take: take, i0: i0, n0: n0, i1: i1, n1: n1, i2: i2, n2: n2, rb: i0, rn: n0})
	}
	nbase := len(m.ids[0])
	for len(e1) > 0 && len(e2) > 0 {
		x1, x2 := e1[0], e2[0]
		if x1.a+x1.na < x2.a {
			add(takeOurs, x1.a, x1.na, x1.b, x1.nb, x2.b-x2.a+x1.a, x1.na)
			e1 = e1[1:]
			continue
		}
		if x2.a+x2.na < x1.a {
			add(takeTheirs, x2.a, x2.na, x1.b-x1.a+x2.a, x2.na, x2.b, x2.nb)
			e2 = e2[1:]
			continue
		}
		if m.level == LevelMinimal || x1.a != x2.a || x1.na != x2.na || x1.nb != x2.nb ||
			!m.sameLines(x1.b, x2.b, x1.nb) {
			off := x1.a - x2.a
			ffo := off + x1.na - x2.na
			i0, i1, i2 := x1.a, x1.b, x2.b
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			n0 := x1.a + x1.na - i0
			n1 := x1.b + x1.nb - i1
			n2 := x2.b + x2.nb - i2
			if ffo < 0 {
				n0 -= ffo
				n1 -= ffo
			} else {
				n2 += ffo
			}
			add(takeConflict, i0, n0, i1, n1, i2, n2)
		}
		end1, end2 := x1.a+x1.na, x2.a+x2.na
		if end1 >= end2 {
			e2 = e2[1:]
		}
		if end2 >= end1 {
			e1 = e1[1:]
		}
	}
	for _, x := range e1 {
		add(takeOurs, x.a, x.na, x.b, x.nb, x.a+len(m.ids[2])-nbase, x.na)
	}
	for _, x := range e2 {
		add(takeTheirs, x.a, x.na, x.a+len(m.ids[1])-nbase, x.na, x.b, x.nb)
	}
	return out
}

// sameLines compares n lines of ours from i1 with n lines of theirs from i2.
func (m *merger) sameLines(i1, i2, n int) bool {
	return slices.Equal(m.ids[1][i1:i1+n], m.ids[2][i2:i2+n])
}

// refine diffs the two sides of each conflict against each other and keeps
// only the lines where they differ as conflicts.
func (m *merger) refine(chunks []chunk) []chunk {
	out := make([]chunk, 0, len(chunks))
	for _, c := range chunks {
		if c.take != takeConflict || c.n1 == 0 || c.n2 == 0 {
			out = append(out, c)
			continue
		}
		script := diffIDs(m.ids[1][c.i1:c.i1+c.n1], m.ids[2][c.i2:c.i2+c.n2], m.opts.Algorithm)
		if len(script) == 0 {
			c.take = takeIdentical
			out = append(out, c)
			continue
		}
		for k, e := range script {
			p := c
			if k > 0 {
				// Pieces split off carry no base region of
				// their own; like git, keep the first one's.
				p.take = takeConflict
			}
			p.i1, p.n1 = c.i1+e.a, e.na
			p.i2, p.n2 = c.i2+e.b, e.nb
			out = append(out, p)
		}
	}
	return out
}

// joinConflicts joins neighbouring conflicts when at most three lines (or,
// at LevelZealousAlnum, only lines without letters or digits) separate them:
// one conflict reads more easily than two around a few common lines.
func (m *merger) joinConflicts(chunks []chunk) []chunk {
	if len(chunks) == 0 {
		return chunks
	}
	out := []chunk{chunks[0]}
	for _, next := range chunks[1:] {
		c := &out[len(out)-1]
		begin, end := c.i1+c.n1, next.i1
		if c.take != takeConflict || next.take != takeConflict ||
			(end-begin > 3 && (m.level != LevelZealousAlnum || m.hasAlnum(begin, end))) {
			out = append(out, next)
			continue
		}
		c.n1 = next.i1 + next.n1 - c.i1
		c.n2 = next.i2 + next.n2 - c.i2
		if e := next.rb + next.rn; e > c.rb+c.rn {
			c.rn = e - c.rb
		}
	}
	return out
}

func (m *merger) hasAlnum(from, to int) bool {
	for _, l := range m.lines[1][from:to] {
		for _, ch := range l {
			if ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' {
				return true
			}
		}
	}
	return false
}

// trimConflicts moves lines both sides agree on at the start and end of a
// conflict out of it (zdiff3).
func (m *merger) trimConflicts(chunks []chunk) {
	for k := range chunks {
		c := &chunks[k]
		if c.take != takeConflict {
			continue
		}
		for c.n1 > 0 && c.n2 > 0 && m.ids[1][c.i1] == m.ids[2][c.i2] {
			c.i1++
			c.i2++
			c.n1--
			c.n2--
		}
		for c.n1 > 0 && c.n2 > 0 && m.ids[1][c.i1+c.n1-1] == m.ids[2][c.i2+c.n2-1] {
			c.n1--
			c.n2--
		}
	}
}

// output accumulates the merged text and counts its lines.
type output struct {
	buf   []byte
	lines int
}

func (o *output) add(lines [][]byte, crlf, terminate bool) {
	for _, l := range lines {
		o.buf = append(o.buf, l...)
	}
	o.lines += len(lines)
	if terminate && len(lines) > 0 {
		if last := lines[len(lines)-1]; len(last) == 0 || last[len(last)-1] != '\n' {
			if crlf {
				o.buf = append(o.buf, '\r')
			}
			o.buf = append(o.buf, '\n')
		}
	}
}

func (o *output) marker(ch byte, size int, label string, crlf bool) {
	o.buf = append(o.buf, bytes.Repeat([]byte{ch}, size)...)
	if label != "" {
		o.buf = append(o.buf, ' ')
		o.buf = append(o.buf, label...)
	}
	if crlf {
		o.buf = append(o.buf, '\r')
	}
	o.buf = append(o.buf, '\n')
	o.lines++
}

// write produces the merged text. Lines outside the chunks come from ours.
// A conflict side whose last line lacks a newline gets one, so the marker
// after it starts a line.
func (m *merger) write(chunks []chunk) ([]byte, []Hunk) {
	var (
		o         output
		conflicts []Hunk
		i         int
	)
	ours, theirs := m.lines[1], m.lines[2]
	for _, c := range chunks {
		take := c.take
		if take == takeConflict && m.opts.Favor != FavorNone {
			take = int(m.opts.Favor)
		}
		switch take {
		case takeConflict:
			crlf := m.needsCR(c)
			o.add(ours[i:c.i1], false, false)
			start := o.lines
			o.marker('<', m.markerSize, m.opts.OursLabel, crlf)
			o.add(ours[c.i1:c.i1+c.n1], crlf, true)
			if m.opts.Style != StyleMerge {
				o.marker('|', m.markerSize, m.opts.BaseLabel, crlf)
				o.add(m.lines[0][c.i0:c.i0+c.n0], crlf, true)
			}
			o.marker('=', m.markerSize, "", crlf)
			o.add(theirs[c.i2:c.i2+c.n2], crlf, true)
			o.marker('>', m.markerSize, m.opts.TheirsLabel, crlf)
			conflicts = append(conflicts, Hunk{
				Base:   Range{c.rb, c.rn},
				Ours:   Range{c.i1, c.n1},
				Theirs: Range{c.i2, c.n2},
				Merged: Range{start, o.lines - start},
			})
		case takeOurs, takeTheirs, takeBoth:
			o.add(ours[i:c.i1], false, false)
			if take&takeOurs != 0 {
				o.add(ours[c.i1:c.i1+c.n1], m.needsCR(c), take&takeTheirs != 0)
			}
			if take&takeTheirs != 0 {
				o.add(theirs[c.i2:c.i2+c.n2], false, false)
			}
		default:
			continue
		}
		i = c.i1 + c.n1
	}
	o.add(ours[i:], false, false)
	if o.buf == nil {
		o.buf = []byte{}
	}
	return o.buf, conflicts
}

// needsCR says whether the markers of a conflict end in CRLF: when the
// lines around it in ours, theirs and the base all do.
func (m *merger) needsCR(c chunk) bool {
	crlf := eolIsCRLF(m.lines[1], max(c.i1-1, 0))
	if crlf != 0 {
		crlf = eolIsCRLF(m.lines[2], max(c.i2-1, 0))
	}
	if crlf != 0 {
		crlf = eolIsCRLF(m.lines[0], 0)
	}
	return crlf > 0
}

// eolIsCRLF returns 1 if line i ends in CRLF (for a last line without a
// newline, the line before it), 0 if it ends in LF, and -1 if it cannot
// tell.
func eolIsCRLF(lines [][]byte, i int) int {
	endsCRLF := func(l []byte) int {
		if len(l) > 1 && l[len(l)-2] == '\r' {
			return 1
		}
		return 0
	}
	if i < len(lines)-1 {
		return endsCRLF(lines[i])
	}
	if len(lines) == 0 {
		return -1
	}
	if l := lines[i]; len(l) > 0 && l[len(l)-1] == '\n' {
		return endsCRLF(l)
	}
	if i == 0 {
		return -1
	}
	return endsCRLF(lines[i-1])
}
