package merge

// This file owns the line diff under Merge3. It is written to make the same
// choices as git's xdiff (Myers with xdiff's preprocessing and cost
// heuristics, histogram diff, and the sliding of change groups), because a
// three-way merge reports conflicts where the two diffs overlap: a diff that
// is merely minimal but aligns lines differently would put conflict markers
// elsewhere than git does.

// Algorithm selects the line diff Merge3 runs between the base and each side.
type Algorithm int

const (
	// Histogram is the diff merge-ort uses for `git merge`, `git
	// cherry-pick` and `git merge-tree`; it is the default.
	Histogram Algorithm = iota
	// Myers is xdiff's classic diff, which `git merge-file` uses.
	Myers
)

// String returns the name git uses for the algorithm.
func (a Algorithm) String() string {
	if a == Myers {
		return "myers"
	}
	return "histogram"
}

// edit is one hunk of an edit script: lines [a, a+na) of the old sequence are
// replaced by lines [b, b+nb) of the new one.
type edit struct {
	a, b, na, nb int
}

// marks records which lines of a sequence a diff found changed. marks[i+1]
// is line i, so that marks[0] and marks[n+1] are always-false sentinels and
// scans may step one past either end.
type marks []bool

func newMarks(n int) marks               { return make(marks, n+2) }
func (m marks) at(i int) bool            { return i >= -1 && i+1 < len(m) && m[i+1] }
func (m marks) set(i int, v bool)        { m[i+1] = v }
func (m marks) lines() int               { return len(m) - 2 }
func (m marks) copyFrom(o marks, at int) { copy(m[at+1:], o[1:len(o)-1]) }

// diffIDs diffs two sequences of line classes (equal lines have equal ids)
// and returns the edit script in ascending order.
func diffIDs(a, b []int, alg Algorithm) []edit { return diffIDsIndent(a, b, alg, nil, nil) }

// diffIDsIndent is diffIDs with the indent heuristic when the lines'
// indents are given (see slideGroups).
func diffIDsIndent(a, b []int, alg Algorithm, indentsA, indentsB []int) []edit {
	ma, mb := newMarks(len(a)), newMarks(len(b))
	switch alg {
	case Myers:
		myers(a, b, ma, mb)
	default:
		h := histogram{a: a, b: b, ma: ma, mb: mb}
		h.diff(1, len(a), 1, len(b))
	}
	slideGroups(a, ma, mb, indentsA)
	slideGroups(b, mb, ma, indentsB)
	return editScript(ma, mb)
}

// editScript turns the change marks of both sequences into hunks. Unchanged
// lines pair up one to one, so walking both sequences backwards in step finds
// every group.
func editScript(ma, mb marks) []edit {
	var rev []edit
	for i1, i2 := ma.lines(), mb.lines(); i1 >= 0 || i2 >= 0; i1, i2 = i1-1, i2-1 {
		if !ma.at(i1-1) && !mb.at(i2-1) {
			continue
		}
		l1, l2 := i1, i2
		for ma.at(i1 - 1) {
			i1--
		}
		for mb.at(i2 - 1) {
			i2--
		}
		rev = append(rev, edit{a: i1, b: i2, na: l1 - i1, nb: l2 - i2})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// group is a run of changed lines [start, end) of one sequence; an empty group
// (start == end) sits just above line start.
type group struct{ start, end int }

func firstGroup(m marks) group {
	g := group{}
	for m.at(g.end) {
		g.end++
	}
	return g
}

func nextGroup(m marks, g *group) bool {
	if g.end == m.lines() {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for m.at(g.end) {
		g.end++
	}
	return true
}

func prevGroup(m marks, g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for m.at(g.start - 1) {
		g.start--
	}
	return true
}

// slideDown moves g one line toward the end of the sequence when its first
// line equals the line after it, absorbing any group it then touches.
func slideDown(ids []int, m marks, g *group) bool {
	if g.end >= len(ids) || ids[g.start] != ids[g.end] {
		return false
	}
	m.set(g.start, false)
	g.start++
	m.set(g.end, true)
	g.end++
	for m.at(g.end) {
		g.end++
	}
	return true
}

// slideUp is slideDown's mirror image.
func slideUp(ids []int, m marks, g *group) bool {
	if g.start == 0 || ids[g.start-1] != ids[g.end-1] {
		return false
	}
	g.start--
	m.set(g.start, true)
	g.end--
	m.set(g.end, false)
	for m.at(g.start - 1) {
		g.start--
	}
	return true
}

// slideGroups shifts every group of changed lines in one sequence as xdiff's
// xdl_change_compact does: slide it up as far as it goes, then down as far as it goes, merging
// groups it runs into, and finally back up to line up with a change in the
// other sequence if one was passed on the way. The other sequence's groups
// are walked in step; they correspond one to one with this one's.
//
// indents, when set, are the lines' indents (indentOf) and turn on xdiff's
// indent heuristic for groups that can slide and line up with nothing in
// the other sequence: the group is put where it best splits the text
// between blocks (lines.go). Merges run without it, as git's do; blame
// runs with it, as git blame does.
func slideGroups(ids []int, m, other marks, indents []int) {
	g, o := firstGroup(m), firstGroup(other)
	for {
		if g.end != g.start {
			earliestEnd, endMatchingOther := 0, -1
			for {
				size := g.end - g.start
				endMatchingOther = -1
				for slideUp(ids, m, &g) {
					prevGroup(other, &o)
				}
				earliestEnd = g.end
				if o.end > o.start {
					endMatchingOther = g.end
				}
				for slideDown(ids, m, &g) {
					nextGroup(other, &o)
					if o.end > o.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
			case endMatchingOther != -1:
				for o.end == o.start {
					slideUp(ids, m, &g)
					prevGroup(other, &o)
				}
			case indents != nil:
				best := bestIndentShift(indents, g, earliestEnd)
				for g.end > best {
					slideUp(ids, m, &g)
					prevGroup(other, &o)
				}
			}
		}
		if !nextGroup(m, &g) {
			break
		}
		nextGroup(other, &o)
	}
}

// Tuning constants of xdiff's Myers implementation; changing them changes
// which of several equally short diffs is chosen.
const (
	myersMaxCostMin = 256  // lower bound of the cost at which the search gives up on minimality
	myersHeurMin    = 256  // cost from which good snakes are sampled
	myersSnakeCnt   = 20   // length of a "good" snake
	myersKHeur      = 4    // how far ahead of the cost a sampled diagonal must be
	discardRun      = 4    // weight of multi-match lines when discarding runs
	maxEqLimit      = 1024 // cap on the multi-match threshold
	simscanWindow   = 100  // how far discard scans look around a line
	maxLine         = int(^uint(0) >> 1)
)

// bogosqrt is xdiff's rough integer square root.
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// myers diffs a and b with xdiff's classic algorithm: the common head and
// tail are skipped, lines with no counterpart in the other sequence (and
// runs of lines with very many) are marked changed up front, and the rest
// goes through the divide-and-conquer middle-snake search.
func myers(a, b []int, ma, mb marks) {
	n1, n2 := len(a), len(b)
	head := 0
	for head < n1 && head < n2 && a[head] == b[head] {
		head++
	}
	tail := 0
	for lim := min(n1, n2) - head; tail < lim && a[n1-1-tail] == b[n2-1-tail]; tail++ {
	}

	count1 := make(map[int]int, n1)
	count2 := make(map[int]int, n2)
	for _, id := range a {
		count1[id]++
	}
	for _, id := range b {
		count2[id]++
	}
	ra := keepLines(a, head, n1-tail-1, count2, ma)
	rb := keepLines(b, head, n2-tail-1, count1, mb)

	s := myersSearch{
		a:    make([]int, len(ra)),
		b:    make([]int, len(rb)),
		ra:   ra,
		rb:   rb,
		ma:   ma,
		mb:   mb,
		koff: len(rb) + 1,
	}
	for i, l := range ra {
		s.a[i] = a[l]
	}
	for i, l := range rb {
		s.b[i] = b[l]
	}
	ndiags := len(ra) + len(rb) + 3
	s.kf = make([]int, ndiags)
	s.kb = make([]int, ndiags)
	s.maxCost = max(bogosqrt(ndiags), myersMaxCostMin)
	s.compare(0, len(s.a), 0, len(s.b), false)
}

// keepLines decides which lines in [start, end] take part in the Myers
// search and marks the others changed: lines that never occur in the other
// sequence, and lines that occur very often there when they sit in a run
// dominated by such lines. It returns the indexes of the kept lines.
func keepLines(ids []int, start, end int, otherCount map[int]int, m marks) []int {
	if end < start {
		return nil
	}
	limit := min(bogosqrt(len(ids)), maxEqLimit)
	kind := make([]byte, len(ids)+1) // 0: no match, 1: some, 2: many
	for i := start; i <= end; i++ {
		switch n := otherCount[ids[i]]; {
		case n == 0:
			kind[i] = 0
		case n >= limit:
			kind[i] = 2
		default:
			kind[i] = 1
		}
	}
	kept := make([]int, 0, end-start+1)
	for i := start; i <= end; i++ {
		if kind[i] == 1 || (kind[i] == 2 && !discardable(kind, i, start, end)) {
			kept = append(kept, i)
		} else {
			m.set(i, true)
		}
	}
	return kept
}

// discardable reports whether the multi-match line i sits inside a run of
// unmatched and multi-match lines in which the unmatched ones weigh enough
// that the line is better treated as changed.
func discardable(kind []byte, i, start, end int) bool {
	start = max(start, i-simscanWindow)
	end = min(end, i+simscanWindow)
	before, beforeMulti := 0, 1
	for r := 1; i-r >= start; r++ {
		if kind[i-r] == 0 {
			before++
		} else if kind[i-r] == 2 {
			beforeMulti++
		} else {
			break
		}
	}
	if before == 0 {
		return false
	}
	after, afterMulti := 0, 1
	for r := 1; i+r <= end; r++ {
		if kind[i+r] == 0 {
			after++
		} else if kind[i+r] == 2 {
			afterMulti++
		} else {
			break
		}
	}
	if after == 0 {
		return false
	}
	multi := beforeMulti + afterMulti
	return multi*discardRun < multi+before+after
}

// myersSearch is the state of one Myers run over the kept lines. kf and kb
// are the furthest-reaching forward and backward paths per diagonal,
// indexed by diagonal + koff.
type myersSearch struct {
	a, b    []int
	ra, rb  []int // kept line -> line of the full sequence
	ma, mb  marks
	kf, kb  []int
	koff    int
	maxCost int
}

func (s *myersSearch) compare(off1, lim1, off2, lim2 int, needMin bool) {
	for off1 < lim1 && off2 < lim2 && s.a[off1] == s.b[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && s.a[lim1-1] == s.b[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			s.mb.set(s.rb[off2], true)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			s.ma.set(s.ra[off1], true)
		}
	default:
		x, y, minLo, minHi := s.split(off1, lim1, off2, lim2, needMin)
		s.compare(off1, x, off2, y, minLo)
		s.compare(x, lim1, y, lim2, minHi)
	}
}

// split finds where to cut the box (off1, off2)-(lim1, lim2): on the middle
// snake where the forward and backward searches meet or, when the search
// grows too expensive and a minimal diff is not required, at a promising
// point found by xdiff's heuristics. It also says whether each half must
// still be diffed minimally.
func (s *myersSearch) split(off1, lim1, off2, lim2 int, needMin bool) (int, int, bool, bool) {
	a, b, kf, kb, ko := s.a, s.b, s.kf, s.kb, s.koff
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	kf[fmid+ko] = off1
	kb[bmid+ko] = lim1

	for ec := 1; ; ec++ {
		gotSnake := false

		// Widen the forward diagonal range by one on each side, or
		// narrow it where it would leave the box.
		if fmin > dmin {
			fmin--
			kf[fmin-1+ko] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			kf[fmax+1+ko] = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var x int
			if kf[d-1+ko] >= kf[d+1+ko] {
				x = kf[d-1+ko] + 1
			} else {
				x = kf[d+1+ko]
			}
			start := x
			y := x - d
			for x < lim1 && y < lim2 && a[x] == b[y] {
				x++
				y++
			}
			if x-start > myersSnakeCnt {
				gotSnake = true
			}
			kf[d+ko] = x
			if odd && bmin <= d && d <= bmax && kb[d+ko] <= x {
				return x, y, true, true
			}
		}

		if bmin > dmin {
			bmin--
			kb[bmin-1+ko] = maxLine
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			kb[bmax+1+ko] = maxLine
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var x int
			if kb[d-1+ko] < kb[d+1+ko] {
				x = kb[d-1+ko]
			} else {
				x = kb[d+1+ko] - 1
			}
			start := x
			y := x - d
			for x > off1 && y > off2 && a[x-1] == b[y-1] {
				x--
				y--
			}
			if start-x > myersSnakeCnt {
				gotSnake = true
			}
			kb[d+ko] = x
			if !odd && fmin <= d && d <= fmax && x <= kf[d+ko] {
				return x, y, true, true
			}
		}

		if needMin {
			continue
		}

		// Past the heuristic threshold, accept a diagonal that ends in
		// a long snake and is well ahead of the cost spent.
		if gotSnake && ec > myersHeurMin {
			best, bx, by := 0, 0, 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				x := kf[d+ko]
				y := x - d
				v := (x - off1) + (y - off2) - dd
				if v > myersKHeur*ec && v > best &&
					off1+myersSnakeCnt <= x && x < lim1 &&
					off2+myersSnakeCnt <= y && y < lim2 {
					for k := 1; a[x-k] == b[y-k]; k++ {
						if k == myersSnakeCnt {
							best, bx, by = v, x, y
							break
						}
					}
				}
			}
			if best > 0 {
				return bx, by, true, false
			}
			best = 0
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				x := kb[d+ko]
				y := x - d
				v := (lim1 - x) + (lim2 - y) - dd
				if v > myersKHeur*ec && v > best &&
					off1 < x && x <= lim1-myersSnakeCnt &&
					off2 < y && y <= lim2-myersSnakeCnt {
					for k := 0; a[x+k] == b[y+k]; k++ {
						if k == myersSnakeCnt-1 {
							best, bx, by = v, x, y
							break
						}
					}
				}
			}
			if best > 0 {
				return bx, by, false, true
			}
		}

		// Too expensive: cut at the furthest-reaching path found so far.
		if ec >= s.maxCost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				x := min(kf[d+ko], lim1)
				y := x - d
				if lim2 < y {
					x, y = lim2+d, lim2
				}
				if fbest < x+y {
					fbest, fbest1 = x+y, x
				}
			}
			bbest, bbest1 := maxLine, maxLine
			for d := bmax; d >= bmin; d -= 2 {
				x := max(off1, kb[d+ko])
				y := x - d
				if y < off2 {
					x, y = off2+d, off2
				}
				if x+y < bbest {
					bbest, bbest1 = x+y, x
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}

// histogram diffs with the histogram algorithm: find the longest common run
// anchored on the rarest line shared by both ranges, recurse on both sides
// of it, and fall back to Myers when every shared line is too common. Line
// numbers are 1-based, as in the algorithm's description.
type histogram struct {
	a, b   []int
	ma, mb marks
}

// histMaxChain is how often a line may occur before histogram diff no
// longer anchors on it.
const histMaxChain = 64

type region struct{ begin1, end1, begin2, end2 int }

func (h *histogram) diff(line1, count1, line2, count2 int) {
	for {
		if count1 <= 0 && count2 <= 0 {
			return
		}
		if count1 == 0 {
			for ; count2 > 0; count2-- {
				h.mb.set(line2-1, true)
				line2++
			}
			return
		}
		if count2 == 0 {
			for ; count1 > 0; count1-- {
				h.ma.set(line1-1, true)
				line1++
			}
			return
		}
		lcs, fallback := h.lcs(line1, count1, line2, count2)
		if fallback {
			h.classic(line1, count1, line2, count2)
			return
		}
		if lcs.begin1 == 0 && lcs.begin2 == 0 {
			for ; count1 > 0; count1-- {
				h.ma.set(line1-1, true)
				line1++
			}
			for ; count2 > 0; count2-- {
				h.mb.set(line2-1, true)
				line2++
			}
			return
		}
		h.diff(line1, lcs.begin1-line1, line2, lcs.begin2-line2)
		end1, end2 := line1+count1-1, line2+count2-1
		line1, count1 = lcs.end1+1, end1-lcs.end1
		line2, count2 = lcs.end2+1, end2-lcs.end2
	}
}

// classic diffs a range with Myers, as a separate diff of the two ranges.
func (h *histogram) classic(line1, count1, line2, count2 int) {
	sa := h.a[line1-1 : line1-1+count1]
	sb := h.b[line2-1 : line2-1+count2]
	ma, mb := newMarks(len(sa)), newMarks(len(sb))
	myers(sa, sb, ma, mb)
	h.ma.copyFrom(ma, line1-1)
	h.mb.copyFrom(mb, line2-1)
}

// histRecord is the occurrence list of one line class in the first range:
// first is its first line, count how often it occurs.
type histRecord struct{ first, count int }

// lcs finds the region to anchor on. It reports fallback when the ranges
// share lines but each occurs more than histMaxChain times.
func (h *histogram) lcs(line1, count1, line2, count2 int) (region, bool) {
	end1, end2 := line1+count1-1, line2+count2-1
	recs := make(map[int]*histRecord, count1)
	next := make([]int, count1)            // next occurrence of the same class, 0 for none
	lineRec := make([]*histRecord, count1) // class record of each line
	for p := end1; p >= line1; p-- {
		id := h.a[p-1]
		if r, ok := recs[id]; ok {
			next[p-line1] = r.first
			r.first = p
			r.count++
			lineRec[p-line1] = r
			continue
		}
		r := &histRecord{first: p, count: 1}
		recs[id] = r
		lineRec[p-line1] = r
	}

	var lcs region
	best := histMaxChain + 1
	hasCommon := false
	for bp := line2; bp <= end2; {
		bNext := bp + 1
		r, ok := recs[h.b[bp-1]]
		switch {
		case !ok:
		case r.count > best:
			hasCommon = true
		default:
			hasCommon = true
			as := r.first
			for {
				np := next[as-line1]
				bs, ae, be, rc := bp, as, bp, r.count
				for line1 < as && line2 < bs && h.a[as-2] == h.b[bs-2] {
					as--
					bs--
					if rc > 1 {
						rc = min(rc, lineRec[as-line1].count)
					}
				}
				for ae < end1 && be < end2 && h.a[ae] == h.b[be] {
					ae++
					be++
					if rc > 1 {
						rc = min(rc, lineRec[ae-line1].count)
					}
				}
				if bNext <= be {
					bNext = be + 1
				}
				if lcs.end1-lcs.begin1 < ae-as || rc < best {
					lcs = region{begin1: as, begin2: bs, end1: ae, end2: be}
					best = rc
				}
				if np == 0 {
					break
				}
				for np != 0 && np <= ae {
					np = next[np-line1]
				}
				if np == 0 {
					break
				}
				as = np
			}
		}
		bp = bNext
	}
	return lcs, hasCommon && best > histMaxChain
}
