package pipeline

// Trigger jobs ("bridges", as GitLab calls them): a job with `trigger`
// and no `script` runs no command; the server makes a downstream pipeline
// for it, a child of the same project from local files (`trigger:
// include`) or the pipeline of another project's branch (`trigger:
// project`). The parser only reads the keyword; the child's files are
// read when its pipeline is made (ChildConfig).

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
)

// Trigger is a bridge job's `trigger:`. Include (local paths of the same
// repository) makes a child pipeline; Project (a full path) a
// multi-project one, of Branch or the project's default branch.
type Trigger struct {
	Include []string `json:"include,omitempty"`
	Project string   `json:"project,omitempty"`
	Branch  string   `json:"branch,omitempty"`
	// Depend (`strategy: depend`): the bridge mirrors the downstream
	// pipeline's status instead of succeeding once it is made.
	Depend bool `json:"depend,omitempty"`
	// ForwardYAMLVariables passes the bridge's YAML variables (the
	// default); ForwardPipelineVariables the variables its own pipeline
	// was run with (a trigger's, a schedule's, an upstream's).
	ForwardYAMLVariables     bool `json:"forward_yaml_variables"`
	ForwardPipelineVariables bool `json:"forward_pipeline_variables,omitempty"`
}

// Child reports whether the trigger makes a child pipeline (else a
// pipeline of another project).
func (t *Trigger) Child() bool { return len(t.Include) > 0 }

// Bridge reports whether the job is a trigger job, which no executor or
// runner ever runs.
func (j *Job) Bridge() bool { return j.Trigger != nil }

// MaxTriggerIncludes is how many files `trigger: include` may name, as
// GitLab allows.
const MaxTriggerIncludes = 3

// bridgeKeys are the keywords a trigger job accepts and Fennec runs.
var bridgeKeys = map[string]bool{
	"trigger": true, "stage": true, "only": true, "except": true, "variables": true,
	"inherit": true, "allow_failure": true, "when": true, "extends": true, "rules": true,
	"needs": true,
}

// bridgeUnsupportedKeys are keywords GitLab accepts on a trigger job that
// Fennec does not run on one yet: refused by name.
var bridgeUnsupportedKeys = map[string]bool{
	"resource_group": true, "parallel": true,
}

// bridgeWhens are the `when` values of a trigger job.
const bridgeWhens = "on_success, on_failure, always, manual"

// isBridge says whether a job's mapping is a trigger job: it has
// `trigger` and no `script` (with both, GitLab reads a job, which then
// does not know `trigger`).
func isBridge(v *value) bool {
	if v == nil || v.kind != kindMap {
		return false
	}
	hasTrigger, hasScript := false, false
	for _, e := range v.entries {
		hasTrigger = hasTrigger || e.key == "trigger"
		hasScript = hasScript || e.key == "script"
	}
	return hasTrigger && !hasScript
}

// bridge reads a trigger job.
func (p *parser) bridge(name string, v *value, g *globals) (Job, bool) {
	loc := "jobs:" + name
	before := len(p.errs)
	var unknown []string
	for _, e := range v.entries {
		switch {
		case bridgeKeys[e.key]:
		case bridgeUnsupportedKeys[e.key]:
			p.errorf("%s %s is not supported yet", loc, e.key)
		default:
			unknown = append(unknown, e.key)
		}
	}
	if len(unknown) > 0 {
		p.errorf("%s config contains unknown keys: %s", loc, strings.Join(unknown, ", "))
	}
	job := Job{Name: name, When: cistatus.WhenOnSuccess, Stage: DefaultStage}
	job.Trigger = p.trigger(v.get("trigger"), at(loc, "trigger"))
	if s := v.get("stage"); !s.isNull() {
		if s.isString() {
			job.Stage = s.text
		} else {
			p.errorf("%s config should be a string", at(loc, "stage"))
		}
	}
	if w := v.get("when"); !w.isNull() {
		when := cistatus.When(w.text)
		if !w.isString() || !when.Valid() || when == "delayed" {
			p.errorf("%s when should be one of: %s", loc, bridgeWhens)
		}
		job.When = when
	}
	job.AllowFailure = job.When == cistatus.WhenManual
	if a := v.get("allow_failure"); !a.isNull() {
		b, ok := boolValue(a)
		if !ok {
			p.errorf("%s allow failure should be a boolean value", loc)
		}
		job.AllowFailure = b
	}
	for _, key := range []string{"only", "except"} {
		if pol := v.get(key); !pol.isNull() {
			p.policy(&job, key, pol, at(loc, key))
		}
	}
	if r := v.get("rules"); r != nil {
		p.jobRules(&job, v, loc)
	}
	if n := v.get("needs"); !n.isNull() {
		job.Needs = p.needs(n, name, at(loc, "needs"))
	}
	p.bridgeVariables(&job, v, loc, g)
	return job, len(p.errs) == before
}

// bridgeVariables sets a trigger job's YAML variables: the global ones
// it inherits with its own on top, as a job's.
func (p *parser) bridgeVariables(job *Job, v *value, loc string, g *globals) {
	inh := p.inherit(v.get("inherit"), at(loc, "inherit"))
	globalVars := g.variables
	if !inh.allVariables {
		globalVars = nil
		for _, gv := range g.variables {
			if inh.variables[gv.Key] {
				globalVars = append(globalVars, gv)
			}
		}
	}
	job.Variables = globalVars
	vars := v.get("variables")
	if vars.isNull() {
		return
	}
	own := p.variables(vars, at(loc, "variables"), false)
	for _, o := range own {
		job.ownVariables = append(job.ownVariables, o.Key)
	}
	p.mergedVariables += len(globalVars) + len(own)
	if p.mergedVariables > maxMergedVariables {
		if p.mergedVariables-len(globalVars)-len(own) <= maxMergedVariables {
			p.errorf("The CI configuration is too large: its jobs hold more than %d variables in all", maxMergedVariables)
		}
		return
	}
	job.Variables = mergeVariables(globalVars, indexVariables(globalVars), own)
}

// trigger reads `trigger:` in its forms: a project's path; a mapping
// with `project` (and `branch`, `strategy`, `forward`); or one with
// `include` (and `strategy`, `forward`).
func (p *parser) trigger(v *value, loc string) *Trigger {
	t := &Trigger{ForwardYAMLVariables: true}
	switch {
	case v.isNull() || (v.kind == kindScalar && strings.TrimSpace(v.text) == ""):
		p.errorf("%s config can't be blank", loc)
	case v.kind == kindScalar:
		t.Project = v.text
	case v.kind == kindMap && v.get("include") != nil:
		p.unknownKeys(v, loc, "strategy", "include", "forward")
		t.Include = p.triggerIncludes(v.get("include"), at(loc, "include"))
		p.triggerOptions(t, v, loc)
	case v.kind == kindMap:
		p.unknownKeys(v, loc, "project", "branch", "strategy", "forward")
		switch pr := v.get("project"); {
		case pr.isNull() || (pr.kind == kindScalar && strings.TrimSpace(pr.text) == ""):
			p.errorf("%s project can't be blank", loc)
		case !pr.isString():
			p.errorf("%s project should be a string", loc)
		default:
			t.Project = pr.text
		}
		if b := v.get("branch"); !b.isNull() {
			if b.isString() {
				t.Branch = b.text
			} else {
				p.errorf("%s branch should be a string", loc)
			}
		}
		p.triggerOptions(t, v, loc)
	default:
		p.errorf("%s has to be either a string or a hash", loc)
	}
	return t
}

// triggerOptions reads `strategy` and `forward`, common to both forms.
func (p *parser) triggerOptions(t *Trigger, v *value, loc string) {
	if s := v.get("strategy"); !s.isNull() {
		switch {
		case !s.isString():
			p.errorf("%s strategy should be a string", loc)
		case s.text != "depend":
			p.errorf("%s strategy should be depend", loc)
		default:
			t.Depend = true
		}
	}
	f := v.get("forward")
	if f.isNull() {
		return
	}
	floc := at(loc, "forward")
	if f.kind != kindMap {
		p.errorf("%s config should be a hash", floc)
		return
	}
	p.unknownKeys(f, floc, "yaml_variables", "pipeline_variables")
	for _, o := range []struct {
		key string
		dst *bool
	}{{"yaml_variables", &t.ForwardYAMLVariables}, {"pipeline_variables", &t.ForwardPipelineVariables}} {
		x := f.get(o.key)
		if x.isNull() {
			continue
		}
		b, ok := boolValue(x)
		if !ok {
			p.errorf("%s %s should be a boolean value", floc, o.key)
			continue
		}
		*o.dst = b
	}
}

// triggerIncludes reads `trigger: include`: a local path, or a list of
// at most MaxTriggerIncludes local paths or `{local: path}`. The other
// kinds of include GitLab reads for a child (project, remote, template,
// artifact, component) are refused by name.
func (p *parser) triggerIncludes(v *value, loc string) []string {
	items := []*value{v}
	switch {
	case v.kind == kindSeq:
		items = v.items
		if len(items) > MaxTriggerIncludes {
			p.errorf("%s config is too long (maximum is %d)", loc, MaxTriggerIncludes)
			return nil
		}
	case v.kind != kindScalar && v.kind != kindMap:
		p.errorf("%s config should be an array or a string", loc)
		return nil
	}
	if len(items) == 0 {
		p.errorf("%s config can't be blank", loc)
		return nil
	}
	var out []string
	for _, item := range items {
		path, ok := p.triggerInclude(item, loc)
		if !ok {
			return nil
		}
		out = append(out, path)
	}
	return out
}

// triggerInclude reads one entry of `trigger: include`.
func (p *parser) triggerInclude(item *value, loc string) (string, bool) {
	switch {
	case item.isString() && (strings.HasPrefix(item.text, "https://") || strings.HasPrefix(item.text, "http://")):
		p.errorf("%s remote is not supported yet", loc)
	case item.isString() && strings.TrimSpace(item.text) == "":
		p.errorf("%s config can't be blank", loc)
	case item.isString():
		return item.text, true
	case item.kind == kindMap:
		for _, e := range item.entries {
			if e.key != "local" {
				p.errorf("%s %s is not supported yet", loc, e.key)
				return "", false
			}
		}
		l := item.get("local")
		if l.isString() && strings.TrimSpace(l.text) != "" {
			return l.text, true
		}
		p.errorf("%s local should be a string", loc)
	default:
		p.errorf("%s config should be a hash or a string", loc)
	}
	return "", false
}

// ChildConfig is the CI file of a child pipeline that includes paths:
// read with ParseFiles, its files are read, bounded and worded as
// `include: local` is.
func ChildConfig(paths []string) []byte {
	type local struct {
		Local string `yaml:"local"`
	}
	doc := struct {
		Include []local `yaml:"include"`
	}{}
	for _, p := range paths {
		doc.Include = append(doc.Include, local{p})
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil // strings always marshal
	}
	return out
}
