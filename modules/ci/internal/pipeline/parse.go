package pipeline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
)

// MaxConfigBytes is the largest `.gitlab-ci.yml` Parse accepts. GitLab
// later settled on 1 MiB as its own limit; real configurations are a few
// kilobytes.
const MaxConfigBytes = 1 << 20

// globalKeys are the reserved top-level keywords, in the order GitLab 9.x
// validates them; every other top-level key is a job.
var globalKeys = []string{
	"before_script", "image", "services", "after_script",
	"variables", "stages", "types", "cache",
}

// jobKeys are the keywords a job accepts in 9.x.
var jobKeys = map[string]bool{
	"tags": true, "script": true, "only": true, "except": true, "type": true,
	"image": true, "services": true, "allow_failure": true, "stage": true,
	"when": true, "artifacts": true, "cache": true, "dependencies": true,
	"before_script": true, "after_script": true, "variables": true,
	"environment": true, "coverage": true, "retry": true,
}

// Parse parses and validates a `.gitlab-ci.yml`. An invalid document gives a
// *ConfigError (errors.Is(err, ErrInvalidConfig)) worded as GitLab 9.x words
// it; Parse never panics.
func Parse(src []byte) (cfg *Config, err error) {
	if len(src) > MaxConfigBytes {
		return nil, configError(fmt.Sprintf(
			"The CI configuration is too large: %d bytes, the limit is %d bytes", len(src), MaxConfigBytes))
	}
	// yaml.v3 is well fuzzed, but a pipeline must never take the server
	// down with it: a panic in the library becomes a configuration error.
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, configError(fmt.Sprintf("(<unknown>): the configuration could not be read (internal error: %v)", r))
		}
	}()
	root, err := parseYAML(src)
	if err != nil {
		return nil, err
	}
	if root.kind != kindMap {
		return nil, configError("Invalid configuration format")
	}
	var p parser
	cfg = p.config(root)
	if len(p.errs) > 0 {
		return nil, &ConfigError{Messages: p.errs}
	}
	return cfg, nil
}

func parseYAML(src []byte) (*value, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, syntaxError(err)
	}
	if doc.Kind == 0 { // an empty document
		return &value{kind: kindNull}, nil
	}
	return newConverter().convert(&doc, 0)
}

var yamlLinePrefix = regexp.MustCompile(`^line (\d+): `)

// syntaxError rewords yaml.v3's "yaml: line 3: <problem>" in the shape of
// GitLab's Psych errors, "(<unknown>): <problem> at line 3".
func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLinePrefix.FindStringSubmatch(msg); m != nil {
		msg = strings.TrimPrefix(msg, m[0]) + " at line " + m[1]
	}
	return configError("(<unknown>): " + msg)
}

// maxMergedVariables bounds the variables copied into jobs that add their
// own to the global ones. Without it, a 1 MiB file declaring thousands of
// global variables and thousands of jobs with one variable each would make
// Parse build billions of them.
const maxMergedVariables = 1_000_000

// parser collects validation errors in the order GitLab would report them.
type parser struct {
	errs            []string
	mergedVariables int
}

func (p *parser) errorf(format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}

// at joins an entry's location the way GitLab names it: "jobs:rspec:script".
func at(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + ":" + key
}

// globals are the top-level keywords jobs inherit.
type globals struct {
	beforeScript, afterScript []string
	image                     *Image
	services                  []Service
	variables                 []Variable
	variableIndex             map[string]int // key -> position in variables, built on first use
	cache                     *Cache
}

func (p *parser) config(root *value) *Config {
	cfg := &Config{Stages: DefaultStages}
	var g globals
	for _, key := range globalKeys {
		v := root.get(key)
		if v.isNull() {
			continue
		}
		switch key {
		case "before_script":
			g.beforeScript, _ = p.stringList(v, key+" config")
		case "after_script":
			g.afterScript, _ = p.stringList(v, key+" config")
		case "image":
			g.image = p.image(v, key)
		case "services":
			g.services, _ = p.services(v, key)
		case "variables":
			g.variables = p.variables(v, key)
		case "stages", "types":
			// `types` is the deprecated spelling; `stages` wins when both are set.
			if key == "types" && !root.get("stages").isNull() {
				continue
			}
			if stages, ok := p.stringList(v, key+" config"); ok {
				cfg.Stages = stages
			}
		case "cache":
			g.cache = p.cache(v, key)
		}
	}

	reserved := make(map[string]bool, len(globalKeys))
	for _, k := range globalKeys {
		reserved[k] = true
	}
	visible := 0
	for _, e := range root.entries {
		if !reserved[e.key] && !strings.HasPrefix(e.key, ".") {
			visible++
		}
	}
	if visible == 0 {
		p.errorf("jobs config should contain at least one visible job")
	}
	for _, e := range root.entries {
		if reserved[e.key] {
			continue
		}
		if strings.HasPrefix(e.key, ".") {
			// Hidden jobs are templates for anchors; GitLab only asks that
			// they are not empty.
			if blank(e.val) {
				p.errorf("jobs:%s config can't be blank", e.key)
			}
			continue
		}
		if job, ok := p.job(e.key, e.val, &g); ok {
			cfg.Jobs = append(cfg.Jobs, job)
		}
	}
	if len(p.errs) > 0 {
		return nil
	}
	p.crossCheck(cfg)
	return cfg
}

// blank is Rails' blank?: null, an empty string, list or hash.
func blank(v *value) bool {
	switch {
	case v.isNull():
		return true
	case v.kind == kindScalar:
		return strings.TrimSpace(v.text) == ""
	case v.kind == kindSeq:
		return len(v.items) == 0
	case v.kind == kindMap:
		return len(v.entries) == 0
	}
	return false
}

func (p *parser) job(name string, v *value, g *globals) (Job, bool) {
	loc := "jobs:" + name
	if v.isNull() {
		p.errorf("%s config can't be blank", loc)
		return Job{}, false
	}
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return Job{}, false
	}
	before := len(p.errs)
	var unknown []string
	for _, e := range v.entries {
		if !jobKeys[e.key] {
			unknown = append(unknown, e.key)
		}
	}
	if len(unknown) > 0 {
		p.errorf("%s config contains unknown keys: %s", loc, strings.Join(unknown, ", "))
	}
	if len(v.entries) == 0 {
		p.errorf("%s config can't be blank", loc)
	}
	if name == "" {
		p.errorf("%s name can't be blank", loc)
	}
	if blank(v.get("script")) {
		p.errorf("%s script can't be blank", loc)
	}

	job := Job{Name: name, When: cistatus.WhenOnSuccess}
	if t := v.get("tags"); !t.isNull() {
		job.Tags, _ = p.stringList(t, loc+" tags")
	}
	allowFailureSet := false
	if a := v.get("allow_failure"); !a.isNull() {
		if b, ok := boolValue(a); ok {
			job.AllowFailure, allowFailureSet = b, true
		} else {
			p.errorf("%s allow failure should be a boolean value", loc)
		}
	}
	if r := v.get("retry"); !r.isNull() {
		job.Retry = p.retry(r, loc)
	}
	if w := v.get("when"); !w.isNull() {
		when := cistatus.When(w.text)
		if !w.isString() || !when.Valid() {
			p.errorf("%s when should be on_success, on_failure, always or manual", loc)
		}
		job.When = when
	}
	job.DependsOnAllEarlier = true
	if d := v.get("dependencies"); !d.isNull() {
		job.Dependencies, _ = p.stringList(d, loc+" dependencies")
		job.DependsOnAllEarlier = false
	}

	// The entries of a job, in the order GitLab 9.x declares them.
	job.BeforeScript, job.AfterScript = g.beforeScript, g.afterScript
	if b := v.get("before_script"); !b.isNull() {
		job.BeforeScript, _ = p.stringList(b, at(loc, "before_script")+" config")
	}
	if s := v.get("script"); !s.isNull() {
		job.Script = p.commands(s, at(loc, "script"))
	}
	job.Stage = DefaultStage
	stageKey := "stage"
	if v.get("stage").isNull() && !v.get("type").isNull() {
		stageKey = "type" // the deprecated spelling, used only when stage is unset
	}
	for _, key := range []string{"stage", "type"} {
		s := v.get(key)
		if s.isNull() {
			continue
		}
		if !s.isString() {
			p.errorf("%s config should be a string", at(loc, key))
			continue
		}
		if key == stageKey {
			job.Stage = s.text
		}
	}
	if a := v.get("after_script"); !a.isNull() {
		job.AfterScript, _ = p.stringList(a, at(loc, "after_script")+" config")
	}
	job.Cache = g.cache
	if c := v.get("cache"); !c.isNull() {
		job.Cache = p.cache(c, at(loc, "cache"))
	}
	job.Image = g.image
	if i := v.get("image"); !i.isNull() {
		job.Image = p.image(i, at(loc, "image"))
	}
	job.Services = g.services
	if s := v.get("services"); !s.isNull() {
		job.Services, _ = p.services(s, at(loc, "services"))
	}
	for _, key := range []string{"only", "except"} {
		pol := v.get(key)
		if pol.isNull() {
			continue
		}
		refs := p.policy(pol, at(loc, key))
		if key == "only" {
			job.Only = refs
		} else {
			job.Except = refs
		}
	}
	// Job variables go on top of the global ones; `variables: {}` keeps the
	// globals, as GitLab 9.x's merge does (its documentation claimed
	// otherwise, but the code merged).
	job.Variables = g.variables
	if vars := v.get("variables"); !vars.isNull() {
		own := p.variables(vars, at(loc, "variables"))
		p.mergedVariables += len(g.variables) + len(own)
		if p.mergedVariables <= maxMergedVariables {
			if g.variableIndex == nil {
				g.variableIndex = indexVariables(g.variables)
			}
			job.Variables = mergeVariables(g.variables, g.variableIndex, own)
		} else if p.mergedVariables-len(g.variables)-len(own) <= maxMergedVariables {
			p.errorf("The CI configuration is too large: its jobs hold more than %d variables in all", maxMergedVariables)
		}
	}
	if a := v.get("artifacts"); !a.isNull() {
		job.Artifacts = p.artifacts(a, at(loc, "artifacts"))
	}
	if e := v.get("environment"); !e.isNull() {
		job.Environment = p.environment(e, at(loc, "environment"))
	}
	if c := v.get("coverage"); !c.isNull() {
		job.Coverage = p.coverage(c, at(loc, "coverage"))
	}

	if !allowFailureSet {
		// Manual jobs are optional unless they say otherwise (9.0).
		job.AllowFailure = job.When == cistatus.WhenManual
	}
	return job, len(p.errs) == before
}

// crossCheck validates what involves several jobs or the stage list, after
// every job is valid on its own, and resolves stage indexes.
func (p *parser) crossCheck(cfg *Config) {
	stageIndex := make(map[string]int, len(cfg.Stages))
	for i := len(cfg.Stages) - 1; i >= 0; i-- {
		stageIndex[cfg.Stages[i]] = i // the first occurrence wins
	}
	jobs := make(map[string]*Job, len(cfg.Jobs))
	for i := range cfg.Jobs {
		jobs[cfg.Jobs[i].Name] = &cfg.Jobs[i]
	}
	for i := range cfg.Jobs {
		job := &cfg.Jobs[i]
		idx, ok := stageIndex[job.Stage]
		if !ok {
			p.errorf("%s job: stage parameter should be %s", job.Name, strings.Join(cfg.Stages, ", "))
			continue
		}
		job.StageIndex = idx
	}
	if len(p.errs) > 0 {
		return
	}
	for i := range cfg.Jobs {
		job := &cfg.Jobs[i]
		for _, dep := range job.Dependencies {
			other, ok := jobs[dep]
			if !ok {
				p.errorf("%s job: undefined dependency: %s", job.Name, dep)
				continue
			}
			if other.StageIndex >= job.StageIndex {
				p.errorf("%s job: dependency %s is not defined in prior stages", job.Name, dep)
			}
		}
	}
	for i := range cfg.Jobs {
		job := &cfg.Jobs[i]
		if job.Environment == nil || job.Environment.OnStop == "" {
			continue
		}
		stop := job.Environment.OnStop
		other, ok := jobs[stop]
		switch {
		case !ok:
			p.errorf("%s job: on_stop job %s is not defined", job.Name, stop)
		case other.Environment == nil:
			p.errorf("%s job: on_stop job %s does not have environment defined", job.Name, stop)
		case other.Environment.Name != job.Environment.Name:
			p.errorf("%s job: on_stop job %s have different environment name", job.Name, stop)
		case other.Environment.Action != EnvironmentStop:
			p.errorf("%s job: on_stop job %s needs to have action stop defined", job.Name, stop)
		}
	}
}

// stringList reads an array of strings; what names the entry in the error
// ("before_script config", "jobs:rspec tags").
func (p *parser) stringList(v *value, what string) ([]string, bool) {
	out, ok := stringItems(v)
	if !ok {
		p.errorf("%s should be an array of strings", what)
		return nil, false
	}
	return out, true
}

// stringItems returns the items of an array of strings.
func stringItems(v *value) ([]string, bool) {
	if v.kind != kindSeq {
		return nil, false
	}
	out := make([]string, 0, len(v.items))
	for _, item := range v.items {
		if !item.isString() {
			return nil, false
		}
		out = append(out, item.text)
	}
	return out, true
}

// commands reads `script`: a string or an array of strings.
func (p *parser) commands(v *value, loc string) []string {
	if v.isString() {
		return []string{v.text}
	}
	out, ok := stringItems(v)
	if !ok {
		p.errorf("%s config should be an array of strings or a string", loc)
	}
	return out
}

// boolValue reads a boolean. Besides YAML 1.2's true/false it takes the
// YAML 1.1 words (yes, no, on, off) when unquoted, because GitLab's Ruby
// loader reads them as booleans and real configurations use them.
func boolValue(v *value) (bool, bool) {
	if v.kind != kindScalar {
		return false, false
	}
	if v.tag == "!!bool" {
		b, err := strconv.ParseBool(strings.ToLower(v.text))
		return b, err == nil
	}
	if v.tag == "!!str" && v.plain {
		switch strings.ToLower(v.text) {
		case "yes", "on":
			return true, true
		case "no", "off":
			return false, true
		}
	}
	return false, false
}

func (p *parser) retry(v *value, loc string) int {
	if v.kind != kindScalar {
		p.errorf("%s retry is not a number", loc)
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.text))
	if err != nil {
		if _, ferr := strconv.ParseFloat(strings.TrimSpace(v.text), 64); ferr == nil {
			p.errorf("%s retry must be an integer", loc)
		} else {
			p.errorf("%s retry is not a number", loc)
		}
		return 0
	}
	switch {
	case n < 0:
		p.errorf("%s retry must be greater than or equal to 0", loc)
	case n > 2:
		p.errorf("%s retry must be less than or equal to 2", loc)
	}
	return n
}

// variables reads a hash of key value pairs. Values may be strings or
// numbers (kept as written: "1.10" stays "1.10").
func (p *parser) variables(v *value, loc string) []Variable {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash of key value pairs", loc)
		return nil
	}
	out := make([]Variable, 0, len(v.entries))
	for _, e := range v.entries {
		val := e.val
		if val.kind != kindScalar || (val.tag != "!!str" && val.tag != "!!int" && val.tag != "!!float") {
			p.errorf("%s config should be a hash of key value pairs", loc)
			return nil
		}
		out = append(out, Variable{Key: e.key, Value: val.text, Public: true})
	}
	return out
}

// indexVariables maps each key to its position.
func indexVariables(vars []Variable) map[string]int {
	index := make(map[string]int, len(vars))
	for i, v := range vars {
		index[v.Key] = i
	}
	return index
}

// mergeVariables lays top over base (whose keys baseIndex maps to their
// positions): a key of top replaces base's value in place, new keys follow
// in top's order. Keys are unique within base and within top.
func mergeVariables(base []Variable, baseIndex map[string]int, top []Variable) []Variable {
	if len(top) == 0 {
		return base
	}
	out := make([]Variable, len(base), len(base)+len(top))
	copy(out, base)
	for _, v := range top {
		if i, ok := baseIndex[v.Key]; ok {
			out[i] = v
			continue
		}
		out = append(out, v)
	}
	return out
}

// unknownKeys reports the keys of a hash that are not in allowed.
func (p *parser) unknownKeys(v *value, loc string, allowed ...string) {
	var unknown []string
	for _, e := range v.entries {
		found := false
		for _, a := range allowed {
			if e.key == a {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, e.key)
		}
	}
	if len(unknown) > 0 {
		p.errorf("%s config contains unknown keys: %s", loc, strings.Join(unknown, ", "))
	}
}

func (p *parser) image(v *value, loc string) *Image {
	if v.isString() {
		return &Image{Name: v.text}
	}
	if v.kind != kindMap {
		p.errorf("%s config should be a hash or a string", loc)
		return nil
	}
	p.unknownKeys(v, loc, "name", "entrypoint")
	img := &Image{}
	switch name := v.get("name"); {
	case blank(name):
		p.errorf("%s name can't be blank", loc)
	case !name.isString():
		p.errorf("%s name should be a string", loc)
	default:
		img.Name = name.text
	}
	if ep := v.get("entrypoint"); !ep.isNull() {
		img.Entrypoint, _ = p.stringList(ep, loc+" entrypoint")
	}
	return img
}

func (p *parser) services(v *value, loc string) ([]Service, bool) {
	if v.kind != kindSeq {
		p.errorf("%s config should be an array", loc)
		return nil, false
	}
	out := make([]Service, 0, len(v.items))
	itemLoc := at(loc, "service")
	for _, item := range v.items {
		if item.isString() {
			out = append(out, Service{Name: item.text})
			continue
		}
		if item.kind != kindMap {
			p.errorf("%s config should be a hash or a string", itemLoc)
			continue
		}
		p.unknownKeys(item, itemLoc, "name", "alias", "command", "entrypoint")
		var s Service
		switch name := item.get("name"); {
		case blank(name):
			p.errorf("%s name can't be blank", itemLoc)
		case !name.isString():
			p.errorf("%s name should be a string", itemLoc)
		default:
			s.Name = name.text
		}
		if a := item.get("alias"); !a.isNull() {
			if a.isString() {
				s.Alias = a.text
			} else {
				p.errorf("%s alias should be a string", itemLoc)
			}
		}
		if c := item.get("command"); !c.isNull() {
			s.Command, _ = p.stringList(c, itemLoc+" command")
		}
		if ep := item.get("entrypoint"); !ep.isNull() {
			s.Entrypoint, _ = p.stringList(ep, itemLoc+" entrypoint")
		}
		out = append(out, s)
	}
	return out, true
}

func (p *parser) cache(v *value, loc string) *Cache {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	p.unknownKeys(v, loc, "key", "untracked", "paths", "policy")
	c := &Cache{Key: DefaultCacheKey, Policy: "pull-push"}
	if k := v.get("key"); !k.isNull() {
		// A number is a fine key; only collections are refused.
		if k.kind != kindScalar {
			p.errorf("%s config should be a string or symbol", at(loc, "key"))
		} else {
			c.Key = k.text
		}
	}
	if u := v.get("untracked"); !u.isNull() {
		b, ok := boolValue(u)
		if !ok {
			p.errorf("%s config should be a boolean value", at(loc, "untracked"))
		}
		c.Untracked = b
	}
	if ps := v.get("paths"); !ps.isNull() {
		c.Paths, _ = p.stringList(ps, at(loc, "paths")+" config")
	}
	if pol := v.get("policy"); !pol.isNull() {
		switch pol.text {
		case "pull-push", "push", "pull":
			if pol.isString() {
				c.Policy = pol.text
				break
			}
			fallthrough
		default:
			p.errorf("%s policy should be pull-push, push, or pull", loc)
		}
	}
	return c
}

func (p *parser) artifacts(v *value, loc string) *Artifacts {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	p.unknownKeys(v, loc, "name", "untracked", "paths", "when", "expire_in")
	a := &Artifacts{Name: DefaultArtifactsName, When: ArtifactsOnSuccess}
	if n := v.get("name"); !n.isNull() {
		if n.isString() {
			a.Name = n.text
		} else {
			p.errorf("%s name should be a string", loc)
		}
	}
	if u := v.get("untracked"); !u.isNull() {
		b, ok := boolValue(u)
		if !ok {
			p.errorf("%s untracked should be a boolean value", loc)
		}
		a.Untracked = b
	}
	if ps := v.get("paths"); !ps.isNull() {
		a.Paths, _ = p.stringList(ps, loc+" paths")
	}
	if w := v.get("when"); !w.isNull() {
		switch w.text {
		case ArtifactsOnSuccess, ArtifactsOnFailure, ArtifactsAlways:
			if w.isString() {
				a.When = w.text
				break
			}
			fallthrough
		default:
			p.errorf("%s when should be on_success, on_failure or always", loc)
		}
	}
	if e := v.get("expire_in"); !e.isNull() {
		d, never, err := ParseExpireIn(e.text)
		if e.kind != kindScalar || (e.tag != "!!str" && e.tag != "!!int") || err != nil {
			p.errorf("%s expire in should be a duration", loc)
		} else {
			a.ExpireIn, a.ExpireAfter, a.ExpireNever = e.text, d, never
		}
	}
	return a
}

// environmentNameChars is GitLab's environment_name_regex: letters, digits,
// '-', '_', '/', '\', '$', '{', '}', '.' and spaces.
var environmentNameChars = regexp.MustCompile(`^[a-zA-Z0-9_\\/${}. -]+$`)

const environmentNameMessage = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"

// ValidEnvironmentName reports whether name is a valid environment name;
// check it again after expanding variables in it.
func ValidEnvironmentName(name string) bool {
	return environmentNameChars.MatchString(name) &&
		!strings.HasPrefix(name, "/") && !strings.HasSuffix(name, "/")
}

func (p *parser) environment(v *value, loc string) *Environment {
	env := &Environment{Action: EnvironmentStart}
	var name *value
	switch {
	case v.kind == kindScalar && v.isString():
		name = v
	case v.kind == kindMap:
		p.unknownKeys(v, loc, "name", "url", "action", "on_stop")
		name = v.get("name")
	default:
		p.errorf("%s config should be a hash or a string", loc)
		return nil
	}
	switch {
	case blank(name):
		p.errorf("%s name can't be blank", loc)
	case !name.isString() || !ValidEnvironmentName(name.text):
		p.errorf("%s name %s", loc, environmentNameMessage)
	case len(name.text) > 255:
		p.errorf("%s name is too long (maximum is 255 characters)", loc)
	default:
		env.Name = name.text
	}
	if v.kind != kindMap {
		return env
	}
	if u := v.get("url"); !u.isNull() {
		switch {
		case !u.isString() || !validEnvironmentURL(u.text):
			p.errorf("%s url must be a valid url", loc)
		case len(u.text) > 255:
			p.errorf("%s url is too long (maximum is 255 characters)", loc)
		default:
			env.URL = u.text
		}
	}
	if a := v.get("action"); !a.isNull() {
		if a.isString() && (a.text == EnvironmentStart || a.text == EnvironmentStop) {
			env.Action = a.text
		} else {
			p.errorf("%s action should be start or stop", loc)
		}
	}
	if s := v.get("on_stop"); !s.isNull() {
		if s.isString() {
			env.OnStop = s.text
		} else {
			p.errorf("%s on stop should be a string", loc)
		}
	}
	return env
}

// coverage reads `coverage: '/regex/'`.
func (p *parser) coverage(v *value, loc string) string {
	re, ok := slashedRegexp(v)
	if !ok {
		p.errorf("%s config must be a regular expression", loc)
		return ""
	}
	return re
}

// slashedRegexp returns the pattern of a "/pattern/" string when it is a
// regular expression Go's regexp (RE2) compiles. Ruby-only constructs
// (lookarounds, backreferences) are refused rather than misread.
func slashedRegexp(v *value) (string, bool) {
	if !v.isString() || !isSlashed(v.text) {
		return "", false
	}
	pattern := v.text[1 : len(v.text)-1]
	if _, err := regexp.Compile(pattern); err != nil {
		return "", false
	}
	return pattern, true
}

func isSlashed(s string) bool {
	return len(s) >= 2 && s[0] == '/' && s[len(s)-1] == '/'
}

// policy reads `only`/`except`: an array of ref names, /regexps/, keywords
// and name@group/project filters.
func (p *parser) policy(v *value, loc string) []string {
	refs, ok := stringItems(v)
	if ok {
		for _, ref := range refs {
			pattern, _ := splitPolicyPath(ref)
			if isSlashed(pattern) {
				if _, err := regexp.Compile(pattern[1 : len(pattern)-1]); err != nil {
					ok = false
					break
				}
			}
		}
	}
	if !ok {
		p.errorf("%s config should be an array of strings or regexps", loc)
		return nil
	}
	return refs
}
