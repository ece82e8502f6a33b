package pipeline

import (
	"strings"
	"time"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// This file reads `rules:` (a job's) and `workflow:` (the pipeline's) into
// ciexpr rules, and applies them when a pipeline's jobs are chosen
// (JobsFor, Config.Workflow). The rules themselves, their expression
// language and globs, are package ciexpr's.

// maxRulesNesting is how deep `rules:` lists may nest (lists of rules
// inside rules, as `!reference` and anchors make them), GitLab's bound.
const maxRulesNesting = 10

// ruleKeys are the keys a job's rule accepts; workflowRuleKeys a workflow
// rule's.
var (
	ruleKeys         = []string{"if", "changes", "exists", "when", "start_in", "allow_failure", "variables", "needs", "interruptible", "auto_cancel"}
	workflowRuleKeys = []string{"if", "changes", "exists", "when", "variables", "auto_cancel"}
)

// Workflow is the `workflow:` keyword: the rules that decide whether a
// pipeline is created at all, and the pipeline's name.
type Workflow struct {
	Rules []ciexpr.Rule
	// Name is `workflow: name`, variables not expanded.
	Name string
	// AutoCancelOnNewCommit is `auto_cancel: on_new_commit` (conservative,
	// interruptible or none; empty when not written).
	AutoCancelOnNewCommit string
}

// rulesOf reads a job's `rules:`: a list of rule hashes, lists nested up
// to maxRulesNesting levels flattened. loc is "jobs:name".
func (p *parser) rulesOf(v *value, loc string, workflow bool) []ciexpr.Rule {
	loc = at(loc, "rules")
	if v.kind != kindSeq {
		p.errorf("%s config should be an array", loc)
		return nil
	}
	var items []*value
	if !flattenRules(v, 0, &items) {
		p.errorf("%s config should be an array of hashes nested at most %d levels", loc, maxRulesNesting)
		return nil
	}
	out := make([]ciexpr.Rule, 0, len(items))
	for _, item := range items {
		r, ok := p.rule(item, at(loc, "rule"), workflow)
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func flattenRules(v *value, depth int, out *[]*value) bool {
	if depth > maxRulesNesting {
		return false
	}
	for _, item := range v.items {
		if item != nil && item.kind == kindSeq {
			if !flattenRules(item, depth+1, out) {
				return false
			}
			continue
		}
		*out = append(*out, item)
	}
	return true
}

// rule reads one rule hash; loc is "jobs:name:rules:rule".
func (p *parser) rule(v *value, loc string, workflow bool) (ciexpr.Rule, bool) {
	if v.isNull() || v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return ciexpr.Rule{}, false
	}
	if r, ok := p.rules[v]; ok && !workflow {
		return r, true
	}
	r, ok := p.readRule(v, loc, workflow)
	if ok && !workflow {
		if p.rules == nil {
			p.rules = map[*value]ciexpr.Rule{}
		}
		p.rules[v] = r
	}
	return r, ok
}

func (p *parser) readRule(v *value, loc string, workflow bool) (ciexpr.Rule, bool) {
	before := len(p.errs)
	keys := ruleKeys
	if workflow {
		keys = workflowRuleKeys
	}
	p.unknownKeys(v, loc, keys...)
	var spec ciexpr.RuleSpec
	if x := v.get("if"); !x.isNull() {
		if !x.isString() {
			p.errorf("%s if should be a string", loc)
		} else {
			spec.If = x.text
		}
	}
	if x := v.get("changes"); !x.isNull() {
		paths, ok := stringItems(x)
		if !ok && x.kind == kindMap {
			p.unknownKeys(x, at(loc, "changes"), "paths", "compare_to")
			paths, ok = stringItems(x.get("paths"))
			if ok && paths == nil {
				paths = []string{}
			}
			if c := x.get("compare_to"); !c.isNull() {
				if !c.isString() || c.text == "" {
					p.errorf("%s compare_to should be a string", at(loc, "changes"))
				}
				spec.CompareTo = c.text
			}
		}
		if !ok {
			p.errorf("%s changes should be an array of strings", loc)
		}
		if paths == nil {
			paths = []string{}
		}
		spec.Changes = paths
	}
	if x := v.get("exists"); !x.isNull() {
		paths, ok := stringItems(x)
		if !ok && x.kind == kindMap {
			if !x.get("project").isNull() {
				p.errorf("%s exists:project is not supported yet", loc)
			}
			p.unknownKeys(x, at(loc, "exists"), "paths", "project", "ref")
			paths, ok = stringItems(x.get("paths"))
		}
		if !ok {
			p.errorf("%s exists should be an array of strings", loc)
		}
		if paths == nil {
			paths = []string{}
		}
		spec.Exists = paths
	}
	if x := v.get("when"); !x.isNull() {
		if !x.isString() {
			p.errorf("%s when should be a string", loc)
		} else {
			spec.When = x.text
		}
	}
	if x := v.get("start_in"); !x.isNull() {
		d, never, err := ParseExpireIn(x.text)
		if x.kind != kindScalar || err != nil || never || d > 7*24*time.Hour {
			p.errorf("%s start_in should be a duration of up to one week", loc)
		} else {
			spec.StartIn = x.text
		}
	}
	if x := v.get("allow_failure"); !x.isNull() {
		b, ok := boolValue(x)
		if !ok {
			p.errorf("%s allow_failure should be a boolean value", loc)
		}
		spec.AllowFailure = &b
	}
	if x := v.get("variables"); !x.isNull() {
		for _, vr := range p.variables(x, at(loc, "variables"), false) {
			spec.Variables = append(spec.Variables, ciexpr.Variable{Key: vr.Key, Value: vr.Value})
		}
	}
	if x := v.get("needs"); !x.isNull() {
		p.errorf("%s needs is not supported yet", loc)
	}
	if x := v.get("interruptible"); !x.isNull() {
		if _, ok := boolValue(x); !ok {
			p.errorf("%s interruptible should be a boolean value", loc)
		}
	}
	if x := v.get("auto_cancel"); !x.isNull() && x.kind != kindMap {
		p.errorf("%s auto_cancel config should be a hash", loc)
	}
	if len(p.errs) > before {
		return ciexpr.Rule{}, false
	}
	newRule := ciexpr.NewRule
	if workflow {
		newRule = ciexpr.NewWorkflowRule
	}
	r, err := newRule(spec)
	if err != nil {
		p.errorf("%s %v", loc, err)
		return ciexpr.Rule{}, false
	}
	if x := v.get("interruptible"); !x.isNull() {
		b, _ := boolValue(x)
		r.Interruptible = &b
	}
	return r, true
}

// jobRules reads a job's `rules:` into job, after the keywords they may
// not be used with are refused.
func (p *parser) jobRules(job *Job, v *value, loc string) {
	var clash []string
	for _, key := range []string{"only", "except", "start_in"} {
		if !v.get(key).isNull() {
			clash = append(clash, key)
		}
	}
	if len(clash) > 0 {
		p.errorf("%s config key may not be used with `rules`: %s", loc, strings.Join(clash, ", "))
		return
	}
	job.Rules = p.rulesOf(v.get("rules"), loc, false)
	job.HasRules = true
}

// workflow reads the top-level `workflow:`.
func (p *parser) workflow(v *value) *Workflow {
	if v.kind != kindMap {
		p.errorf("workflow config should be a hash")
		return nil
	}
	p.unknownKeys(v, "workflow", "rules", "name", "auto_cancel")
	w := &Workflow{}
	if r := v.get("rules"); !r.isNull() {
		w.Rules = p.rulesOf(r, "workflow", true)
	}
	if n := v.get("name"); !n.isNull() {
		if !n.isString() || len(n.text) > 255 {
			p.errorf("workflow name should be a string of at most 255 characters")
		}
		w.Name = n.text
	}
	if a := v.get("auto_cancel"); !a.isNull() {
		if a.kind != kindMap {
			p.errorf("workflow:auto_cancel config should be a hash")
		} else {
			p.unknownKeys(a, "workflow:auto_cancel", "on_new_commit", "on_job_failure")
			if c := a.get("on_new_commit"); !c.isNull() {
				switch c.text {
				case "conservative", "interruptible", "none":
					w.AutoCancelOnNewCommit = c.text
				default:
					p.errorf("workflow:auto_cancel on new commit must be one of: conservative, interruptible, none")
				}
			}
			if f := a.get("on_job_failure"); !f.isNull() && f.text != "none" && f.text != "all" {
				p.errorf("workflow:auto_cancel on job failure must be one of: none, all")
			}
		}
	}
	return w
}

// ruleContext is the context rules of job are evaluated in for ref: the
// pipeline's variables over the job's own (YAML) ones, and the
// pipeline's changes and files.
func ruleContext(ref RefInfo, vars []Variable) ciexpr.RuleContext {
	return ciexpr.RuleContext{
		Lookup: func(name string) (string, bool) {
			if ref.Variables != nil {
				if v, ok := ref.Variables(name); ok {
					return v, true
				}
			}
			for i := len(vars) - 1; i >= 0; i-- {
				if vars[i].Key == name {
					return vars[i].Value, true
				}
			}
			return "", false
		},
		Changed:    ref.Changed,
		FileExists: ref.FileExists,
	}
}

// WorkflowFor applies `workflow: rules` for ref: whether the pipeline is
// created, and the variables its jobs then receive. Expressions see the
// pipeline's variables over the file's global ones.
func (c *Config) WorkflowFor(ref RefInfo) ciexpr.WorkflowDecision {
	if c.Workflow == nil {
		return ciexpr.WorkflowDecision{Create: true}
	}
	return ciexpr.EvaluateWorkflow(c.Workflow.Rules, ruleContext(ref, c.Variables))
}

// applyRules decides a job with `rules:` for ref: false leaves it out;
// otherwise job holds the matched rule's when, allow_failure, start_in
// and variables (on a copy of the shared slices).
func applyRules(job *Job, ref RefInfo) bool {
	r, ok := ciexpr.Evaluate(job.Rules, ruleContext(ref, job.Variables))
	if !ok || r.When == ciexpr.WhenNever {
		return false
	}
	switch r.When {
	case "":
		// The job's own `when` is the default of its rules.
	case ciexpr.WhenDelayed:
		// Gated as on_success, then scheduled (see Job.StartIn).
		job.When = cistatus.WhenOnSuccess
		job.StartIn = r.StartIn
		job.StartAfter, _, _ = ParseExpireIn(r.StartIn)
	default:
		job.When = cistatus.When(r.When)
	}
	if r.AllowFailure != nil {
		job.AllowFailure, job.AllowFailureExitCodes = *r.AllowFailure, nil
	}
	if r.Interruptible != nil {
		job.Interruptible = *r.Interruptible
	}
	if len(r.Variables) > 0 {
		job.Variables = overlayVariables(job.Variables, r.Variables)
	}
	return true
}

// withWorkflowVariables gives job the variables of the workflow rule
// that created the pipeline: they replace the file's global variables of
// the same name, not the job's own.
func withWorkflowVariables(job *Job, vars []ciexpr.Variable) {
	var over []ciexpr.Variable
	for _, v := range vars {
		own := false
		for _, k := range job.ownVariables {
			if k == v.Key {
				own = true
				break
			}
		}
		if !own {
			over = append(over, v)
		}
	}
	if len(over) > 0 {
		job.Variables = overlayVariables(job.Variables, over)
	}
}

// overlayVariables is vars with over's keys set (replacing in place, new
// ones appended), in a new slice: jobs share their variables.
func overlayVariables(vars []Variable, over []ciexpr.Variable) []Variable {
	out := make([]Variable, len(vars), len(vars)+len(over))
	copy(out, vars)
	for _, o := range over {
		replaced := false
		for i := range out {
			if out[i].Key == o.Key {
				out[i] = Variable{Key: o.Key, Value: o.Value, Public: true}
				replaced = true
			}
		}
		if !replaced {
			out = append(out, Variable{Key: o.Key, Value: o.Value, Public: true})
		}
	}
	return out
}
