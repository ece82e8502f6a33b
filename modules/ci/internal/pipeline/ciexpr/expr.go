package ciexpr

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// Bounds on one expression. GitLab's own lexer stops at a few hundred
// tokens; these keep compile and evaluation time small whatever the file
// says.
const (
	MaxExprBytes = 4 << 10 // the source text
	MaxTokens    = 200     // lexemes, operators and parentheses included
	MaxDepth     = 32      // nested parentheses
)

// ErrSyntax is what every compile error matches with errors.Is; its text is
// GitLab's wording of an invalid `if:`.
var ErrSyntax = errors.New("invalid expression syntax")

// SyntaxError is a refused expression: Error() is GitLab's wording and
// Reason says what was wrong, for a lint page or a log.
type SyntaxError struct {
	Reason string
	Offset int // byte offset in the source where it was noticed
}

func (e *SyntaxError) Error() string { return ErrSyntax.Error() }

// Is makes errors.Is(err, ErrSyntax) hold.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Lookup answers a variable's value and whether it is defined.
type Lookup func(name string) (string, bool)

// Expr is a compiled expression. It is safe for concurrent use.
type Expr struct {
	src  string
	root *node

	// Patterns held in variables, compiled once per distinct value.
	mu      sync.Mutex
	dynamic map[string]*regexp.Regexp
}

// maxDynamicPatterns bounds the per-expression cache of patterns read
// from variables; beyond it a pattern is compiled on every evaluation.
const maxDynamicPatterns = 32

// String returns the source the expression was compiled from.
func (e *Expr) String() string { return e.src }

type nodeKind uint8

const (
	nodeOr nodeKind = iota
	nodeAnd
	nodeEq
	nodeNe
	nodeMatch
	nodeNoMatch
	nodeTruthy // a bare operand
)

type operandKind uint8

const (
	operandVariable operandKind = iota
	operandString
	operandNull
	operandPattern
)

type operand struct {
	kind operandKind
	text string         // the variable's name or the string's value
	re   *regexp.Regexp // operandPattern
}

type node struct {
	kind        nodeKind
	children    []*node // nodeOr, nodeAnd
	left, right operand // comparisons; left alone for nodeTruthy

	// The last text matched against a pattern literal, and the answer
	// (guarded by the Expr's mu). Rules shared by thousands of jobs
	// (an anchor, !reference, extends) are one Expr evaluated once per
	// job against the same pipeline variable: matching a long value
	// again each time cost seconds.
	memoText   string
	memoResult bool
	memoSet    bool
}

// memoMinBytes is the shortest text whose match is remembered; shorter
// ones match faster than the bookkeeping costs.
const memoMinBytes = 64

// Compile parses src once. Errors are *SyntaxError.
func Compile(src string) (*Expr, error) {
	if len(src) > MaxExprBytes {
		return nil, &SyntaxError{Reason: "expression longer than 4096 bytes", Offset: MaxExprBytes}
	}
	tokens, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := parser{tokens: tokens, src: src}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.tokens) {
		return nil, p.fail("unexpected " + p.tokens[p.pos].describe())
	}
	return &Expr{src: src, root: root}, nil
}

// MustCompile is Compile for expressions written in Go source (tests,
// defaults); it panics on an error.
func MustCompile(src string) *Expr {
	e, err := Compile(src)
	if err != nil {
		panic("ciexpr: " + src + ": " + err.(*SyntaxError).Reason)
	}
	return e
}

// Eval evaluates the expression against lookup; a nil lookup defines no
// variable.
func (e *Expr) Eval(lookup func(name string) (string, bool)) bool {
	var steps int
	return e.eval(e.root, lookup, &steps)
}

// evalCounting is Eval that also reports the nodes it visited, for the
// fuzz test's bound on work.
func (e *Expr) evalCounting(lookup func(name string) (string, bool)) (bool, int) {
	var steps int
	ok := e.eval(e.root, lookup, &steps)
	return ok, steps
}

func (e *Expr) eval(n *node, lookup Lookup, steps *int) bool {
	*steps++
	switch n.kind {
	case nodeOr:
		for _, c := range n.children {
			if e.eval(c, lookup, steps) {
				return true
			}
		}
		return false
	case nodeAnd:
		for _, c := range n.children {
			if !e.eval(c, lookup, steps) {
				return false
			}
		}
		return true
	case nodeTruthy:
		v, ok := value(n.left, lookup)
		return ok && v != ""
	case nodeEq, nodeNe:
		lv, lok := value(n.left, lookup)
		rv, rok := value(n.right, lookup)
		equal := lok == rok && lv == rv
		return equal == (n.kind == nodeEq)
	case nodeMatch, nodeNoMatch:
		return e.matches(n, lookup) == (n.kind == nodeMatch)
	}
	return false
}

// value is an operand's string and whether it is defined (null is not).
func value(o operand, lookup Lookup) (string, bool) {
	switch o.kind {
	case operandString:
		return o.text, true
	case operandVariable:
		if lookup == nil {
			return "", false
		}
		return lookup(o.text)
	}
	return "", false
}

// matches is `left =~ right`. A null left side never matches. The right
// side is a pattern literal, a variable or a quoted string; a variable or
// string holding /re/flags is that pattern, and anything else (or an
// invalid pattern) is matched as GitLab's implementation does with a plain
// string: the left side must occur in it.
func (e *Expr) matches(n *node, lookup Lookup) bool {
	text, ok := value(n.left, lookup)
	if !ok {
		return false
	}
	if n.right.kind == operandPattern {
		if len(text) < memoMinBytes {
			return n.right.re.MatchString(text)
		}
		e.mu.Lock()
		if n.memoSet && n.memoText == text {
			r := n.memoResult
			e.mu.Unlock()
			return r
		}
		e.mu.Unlock()
		r := n.right.re.MatchString(text)
		e.mu.Lock()
		n.memoText, n.memoResult, n.memoSet = text, r, true
		e.mu.Unlock()
		return r
	}
	rv, ok := value(n.right, lookup)
	if !ok {
		return false
	}
	if re := e.dynamicPattern(rv); re != nil {
		return re.MatchString(text)
	}
	return strings.Contains(rv, text)
}

func (e *Expr) dynamicPattern(v string) *regexp.Regexp {
	if len(v) < 3 || v[0] != '/' || len(v) > MaxExprBytes {
		return nil
	}
	e.mu.Lock()
	re, seen := e.dynamic[v]
	e.mu.Unlock()
	if seen {
		return re
	}
	re = nil
	if end := strings.LastIndexByte(v, '/'); end > 1 {
		if compiled, err := compilePattern(v[1:end], v[end+1:]); err == nil {
			re = compiled
		}
	}
	e.mu.Lock()
	if len(e.dynamic) < maxDynamicPatterns {
		if e.dynamic == nil {
			e.dynamic = make(map[string]*regexp.Regexp)
		}
		e.dynamic[v] = re
	}
	e.mu.Unlock()
	return re
}

// compilePattern compiles a /body/flags literal for RE2. Ruby's i is
// case-insensitive and its m lets a dot match a newline (Go's s); other
// flags have no RE2 meaning and are refused.
func compilePattern(body, flags string) (*regexp.Regexp, error) {
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i':
			prefix += "i"
		case 'm':
			prefix += "s"
		default:
			return nil, errors.New("unsupported pattern flag " + string(f))
		}
	}
	if prefix != "" {
		body = "(?" + prefix + ")" + body
	}
	return regexp.Compile(body)
}

type tokenKind uint8

const (
	tokVariable tokenKind = iota
	tokString
	tokNull
	tokPattern
	tokEq
	tokNe
	tokMatch
	tokNoMatch
	tokAnd
	tokOr
	tokOpen
	tokClose
)

type token struct {
	kind   tokenKind
	text   string
	re     *regexp.Regexp
	offset int
}

func (t token) describe() string {
	switch t.kind {
	case tokVariable:
		return "variable $" + t.text
	case tokString:
		return "string"
	case tokNull:
		return "null"
	case tokPattern:
		return "pattern"
	case tokOpen:
		return "("
	case tokClose:
		return ")"
	}
	return "operator " + t.text
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func lex(src string) ([]token, error) {
	var out []token
	fail := func(at int, reason string) ([]token, error) {
		return nil, &SyntaxError{Reason: reason, Offset: at}
	}
	for i := 0; i < len(src); {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if len(out) == MaxTokens {
			return fail(i, "more than 200 tokens")
		}
		start := i
		switch {
		case c == '$':
			i++
			braced := i < len(src) && src[i] == '{'
			if braced {
				i++
			}
			nameStart := i
			for i < len(src) && isWordByte(src[i]) {
				i++
			}
			name := src[nameStart:i]
			if name == "" {
				return fail(start, "a variable needs a name")
			}
			if braced {
				if i >= len(src) || src[i] != '}' {
					return fail(start, "unterminated ${")
				}
				i++
			}
			out = append(out, token{kind: tokVariable, text: name, offset: start})
		case c == '"' || c == '\'':
			end := strings.IndexByte(src[i+1:], c)
			if end < 0 {
				return fail(start, "unterminated string")
			}
			out = append(out, token{kind: tokString, text: src[i+1 : i+1+end], offset: start})
			i += end + 2
		case c == '/':
			i++
			for i < len(src) && src[i] != '/' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(src) {
				return fail(start, "unterminated pattern")
			}
			body := src[start+1 : i]
			i++
			flagStart := i
			for i < len(src) && isWordByte(src[i]) {
				i++
			}
			if body == "" {
				return fail(start, "empty pattern")
			}
			re, err := compilePattern(body, src[flagStart:i])
			if err != nil {
				return fail(start, "invalid pattern: "+err.Error())
			}
			out = append(out, token{kind: tokPattern, text: src[start:i], re: re, offset: start})
		case c == '(':
			i++
			out = append(out, token{kind: tokOpen, text: "(", offset: start})
		case c == ')':
			i++
			out = append(out, token{kind: tokClose, text: ")", offset: start})
		case isWordByte(c):
			for i < len(src) && isWordByte(src[i]) {
				i++
			}
			if src[start:i] != "null" {
				return fail(start, "unknown word "+quoteShort(src[start:i]))
			}
			out = append(out, token{kind: tokNull, text: "null", offset: start})
		default:
			if i+1 >= len(src) {
				return fail(start, "unknown character "+quoteShort(src[i:]))
			}
			kind, ok := operators[src[i:i+2]]
			if !ok {
				return fail(start, "unknown character "+quoteShort(src[i:i+1]))
			}
			out = append(out, token{kind: kind, text: src[i : i+2], offset: start})
			i += 2
		}
	}
	if len(out) == 0 {
		return fail(0, "empty expression")
	}
	return out, nil
}

var operators = map[string]tokenKind{
	"==": tokEq, "!=": tokNe, "=~": tokMatch, "!~": tokNoMatch, "&&": tokAnd, "||": tokOr,
}

func quoteShort(s string) string {
	if len(s) > 20 {
		s = s[:20] + "..."
	}
	return "\"" + s + "\""
}

type parser struct {
	src    string
	tokens []token
	pos    int
}

func (p *parser) fail(reason string) error {
	at := len(p.src)
	if p.pos < len(p.tokens) {
		at = p.tokens[p.pos].offset
	}
	return &SyntaxError{Reason: reason, Offset: at}
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.tokens) {
		return p.tokens[p.pos], true
	}
	return token{}, false
}

// or := and ('||' and)*
func (p *parser) or(depth int) (*node, error) {
	return p.chain(depth, tokOr, nodeOr, p.and)
}

// and := comparison ('&&' comparison)*
func (p *parser) and(depth int) (*node, error) {
	return p.chain(depth, tokAnd, nodeAnd, p.comparison)
}

func (p *parser) chain(depth int, sep tokenKind, kind nodeKind, next func(int) (*node, error)) (*node, error) {
	first, err := next(depth)
	if err != nil {
		return nil, err
	}
	children := []*node{first}
	for {
		t, ok := p.peek()
		if !ok || t.kind != sep {
			break
		}
		p.pos++
		n, err := next(depth)
		if err != nil {
			return nil, err
		}
		children = append(children, n)
	}
	if len(children) == 1 {
		return first, nil
	}
	return &node{kind: kind, children: children}, nil
}

var comparisons = map[tokenKind]nodeKind{tokEq: nodeEq, tokNe: nodeNe, tokMatch: nodeMatch, tokNoMatch: nodeNoMatch}

// comparison := '(' or ')' | operand (op operand)?
func (p *parser) comparison(depth int) (*node, error) {
	t, ok := p.peek()
	if !ok {
		return nil, p.fail("expression ends early")
	}
	if t.kind == tokOpen {
		if depth >= MaxDepth {
			return nil, p.fail("parentheses nested deeper than 32")
		}
		p.pos++
		inner, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c, ok := p.peek(); !ok || c.kind != tokClose {
			return nil, p.fail("missing )")
		}
		p.pos++
		return inner, nil
	}
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	op, ok := p.peek()
	kind, isComparison := comparisons[op.kind]
	if !ok || !isComparison {
		switch left.kind {
		case operandPattern:
			return nil, p.fail("a pattern must be the right side of =~ or !~")
		}
		return &node{kind: nodeTruthy, left: left}, nil
	}
	p.pos++
	right, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch kind {
	case nodeEq, nodeNe:
		if left.kind == operandPattern || right.kind == operandPattern {
			return nil, p.fail("a pattern can only be compared with =~ or !~")
		}
	default:
		if left.kind == operandPattern || left.kind == operandNull {
			return nil, p.fail("the left side of " + op.text + " must be a variable or a string")
		}
		// A quoted string on the right is taken as GitLab takes it: a
		// pattern when it reads /re/flags, else a text the left side must
		// occur in (see matches); real files write `$X =~ "text"`.
		if right.kind == operandNull {
			return nil, p.fail("the right side of " + op.text + " must be a pattern, a variable or a string")
		}
	}
	return &node{kind: kind, left: left, right: right}, nil
}

func (p *parser) operand() (operand, error) {
	t, ok := p.peek()
	if !ok {
		return operand{}, p.fail("expression ends early")
	}
	switch t.kind {
	case tokVariable:
		p.pos++
		return operand{kind: operandVariable, text: t.text}, nil
	case tokString:
		p.pos++
		return operand{kind: operandString, text: t.text}, nil
	case tokNull:
		p.pos++
		return operand{kind: operandNull}, nil
	case tokPattern:
		p.pos++
		return operand{kind: operandPattern, text: t.text, re: t.re}, nil
	}
	return operand{}, p.fail("unexpected " + t.describe())
}

// AnyHolds is `only: variables` / `except: variables`: the list selects
// the pipeline when any of its expressions holds.
func AnyHolds(exprs []*Expr, lookup func(name string) (string, bool)) bool {
	for _, e := range exprs {
		if e.Eval(lookup) {
			return true
		}
	}
	return false
}
