package ciexpr

import (
	"errors"
	"fmt"
	"strings"
)

// The values of a rule's `when`.
const (
	WhenOnSuccess = "on_success"
	WhenOnFailure = "on_failure"
	WhenAlways    = "always"
	WhenManual    = "manual"
	WhenDelayed   = "delayed"
	WhenNever     = "never"
)

// MaxRulePaths is how many entries `changes` and `exists` may list each.
const MaxRulePaths = 50

// Variable is a `variables:` entry of a rule.
type Variable struct {
	Key   string
	Value string
}

// Changes is a rule's `changes:` clause: paths (globs) and the ref to
// compare with (empty: the push's before-SHA, or the merge request's
// target).
type Changes struct {
	Paths     []string
	CompareTo string
}

// Rule is one entry of `rules:`. A clause left out (If nil, Changes nil,
// Exists nil) holds; a rule with no clause at all always matches. Build
// rules with NewRule, which compiles the globs; a Rule written as a
// literal is compiled at each evaluation instead.
type Rule struct {
	If           *Expr
	Changes      *Changes
	Exists       []string
	When         string // empty: the job's own when (on_success by default)
	AllowFailure *bool
	Variables    []Variable
	StartIn      string
	// Interruptible, when set, replaces the job's `interruptible`.
	Interruptible *bool

	existsSet     bool    // exists: was given, even as an empty list
	changesGlobs  []*Glob // nil when a path holds a variable
	existsGlobs   []*Glob
	compiledPaths bool
}

// RuleContext is what a rule is evaluated against.
type RuleContext struct {
	// Lookup answers the variables visible to `if` (and expanded in
	// `changes` and `exists` paths).
	Lookup func(name string) (string, bool)
	// Changed answers the paths changed for a `changes` clause comparing
	// to compareTo (empty for the default), and known false when they
	// cannot be computed (a new branch, a tag, a schedule, a pipeline run
	// from the web or the API): GitLab then treats `changes` as true. Nil
	// is "unknown" everywhere.
	Changed func(compareTo string) (paths []string, known bool)
	// FileExists reports whether a file of the pipeline's commit matches
	// glob; glob.Literal lets it look one path up. Nil means no file
	// exists.
	FileExists func(glob *Glob) bool
}

// RuleSpec is a rule as plain values, the way the YAML reader finds it.
// Nil slices are clauses left out; an empty, non-nil Exists or Changes is
// a clause that lists nothing and so never holds.
type RuleSpec struct {
	If           string // empty: no if clause
	Changes      []string
	CompareTo    string
	Exists       []string
	When         string
	AllowFailure *bool
	Variables    []Variable
	StartIn      string
}

// RuleError is a refused rule; Error() reads as the tail of GitLab's
// message, after the "jobs:<name>:rules:rule " the caller prefixes.
type RuleError struct{ Message string }

func (e *RuleError) Error() string { return e.Message }

// NewRule validates spec and compiles its expression and globs.
func NewRule(spec RuleSpec) (Rule, error) {
	fail := func(format string, args ...any) (Rule, error) {
		return Rule{}, &RuleError{Message: fmt.Sprintf(format, args...)}
	}
	r := Rule{When: spec.When, AllowFailure: spec.AllowFailure, StartIn: spec.StartIn,
		Exists: spec.Exists, existsSet: spec.Exists != nil}
	if spec.If != "" {
		e, err := Compile(spec.If)
		if err != nil {
			return fail("if %v", err)
		}
		r.If = e
	}
	switch spec.When {
	case "", WhenOnSuccess, WhenOnFailure, WhenAlways, WhenManual, WhenDelayed, WhenNever:
	default:
		return fail("when unknown value: %s", shorten(spec.When))
	}
	if spec.When == WhenDelayed && spec.StartIn == "" {
		return fail("start_in should be a duration")
	}
	if spec.When != WhenDelayed && spec.StartIn != "" {
		return fail("start_in should be blank")
	}
	if spec.Changes != nil {
		r.Changes = &Changes{Paths: spec.Changes, CompareTo: spec.CompareTo}
	} else if spec.CompareTo != "" {
		return fail("changes compare_to needs paths")
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"changes", spec.Changes}, {"exists", spec.Exists}} {
		if len(list.paths) > MaxRulePaths {
			return fail("%s config has too many entries (maximum %d)", list.name, MaxRulePaths)
		}
		for _, p := range list.paths {
			if strings.Contains(p, "$") {
				continue // compiled after expansion
			}
			if _, err := CompileGlob(p); err != nil {
				return fail("%s %v", list.name, err)
			}
		}
	}
	for _, v := range spec.Variables {
		if v.Key == "" {
			return fail("variables config uses invalid data keys: (empty)")
		}
	}
	r.Variables = spec.Variables
	r.changesGlobs = compileFixed(spec.Changes)
	r.existsGlobs = compileFixed(spec.Exists)
	r.compiledPaths = true
	return r, nil
}

// NewWorkflowRule is NewRule for `workflow: rules`, where when is always
// or never and the job-only keys are refused.
func NewWorkflowRule(spec RuleSpec) (Rule, error) {
	switch spec.When {
	case "", WhenAlways, WhenNever:
	default:
		return Rule{}, &RuleError{Message: "when unknown value: " + shorten(spec.When)}
	}
	if spec.AllowFailure != nil || spec.StartIn != "" {
		return Rule{}, &RuleError{Message: "config contains unknown keys: allow_failure, start_in"}
	}
	return NewRule(spec)
}

// compileFixed compiles the globs of paths, or returns nil when one holds
// a variable and must be expanded at each evaluation.
func compileFixed(paths []string) []*Glob {
	out := make([]*Glob, 0, len(paths))
	for _, p := range paths {
		if strings.Contains(p, "$") {
			return nil
		}
		g, err := CompileGlob(p)
		if err != nil {
			return nil
		}
		out = append(out, g)
	}
	return out
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Evaluate returns the first rule that matches, as GitLab reads `rules:`.
// No match means the job is not added to the pipeline; a match whose When
// is never means the same, and the caller reads the rest (when,
// allow_failure, variables, start_in) off the rule.
func Evaluate(rules []Rule, ctx RuleContext) (*Rule, bool) {
	for i := range rules {
		if rules[i].Matches(ctx) {
			return &rules[i], true
		}
	}
	return nil, false
}

// Matches reports whether every clause of r holds in ctx.
func (r *Rule) Matches(ctx RuleContext) bool {
	if r.If != nil && !r.If.Eval(ctx.Lookup) {
		return false
	}
	if r.Changes != nil && !r.changesHold(ctx) {
		return false
	}
	if (r.existsSet || r.Exists != nil) && !r.existsHolds(ctx) {
		return false
	}
	return true
}

func (r *Rule) changesHold(ctx RuleContext) bool {
	if ctx.Changed == nil {
		return true
	}
	changed, known := ctx.Changed(r.Changes.CompareTo)
	if !known {
		return true
	}
	globs := r.globs(r.Changes.Paths, r.changesGlobs, ctx.Lookup)
	for _, path := range changed {
		for _, g := range globs {
			if g.Match(path) {
				return true
			}
		}
	}
	return false
}

func (r *Rule) existsHolds(ctx RuleContext) bool {
	if ctx.FileExists == nil {
		return false
	}
	for _, g := range r.globs(r.Exists, r.existsGlobs, ctx.Lookup) {
		if ctx.FileExists(g) {
			return true
		}
	}
	return false
}

// globs returns the compiled globs of paths, compiling (after expanding
// variables) those NewRule could not. A path that does not compile
// matches nothing.
func (r *Rule) globs(paths []string, compiled []*Glob, lookup Lookup) []*Glob {
	if r.compiledPaths && compiled != nil {
		return compiled
	}
	out := make([]*Glob, 0, len(paths))
	for _, p := range paths {
		if g, err := CompileGlob(Expand(p, lookup)); err == nil {
			out = append(out, g)
		}
	}
	return out
}

// Expand replaces $VAR and ${VAR} in s by their values (nothing for an
// undefined one); `$$` is a literal dollar. Used for the paths of
// `changes` and `exists`.
func Expand(s string, lookup Lookup) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		j := i + 1
		braced := j < len(s) && s[j] == '{'
		if braced {
			j++
		}
		start := j
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if start == j || braced && (j >= len(s) || s[j] != '}') {
			b.WriteByte('$')
			i++
			continue
		}
		if lookup != nil {
			if v, ok := lookup(s[start:j]); ok {
				b.WriteString(v)
			}
		}
		if braced {
			j++
		}
		i = j
	}
	return b.String()
}

// JobOutcome is what `rules:` decide for a job.
type JobOutcome struct {
	Included     bool
	When         string // on_success when the rule says nothing
	AllowFailure *bool  // nil: the job's own
	Variables    []Variable
	StartIn      string
}

// DecideJob applies rules to a job: the first matching rule decides, and
// no match or `when: never` leaves the job out. A job without rules is
// the caller's (only/except) business; DecideJob with none includes it.
func DecideJob(rules []Rule, ctx RuleContext) JobOutcome {
	if len(rules) == 0 {
		return JobOutcome{Included: true, When: WhenOnSuccess}
	}
	r, ok := Evaluate(rules, ctx)
	if !ok || r.When == WhenNever {
		return JobOutcome{}
	}
	when := r.When
	if when == "" {
		when = WhenOnSuccess
	}
	return JobOutcome{Included: true, When: when, AllowFailure: r.AllowFailure, Variables: r.Variables, StartIn: r.StartIn}
}

// WorkflowDecision is what `workflow: rules` decide for a pipeline.
type WorkflowDecision struct {
	Create bool
	// Variables of the matched rule, which every job of the pipeline
	// receives (above the file's global variables).
	Variables []Variable
	// Rule is the matched rule; nil when there are no rules or none
	// matched.
	Rule *Rule
}

// ErrWorkflowFiltered is the yaml error of a pipeline that workflow rules
// did not create, in GitLab's words.
var ErrWorkflowFiltered = errors.New("Pipeline filtered out by workflow rules.")

// EvaluateWorkflow applies `workflow: rules`: no rules creates the
// pipeline; otherwise the first matching rule decides, `when: never` (or
// no match at all) creates none.
func EvaluateWorkflow(rules []Rule, ctx RuleContext) WorkflowDecision {
	if len(rules) == 0 {
		return WorkflowDecision{Create: true}
	}
	r, ok := Evaluate(rules, ctx)
	if !ok || r.When == WhenNever {
		return WorkflowDecision{Rule: r}
	}
	return WorkflowDecision{Create: true, Variables: r.Variables, Rule: r}
}

// ChangesKnown says whether a pipeline has changed paths to test
// `changes` against, as GitLab decides: a push of a branch that existed
// before (a before-SHA that is not all zeros) compares with its previous
// head, and a merge request pipeline with its target; a new branch, a tag,
// a schedule, a pipeline run from the web, the API or a trigger has no
// push to compare with, and there `changes` holds.
func ChangesKnown(source, beforeSHA string, isTag bool) bool {
	switch {
	case source == "merge_request_event":
		return true
	case source != "push" || isTag:
		return false
	}
	return beforeSHA != "" && strings.Trim(beforeSHA, "0") != ""
}
