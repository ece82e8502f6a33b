package internal

// A job's trace as HTML for its page (issue 30): ANSI colours through
// github.com/buildkite/terminal-to-html, GitLab's section markers
//
//	section_start:<unix>:<name>[collapsed=true]\r\e[0K<header>
//	section_end:<unix>:<name>\r\e[0K
//
// as nested <details> (collapsible without JavaScript, the section's
// duration in its <summary>), and the timestamps gitlab-runner 17 puts
// before each line with FF_TIMESTAMPS as a dim column:
//
//	2024-01-01T00:00:00.000000Z 00O <text>     a new line (stream 00, stdout; E for stderr)
//	2024-01-01T00:00:00.000000Z 00O+<text>     the rest of the line before (flushed in parts)
//
// The live log renders the trace in chunks from a byte offset. Only
// complete lines are rendered, so no line is ever rendered twice, and
// what a line needs from the lines before it travels as a small state
// beside the offset (traceState): the SGR colour in force and the
// sections still open. The page sends that state back with the next
// offset, so a chunk costs its own size, never the trace's. A chunk's
// HTML comes as parts: before each part's HTML, the page closes that many
// sections opened by earlier chunks (writing their durations), then
// appends the HTML into the innermost section still open. Two things do
// not cross a chunk's edge: a "+" part of a timestamped line that comes
// in a later chunk than its line shows as a line of its own (except a
// section's header, for which a bare timestamped section start waits),
// and cursor movements act within their own line only.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"time"

	terminal "github.com/buildkite/terminal-to-html/v3"
)

// maxOpenSections bounds the sections the state carries: a trace that
// opens more without closing them renders the deeper ones flat.
const maxOpenSections = 16

// traceState is what rendering from an offset needs of the trace before
// it.
type traceState struct {
	// SGR is the colour and style in force: the parameters of the SGR
	// sequences since the last reset ("1;31").
	SGR string `json:"g,omitempty"`
	// Open are the sections open at the offset, outermost first.
	Open []openSection `json:"o,omitempty"`
}

type openSection struct {
	Name  string `json:"n"`
	Start int64  `json:"t"` // the marker's unix time
}

var (
	sgrParams   = regexp.MustCompile(`^[0-9;]{0,64}$`)
	sectionName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	// sectionMarker is a section's start or end with its options and the
	// carriage return and line erase that hide it in a terminal (each
	// optional: gitlab-runner's timestamped traces split the line there).
	sectionMarker = regexp.MustCompile(`(?:\x1b\[0K)?section_(start|end):([0-9]{1,12}):([A-Za-z0-9_.-]{1,100})(\[[A-Za-z0-9_=,.-]*\])?\r?(?:\x1b\[0K)?`)
	anyEscape     = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\r`)
)

// encode is the state as the page carries it: one URL-safe token.
func (st traceState) encode() string {
	if st.SGR == "" && len(st.Open) == 0 {
		return ""
	}
	b, _ := json.Marshal(st)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeTraceState reads a state the page sent back. It comes from the
// visitor, so it is checked as strictly as it is written; what fails the
// check is no state (the lines then render as at a trace's start).
func decodeTraceState(s string) traceState {
	if s == "" || len(s) > 4096 {
		return traceState{}
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return traceState{}
	}
	var st traceState
	if json.Unmarshal(b, &st) != nil || !sgrParams.MatchString(st.SGR) || len(st.Open) > maxOpenSections {
		return traceState{}
	}
	for _, o := range st.Open {
		if !sectionName.MatchString(o.Name) || o.Start < 0 {
			return traceState{}
		}
	}
	return st
}

// tracePart is HTML to append after closing Close sections the page
// shows open (their durations, innermost first).
type tracePart struct {
	Close []string      `json:"close"`
	HTML  template.HTML `json:"html"`
}

// traceFrame is a section opened in the chunk being rendered: its body is
// written into it until it ends, then the whole <details> into its
// parent.
type traceFrame struct {
	openSection
	header    string
	collapsed bool
	body      bytes.Buffer
}

// traceRenderer renders one chunk.
type traceRenderer struct {
	parts  []tracePart
	cur    *tracePart
	buf    bytes.Buffer // the current part's HTML
	base   []openSection
	frames []*traceFrame
	sgr    string
	open   []openSection // the sections open at the chunk's end, once finished
}

// renderTrace renders the complete lines of data (the trace from an
// offset, where st held). With final (the job is over) the last line
// counts as complete without its newline. It answers the parts, how many
// bytes of data they cover, and the state after them.
func renderTrace(data []byte, st traceState, final bool) (parts []tracePart, consumed int, next traceState) {
	r := &traceRenderer{base: append([]openSection(nil), st.Open...), sgr: st.SGR}
	r.cur = &tracePart{}
	end := bytes.LastIndexByte(data, '\n') + 1
	if final {
		end = len(data)
	}
	var pending []byte // the logical line being assembled from timestamped parts
	var pendingTS string
	has := false
	for pos := 0; pos < end; {
		nl := bytes.IndexByte(data[pos:end], '\n')
		lineEnd := end
		if nl >= 0 {
			lineEnd = pos + nl
		}
		line := bytes.TrimSuffix(data[pos:lineEnd], []byte{'\r'})
		next := lineEnd + 1
		ts, text, cont := splitTimestamp(line)
		if cont && has {
			pending = append(pending, text...)
		} else {
			if has {
				r.line(pendingTS, pending)
			}
			pending, pendingTS, has = append(pending[:0], text...), ts, true
		}
		// A timestamped section start may get its header from the next
		// line, which has not come yet: it waits for it while the job runs.
		if !final && next >= end && ts != "" && !cont && isBareSectionStart(pending) {
			end, has = pos, false
			break
		}
		pos = next
	}
	if has {
		r.line(pendingTS, pending)
	}
	if end > len(data) {
		end = len(data)
	}
	return r.finish(), end, traceState{SGR: r.sgr, Open: r.openNow()}
}

// isBareSectionStart: the line is a section's start with nothing after it.
func isBareSectionStart(line []byte) bool {
	loc := sectionMarker.FindSubmatchIndex(line)
	return loc != nil && string(line[loc[2]:loc[3]]) == "start" && len(bytes.TrimSpace(line[loc[1]:])) == 0 &&
		len(bytes.TrimSpace(line[:loc[0]])) == 0
}

// splitTimestamp takes gitlab-runner's timestamp prefix off a line: the
// time, the text, and whether the line continues the one before ("+").
// A line without the prefix is its own text.
func splitTimestamp(line []byte) (ts string, text []byte, continues bool) {
	// "2024-01-01T00:00:00.000000Z 00O " is 32 bytes; the fraction's
	// length may vary, the rest is fixed.
	if len(line) < 25 || line[4] != '-' || line[10] != 'T' || line[13] != ':' || line[0] < '0' || line[0] > '9' {
		return "", line, false
	}
	z := bytes.IndexByte(line[19:min(len(line), 40)], 'Z')
	if z < 0 {
		return "", line, false
	}
	z += 19
	rest := line[z+1:]
	if len(rest) < 5 || rest[0] != ' ' || !isHex(rest[1]) || !isHex(rest[2]) || (rest[3] != 'O' && rest[3] != 'E') ||
		(rest[4] != ' ' && rest[4] != '+') {
		return "", line, false
	}
	return string(line[:z+1]), rest[5:], rest[4] == '+'
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// line renders one logical line: its text around the section markers in
// it, each piece where the markers put it.
func (r *traceRenderer) line(ts string, text []byte) {
	var markers [][]int
	if bytes.Contains(text, []byte("section_")) { // the regexp only where it can match: a third of the time otherwise
		markers = sectionMarker.FindAllSubmatchIndex(text, -1)
	}
	if len(markers) == 0 {
		r.text(ts, text, true)
		return
	}
	if m := markers[0]; m[0] > 0 {
		r.text(ts, text[:m[0]], false)
	}
	for i, m := range markers {
		after := len(text)
		if i+1 < len(markers) {
			after = markers[i+1][0]
		}
		at, _ := strconv.ParseInt(string(text[m[4]:m[5]]), 10, 64)
		name := string(text[m[6]:m[7]])
		rest := text[m[1]:after]
		if string(text[m[2]:m[3]]) == "start" {
			collapsed := m[8] >= 0 && strings.Contains(string(text[m[8]:m[9]]), "collapsed=true")
			r.start(name, at, collapsed, r.html(rest))
			continue
		}
		r.end(name, at)
		if len(rest) > 0 {
			r.text(ts, rest, false)
		}
	}
}

// text writes a line of text; a piece left beside a marker (keepEmpty
// false) is left out when it shows nothing.
func (r *traceRenderer) text(ts string, text []byte, keepEmpty bool) {
	if !keepEmpty && len(anyEscape.ReplaceAll(text, nil)) == 0 {
		r.carry(text)
		return
	}
	w := r.out()
	w.WriteString(`<div class="tl">`)
	if ts != "" {
		w.WriteString(`<time class="tt" datetime="`)
		w.WriteString(html.EscapeString(ts))
		w.WriteString(`">`)
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			w.WriteString(t.UTC().Format("15:04:05"))
		}
		w.WriteString(`</time>`)
	}
	w.WriteString(`<span class="tx">`)
	w.WriteString(r.html(text))
	w.WriteString("</span></div>\n")
}

// html renders text in the colour in force, and carries its colour on.
func (r *traceRenderer) html(text []byte) string {
	if r.sgr == "" && plainText(text) {
		return template.HTMLEscapeString(string(text)) // what the terminal would show, at a tenth of the cost
	}
	in := text
	if r.sgr != "" {
		in = append([]byte("\x1b["+r.sgr+"m"), text...)
	}
	r.carry(text)
	return terminal.Render(in)
}

// plainText: text has no control character, so a terminal shows it as
// it is.
func plainText(text []byte) bool {
	for _, c := range text {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// carry follows the SGR sequences of text: a reset (no parameter, or 0
// first) starts the state anew; the others add to it.
func (r *traceRenderer) carry(text []byte) {
	for {
		at := bytes.Index(text, []byte("\x1b["))
		if at < 0 {
			return
		}
		text = text[at+2:]
		n := 0
		for n < len(text) && (text[n] >= '0' && text[n] <= '9' || text[n] == ';') {
			n++
		}
		if n >= len(text) || text[n] != 'm' {
			continue // another sequence: no colour
		}
		r.addSGR(string(text[:n]))
		text = text[n+1:]
	}
}

func (r *traceRenderer) addSGR(p string) {
	if p == "" || p == "0" || strings.HasPrefix(p, "0;") {
		p = strings.TrimLeft(strings.TrimPrefix(p, "0"), ";")
		r.sgr = ""
	}
	if p == "" {
		return
	}
	if r.sgr != "" {
		p = r.sgr + ";" + p
	}
	if len(p) > 64 {
		p = p[len(p)-64:]
		p = p[strings.IndexByte(p, ';')+1:]
	}
	r.sgr = p
}

// out is where the next HTML goes: the innermost section opened in this
// chunk, or the current part.
func (r *traceRenderer) out() *bytes.Buffer {
	if n := len(r.frames); n > 0 {
		return &r.frames[n-1].body
	}
	return &r.buf
}

func (r *traceRenderer) start(name string, at int64, collapsed bool, header string) {
	if len(r.base)+len(r.frames) >= maxOpenSections {
		return
	}
	r.frames = append(r.frames, &traceFrame{openSection: openSection{Name: name, Start: at}, header: header, collapsed: collapsed})
}

// end closes the section of that name and those opened inside it; an end
// without its start is left out.
func (r *traceRenderer) end(name string, at int64) {
	for i := len(r.frames) - 1; i >= 0; i-- {
		if r.frames[i].Name == name {
			for len(r.frames) > i {
				r.closeFrame(at)
			}
			return
		}
	}
	for i := len(r.base) - 1; i >= 0; i-- {
		if r.base[i].Name == name {
			for len(r.frames) > 0 {
				r.closeFrame(at)
			}
			r.flushPart()
			for len(r.base) > i {
				top := r.base[len(r.base)-1]
				r.cur.Close = append(r.cur.Close, sectionDuration(top.Start, at))
				r.base = r.base[:len(r.base)-1]
			}
			return
		}
	}
}

// flushPart ends the current part when it has HTML, so that closing
// sections comes after it.
func (r *traceRenderer) flushPart() {
	if r.buf.Len() == 0 {
		return
	}
	r.cur.HTML = template.HTML(r.buf.String()) //nolint:gosec // built here from escaped text and terminal-to-html's escaped output
	r.parts = append(r.parts, *r.cur)
	r.cur = &tracePart{}
	r.buf.Reset()
}

// closeFrame writes the innermost section opened in this chunk into its
// parent, ended at at (-1: still open).
func (r *traceRenderer) closeFrame(at int64) {
	f := r.frames[len(r.frames)-1]
	r.frames = r.frames[:len(r.frames)-1]
	w := r.out()
	w.WriteString(`<details class="ts"`)
	if !f.collapsed {
		w.WriteString(` open`)
	}
	if at < 0 {
		w.WriteString(` data-open`)
	}
	fmt.Fprintf(w, ` data-section="%s"><summary><span class="tx">%s</span><span class="sd">`, html.EscapeString(f.Name), f.header)
	if at >= 0 {
		w.WriteString(sectionDuration(f.Start, at))
	}
	w.WriteString("</span></summary>\n")
	w.Write(f.body.Bytes())
	w.WriteString("</details>\n")
}

// finish writes the sections still open (open, for the next chunk to fill)
// and ends the last part.
func (r *traceRenderer) finish() []tracePart {
	r.open = r.openNow()
	for len(r.frames) > 0 {
		r.closeFrame(-1)
	}
	if r.buf.Len() > 0 || len(r.cur.Close) > 0 || len(r.parts) == 0 {
		r.cur.HTML = template.HTML(r.buf.String()) //nolint:gosec // as in flushPart
		r.parts = append(r.parts, *r.cur)
	}
	return r.parts
}

func (r *traceRenderer) openNow() []openSection {
	if r.open != nil {
		return r.open
	}
	open := append([]openSection(nil), r.base...)
	for _, f := range r.frames {
		open = append(open, f.openSection)
	}
	return open
}

// sectionDuration is how long a section took, as GitLab shows it: 00:03,
// 01:02:03 past an hour.
func sectionDuration(from, to int64) string {
	d := max(to-from, 0)
	if d >= 3600 {
		return fmt.Sprintf("%02d:%02d:%02d", d/3600, d/60%60, d%60)
	}
	return fmt.Sprintf("%02d:%02d", d/60, d%60)
}
