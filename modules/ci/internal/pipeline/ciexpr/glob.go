package ciexpr

import (
	"errors"
	"regexp"
	"strings"
)

// Bounds on one glob of `changes` or `exists`.
const (
	MaxGlobBytes     = 1 << 10
	MaxGlobBraceNest = 8
)

// Glob is a compiled path pattern with the semantics of Ruby's
// File.fnmatch under FNM_PATHNAME | FNM_DOTMATCH | FNM_EXTGLOB, the flags
// GitLab matches `changes` and `exists` with:
//
//   - `*` is any run of characters but `/`, dot files included;
//   - `**/` at the start of a segment is zero or more whole directories;
//     `**` anywhere else is `*`;
//   - `?` is one character but `/`;
//   - `[abc]`, `[a-z]`, `[!a]` / `[^a]` are character classes (never `/`);
//   - `{a,b}` is either alternative, nesting allowed;
//   - a backslash makes the next character literal.
//
// A glob is translated to one RE2 expression, so matching is linear in the
// path's length whatever the pattern.
type Glob struct {
	src     string
	literal bool
	re      *regexp.Regexp
}

// CompileGlob compiles pattern. An unbalanced `[` or `{` is literal, as in
// Ruby.
func CompileGlob(pattern string) (*Glob, error) {
	if pattern == "" {
		return nil, errors.New("empty path pattern")
	}
	if len(pattern) > MaxGlobBytes {
		return nil, errors.New("path pattern longer than 1024 bytes")
	}
	if !strings.ContainsAny(pattern, `*?[{\`) {
		return &Glob{src: pattern, literal: true}, nil
	}
	var b strings.Builder
	b.WriteString(`^`)
	if err := translateGlob(&b, pattern, 0, true); err != nil {
		return nil, err
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errors.New("invalid path pattern")
	}
	return &Glob{src: pattern, re: re}, nil
}

// String is the pattern as written.
func (g *Glob) String() string { return g.src }

// Literal returns the path a pattern without wildcards names, so that a
// caller can look one file up instead of listing a tree.
func (g *Glob) Literal() (string, bool) { return g.src, g.literal }

// Match reports whether path (relative, slash-separated, no leading slash)
// matches.
func (g *Glob) Match(path string) bool {
	if g.literal {
		return path == g.src
	}
	return g.re.MatchString(path)
}

// translateGlob writes the RE2 form of s; segmentStart says whether s
// begins at the start of a path segment (where `**/` is recursive).
func translateGlob(b *strings.Builder, s string, depth int, segmentStart bool) error {
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				b.WriteString(regexp.QuoteMeta(s[i+1 : i+2]))
				i += 2
			} else {
				b.WriteString(`\\`)
				i++
			}
			segmentStart = false
		case '*':
			if segmentStart && strings.HasPrefix(s[i:], "**/") {
				b.WriteString(`(?:[^/]*/)*`)
				i += 3
				continue // still at a segment's start
			}
			for i < len(s) && s[i] == '*' {
				i++
			}
			b.WriteString(`[^/]*`)
			segmentStart = false
		case '?':
			b.WriteString(`[^/]`)
			i++
			segmentStart = false
		case '[':
			class, n := bracketClass(s[i:])
			if n == 0 {
				b.WriteString(`\[`)
				i++
			} else {
				b.WriteString(class)
				i += n
			}
			segmentStart = false
		case '{':
			end := matchingBrace(s, i)
			if end < 0 {
				b.WriteString(`\{`)
				i++
				segmentStart = false
				continue
			}
			if depth >= MaxGlobBraceNest {
				return errors.New("path pattern braces nested deeper than 8")
			}
			b.WriteString(`(?:`)
			for k, alt := range splitAlternatives(s[i+1 : end]) {
				if k > 0 {
					b.WriteString(`|`)
				}
				if err := translateGlob(b, alt, depth+1, segmentStart); err != nil {
					return err
				}
			}
			b.WriteString(`)`)
			i = end + 1
			segmentStart = false
		default:
			b.WriteString(regexp.QuoteMeta(s[i : i+1]))
			segmentStart = c == '/'
			i++
		}
	}
	return nil
}

// bracketClass translates the class at the start of s ("[...]") and
// returns how many bytes it used, 0 when it is not closed.
func bracketClass(s string) (string, int) {
	i := 1
	negate := i < len(s) && (s[i] == '!' || s[i] == '^')
	if negate {
		i++
	}
	var body strings.Builder
	first := true
	for ; i < len(s); i++ {
		c := s[i]
		if c == ']' && !first {
			if body.Len() == 0 {
				return "", 0
			}
			if negate {
				return `[^/` + body.String() + `]`, i + 1
			}
			return `[` + body.String() + `]`, i + 1
		}
		first = false
		if c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
		}
		switch {
		case c == '/':
			// A class never matches the separator under FNM_PATHNAME.
		case c == '-' && body.Len() > 0 && i+1 < len(s) && s[i+1] != ']':
			body.WriteByte('-')
		case c < 0x80 && !isWordByte(c):
			body.WriteByte('\\')
			body.WriteByte(c)
		default:
			body.WriteByte(c)
		}
	}
	return "", 0
}

// matchingBrace returns the index of the `}` closing the `{` at open, or
// -1.
func matchingBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitAlternatives splits a brace body at its top-level commas.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
