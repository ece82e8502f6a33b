package pipeline

import (
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// IncludeRules is implemented by a Files that knows the pipeline its
// configuration is read for: `include: rules` are evaluated against the
// context it gives (the pipeline's variables, changes and files). Without
// it (a file linted alone), an `if` sees no variable, changes hold and no
// file exists.
type IncludeRules interface {
	IncludeRuleContext() ciexpr.RuleContext
}

// includeWanted applies an include entry's `rules:` (if, changes, exists,
// when: always or never, as workflow rules take): false when none
// matches or the match says never. It returns the entry without its
// rules, for the readers of the entry's other keys.
func (in *includer) includeWanted(e includeEntry) (includeEntry, bool, error) {
	if e.extra == nil {
		return e, true, nil
	}
	v := e.extra.get("rules")
	if v == nil {
		return e, true, nil
	}
	p := &parser{}
	rules := p.rulesOf(v, "include", true)
	if len(p.errs) > 0 {
		return e, false, configError(p.errs[0])
	}
	rest := &value{kind: kindMap, tag: e.extra.tag, line: e.extra.line, column: e.extra.column, size: 1}
	for _, x := range e.extra.entries {
		if x.key != "rules" {
			rest.entries = append(rest.entries, x)
			rest.size += 1 + x.val.size
		}
	}
	e.extra = rest
	var ctx ciexpr.RuleContext
	if r, ok := in.root.(IncludeRules); ok {
		ctx = r.IncludeRuleContext()
	}
	r, ok := ciexpr.Evaluate(rules, ctx)
	return e, ok && r.When != ciexpr.WhenNever, nil
}
