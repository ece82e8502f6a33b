// Package ciexpr is the CI/CD expression language of `rules: if` and
// `only/except: variables`, and the evaluation of `rules:` (if, changes,
// exists) and `workflow: rules` over a parsed form.
//
// An expression is compiled once (Compile) into a small tree and evaluated
// many times (Expr.Eval) against a lookup of variables. The language is
// GitLab's: `$VAR` and `${VAR}`, single- or double-quoted strings without
// escapes, `null`, `==`, `!=`, `=~`, `!~` with `/pattern/flags` literals
// (flag i, and m for "dot matches newline" as in Ruby), `&&` binding
// tighter than `||`, parentheses, and a bare operand meaning "set and not
// empty". Undefined variables are null: `$X == null` holds for an unset X,
// `$X == ""` only for a set, empty one, and `=~` never matches null.
//
// Regular expressions are Go's regexp (RE2): linear in the input, no
// backtracking, so a hostile pattern cannot stall the server; constructs
// RE2 lacks (look-around, back references) are refused when compiling.
// Pattern literals compile once per Expr; a pattern held in a variable (the
// right side of `=~`) compiles once per distinct value, in a small cache of
// its own per Expr.
//
// Everything is bounded: an expression's length (MaxExprBytes), tokens
// (MaxTokens) and parenthesis depth (MaxDepth); glob patterns' length and
// brace depth. Errors read as GitLab's ("invalid expression syntax") with
// the reason after it for the lint page.
//
// Rules are pure: Evaluate and EvaluateWorkflow take the rules and a
// RuleContext (variables, changed paths or "unknown", a file-exists test)
// and do no I/O. The YAML of `rules:` is read by the pipeline package,
// which builds rules with NewRule from plain Go values. Globs of `changes`
// and `exists` follow Ruby's File.fnmatch with FNM_PATHNAME, FNM_DOTMATCH
// and FNM_EXTGLOB, which is what GitLab uses, translated to RE2.
//
// The package imports the standard library only.
package ciexpr
