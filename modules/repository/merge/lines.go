package merge

// This file lends the line diff under Merge3 to the rest of the repository
// module: blame passes a file's unchanged lines from a commit to its parent
// and needs the hunks `git blame` finds, which diffs with xdiff's Myers and
// (since git 2.14, by default) its indent heuristic. Using this diff rather
// than another library's keeps blame's answers the ones git gives on the
// same history.

// Edit is one hunk of a line diff: the OldLines lines of the old text
// starting at OldStart (0-based) are replaced by the NewLines lines of the
// new text starting at NewStart. A pure insertion has OldLines 0, a pure
// deletion NewLines 0.
type Edit struct {
	OldStart, OldLines int
	NewStart, NewLines int
}

// DiffOptions says how DiffLines diffs.
type DiffOptions struct {
	Algorithm Algorithm
	// IndentHeuristic places a change that could slide up or down where
	// it best splits the text between blocks, judged by the indentation
	// and blank lines around it, as `git diff` and `git blame` do by
	// default.
	IndentHeuristic bool
}

// DiffLines diffs two texts line by line (a line keeps its "\n"; a last
// line without one differs from the same line with one, as in git) and
// returns the hunks in ascending order. Lines outside every hunk are
// unchanged and pair up in order.
func DiffLines(old, new []byte, opts DiffOptions) []Edit {
	la, lb := splitLines(old), splitLines(new)
	a, b := lineClasses(la, lb)
	var ia, ib []int
	if opts.IndentHeuristic {
		ia, ib = indentsOf(la), indentsOf(lb)
	}
	script := diffIDsIndent(a, b, opts.Algorithm, ia, ib)
	out := make([]Edit, len(script))
	for i, e := range script {
		out[i] = Edit{OldStart: e.a, OldLines: e.na, NewStart: e.b, NewLines: e.nb}
	}
	return out
}

// SplitLines cuts a text into the lines DiffLines counts: each keeps its
// "\n", the last may lack one.
func SplitLines(b []byte) [][]byte { return splitLines(b) }

// lineClasses numbers the distinct lines of both texts: equal lines get
// equal ids, which is all the diff compares.
func lineClasses(a, b [][]byte) ([]int, []int) {
	classes := make(map[string]int, len(a)+len(b))
	ids := func(lines [][]byte) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := classes[string(l)]
			if !ok {
				id = len(classes)
				classes[string(l)] = id
			}
			out[i] = id
		}
		return out
	}
	return ids(a), ids(b)
}

// The indent heuristic. A group of changed lines that may slide between
// earliest and latest positions is scored at each position by the two
// places where it splits the text (above its first line and below its
// last); the best score wins, ties going to the position further down. The
// weights are xdiff's: they were tuned on real histories, and any other
// choice would put some changes elsewhere than git does.
const (
	maxIndent     = 200 // indents are counted up to this
	maxBlanks     = 20  // blank lines are counted up to this many
	maxIndentMove = 100 // positions tried below the group's lowest one

	startOfFilePenalty             = 1
	endOfFilePenalty               = 21
	totalBlankWeight               = -30
	postBlankWeight                = 6
	relativeIndentPenalty          = -4
	relativeIndentWithBlankPenalty = 10
	relativeOutdentPenalty         = 24
	relativeOutdentWithBlank       = 17
	relativeDedentPenalty          = 23
	relativeDedentWithBlank        = 17
	indentWeight                   = 60
)

// indentsOf is each line's indent: the columns of its leading spaces and
// tabs (a tab goes to the next multiple of 8), at most maxIndent, and -1
// for a line of nothing but white space.
func indentsOf(lines [][]byte) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		out[i] = indentOf(l)
	}
	return out
}

func indentOf(line []byte) int {
	n := 0
	for _, c := range line {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		case '\n', '\r', '\v', '\f':
			// white space that does not indent
		default:
			return n
		}
		if n >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// splitAt describes the text around a split above line split: that line's
// indent, the blank lines just above and below it and the indents of the
// first non-blank lines beyond them.
type splitAt struct {
	endOfFile             bool
	indent                int
	preBlank, preIndent   int
	postBlank, postIndent int
}

func measureSplit(indents []int, split int) splitAt {
	m := splitAt{indent: -1, preIndent: -1, postIndent: -1}
	if split >= len(indents) {
		m.endOfFile = true
	} else {
		m.indent = indents[split]
	}
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = indents[i]; m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	for i := split + 1; i < len(indents); i++ {
		if m.postIndent = indents[i]; m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

// splitScore sums the scores of a position's two splits; lower is better.
type splitScore struct{ effectiveIndent, penalty int }

func (s *splitScore) add(m splitAt) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	blanks := totalBlank != 0
	s.effectiveIndent += indent
	switch {
	case indent == -1 || m.preIndent == -1 || indent == m.preIndent:
	case indent > m.preIndent:
		s.penalty += pick(blanks, relativeIndentWithBlankPenalty, relativeIndentPenalty)
	case m.postIndent != -1 && m.postIndent > indent:
		s.penalty += pick(blanks, relativeOutdentWithBlank, relativeOutdentPenalty)
	default:
		s.penalty += pick(blanks, relativeDedentWithBlank, relativeDedentPenalty)
	}
}

func pick(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}

// compare is negative when s is better than o.
func (s splitScore) compare(o splitScore) int {
	cmp := 0
	switch {
	case s.effectiveIndent > o.effectiveIndent:
		cmp = 1
	case s.effectiveIndent < o.effectiveIndent:
		cmp = -1
	}
	return indentWeight*cmp + s.penalty - o.penalty
}

// bestIndentShift is where the indent heuristic puts g (slid down as far
// as it goes; earliestEnd is its end slid up as far as it goes): the end
// line of the best position.
func bestIndentShift(indents []int, g group, earliestEnd int) int {
	size := g.end - g.start
	shift := max(earliestEnd, g.end-size-1, g.end-maxIndentMove)
	best, bestScore := -1, splitScore{}
	for ; shift <= g.end; shift++ {
		var score splitScore
		score.add(measureSplit(indents, shift))
		score.add(measureSplit(indents, shift-size))
		if best == -1 || score.compare(bestScore) <= 0 {
			best, bestScore = shift, score
		}
	}
	return best
}
