package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// MaxConfigBytes is the largest `.gitlab-ci.yml` Parse accepts. GitLab
// later settled on 1 MiB as its own limit; real configurations are a few
// kilobytes.
const MaxConfigBytes = 1 << 20

// globalKeys are the reserved top-level keywords, in the order GitLab 9.x
// validates them, then those of current GitLab; every other top-level key
// is a job. `include` is gone by the time they are read.
var globalKeys = []string{
	"before_script", "image", "services", "after_script",
	"variables", "stages", "types", "cache", "default", "include", "workflow",
}

// unsupportedGlobalKeys are top-level keywords of current GitLab that Fennec
// does not run yet: refused by name rather than read as jobs.
var unsupportedGlobalKeys = map[string]bool{}

// jobKeys are the keywords a job accepts: 9.x's, then current GitLab's.
var jobKeys = map[string]bool{
	"tags": true, "script": true, "only": true, "except": true, "type": true,
	"image": true, "services": true, "allow_failure": true, "stage": true,
	"when": true, "artifacts": true, "cache": true, "dependencies": true,
	"before_script": true, "after_script": true, "variables": true,
	"environment": true, "coverage": true, "retry": true,
	"extends": true, "inherit": true, "interruptible": true, "timeout": true,
	"start_in": true, "rules": true, "needs": true, "parallel": true,
	"release": true, "resource_group": true,
}

// unsupportedJobKeys are job keywords of current GitLab that Fennec does not
// run yet; a job using one is refused with a message naming it.
var unsupportedJobKeys = map[string]bool{
	"secrets":   true,
	"id_tokens": true, "hooks": true, "pages": true, "run": true,
	"identity": true, "manual_confirmation": true, "dast_configuration": true,
}

// defaultKeys are the keywords `default:` gives every job that sets none.
var defaultKeys = []string{
	"after_script", "artifacts", "before_script", "cache", "image",
	"interruptible", "retry", "services", "tags", "timeout",
}

// The predefined stages: .pre runs before every other, .post after.
const (
	StagePre  = ".pre"
	StagePost = ".post"
)

// Parse parses and validates a `.gitlab-ci.yml` alone: an `include` in it
// is refused (ParseFiles reads included files). An invalid document gives a
// *ConfigError (errors.Is(err, ErrInvalidConfig)) worded as GitLab words
// it; Parse never panics.
func Parse(src []byte) (*Config, error) {
	cfg, _, err := parse(context.Background(), src, nil)
	return cfg, err
}

// ParseFiles is Parse for a configuration whose `include: local` entries
// files reads: the files of the same repository at the same commit. It
// reads at most maxIncludes files of at most MaxConfigBytes in all.
func ParseFiles(ctx context.Context, src []byte, files Files) (*Config, error) {
	cfg, _, err := parse(ctx, src, files)
	return cfg, err
}

// parseStats counts the work a parse did, for the tests of its bounds.
type parseStats struct {
	nodes        int // YAML nodes built, aliases counted at full size
	resolveWork  int // mapping entries merged by extends and nodes visited for !reference
	includes     int // files included
	includeBytes int // their total size
}

func parse(ctx context.Context, src []byte, files Files) (cfg *Config, stats parseStats, err error) {
	if len(src) > MaxConfigBytes {
		return nil, stats, configError(fmt.Sprintf(
			"The CI configuration is too large: %d bytes, the limit is %d bytes", len(src), MaxConfigBytes))
	}
	// yaml.v3 is well fuzzed, but a pipeline must never take the server
	// down with it: a panic in the library becomes a configuration error.
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, configError(fmt.Sprintf("(<unknown>): the configuration could not be read (internal error: %v)", r))
		}
	}()
	conv := newConverter()
	defer func() { stats.nodes = maxExpandedNodes - conv.budget }()
	root, err := parseDocument(src, conv)
	if err != nil {
		return nil, stats, err
	}
	if root.kind != kindMap {
		return nil, stats, configError("Invalid configuration format")
	}
	inc := includer{ctx: ctx, files: files, root: files, conv: conv, size: len(src)}
	if root, err = inc.expand(root, nil); err != nil {
		return nil, stats, err
	}
	stats.includes, stats.includeBytes = inc.count, inc.size-len(src)
	var work int
	root, work, err = resolveExtends(root)
	stats.resolveWork += work
	if err != nil {
		return nil, stats, err
	}
	if conv.references {
		root, work, err = resolveReferences(root)
		stats.resolveWork += work
		if err != nil {
			return nil, stats, err
		}
	}
	var p parser
	cfg = p.config(root)
	if len(p.errs) > 0 {
		return nil, stats, &ConfigError{Messages: p.errs}
	}
	return cfg, stats, nil
}

// parseYAML reads one document on its own budget (tests use it).
func parseYAML(src []byte) (*value, error) {
	return parseDocument(src, newConverter())
}

// parseDocument reads a configuration's YAML. A file may start with a
// header document holding only `spec:` (inputs for includes) before
// `---`: the configuration is then the second document, with each
// `$[[ inputs.name ]]` replaced by the input's default.
func parseDocument(src []byte, conv *converter) (*value, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &value{kind: kindNull}, nil
		}
		return nil, syntaxError(err)
	}
	first, err := conv.convert(&doc, 0)
	if err != nil {
		return nil, err
	}
	if first.kind != kindMap || len(first.entries) != 1 || first.entries[0].key != "spec" {
		return first, nil
	}
	var body yaml.Node
	if err := dec.Decode(&body); err != nil {
		if errors.Is(err, io.EOF) {
			return first, nil // a file of `spec:` alone: a job named spec
		}
		return nil, syntaxError(err)
	}
	defaults, err := inputDefaults(first.entries[0].val)
	if err != nil {
		return nil, err
	}
	budget := MaxConfigBytes
	if err := interpolateInputs(&body, defaults, &budget); err != nil {
		return nil, err
	}
	return conv.convert(&body, 0)
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
	// rules are the rules already read, by the YAML value they were read
	// from: a rule shared through an anchor or !reference by thousands of
	// jobs is validated and compiled once.
	rules map[*value]ciexpr.Rule
	// instances counts the jobs `parallel:` made, and parallelJobs holds
	// each parallel job's instances by the name it was written with.
	instances    int
	parallelJobs map[string][]instance
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

// globals are the top-level and `default:` keywords jobs inherit; set
// records which were written, since an empty value is a value.
type globals struct {
	beforeScript, afterScript []string
	image                     *Image
	services                  []Service
	variables                 []Variable
	variableIndex             map[string]int // key -> position in variables, built on first use
	cache                     *Cache
	caches                    []Cache
	tags                      []string
	timeout                   string
	timeoutAfter              time.Duration
	retry                     int
	retryWhen                 []string
	interruptible             bool
	artifacts                 *Artifacts
	set                       map[string]bool
}

func (p *parser) config(root *value) *Config {
	cfg := &Config{Stages: DefaultStages}
	g := globals{set: map[string]bool{}}
	for _, key := range globalKeys {
		v := root.get(key)
		if v.isNull() {
			continue
		}
		if unsupportedGlobalKeys[key] {
			p.errorf("%s is not supported yet", key)
			continue
		}
		switch key {
		case "before_script", "after_script", "image", "services", "cache":
			p.defaultKey(&g, key, v, key)
		case "variables":
			g.variables = p.variables(v, key, true)
			cfg.Variables = g.variables
		case "stages", "types":
			// `types` is the deprecated spelling; `stages` wins when both are set.
			if key == "types" && !root.get("stages").isNull() {
				continue
			}
			if stages, ok := p.stringList(v, key+" config"); ok {
				cfg.Stages = stages
			}
		case "default":
			p.defaults(&g, v)
		case "workflow":
			cfg.Workflow = p.workflow(v)
		case "include":
			// Expanded before validation; left only by a caller that
			// parsed a tree by hand.
			p.errorf("include config cannot be used here")
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
	var written [][]Job // each job's instances (the job alone if not parallel)
	for _, e := range root.entries {
		if reserved[e.key] {
			continue
		}
		if strings.HasPrefix(e.key, ".") {
			// Hidden jobs are templates for anchors and extends; GitLab
			// only asks that they are not empty.
			if blank(e.val) {
				p.errorf("jobs:%s config can't be blank", e.key)
			}
			continue
		}
		if job, ok := p.job(e.key, e.val, &g); ok {
			written = append(written, p.parallel(job, e.val.get("parallel"), "jobs:"+e.key))
		}
	}
	if len(p.errs) > 0 {
		return nil
	}
	cfg.Jobs = flattenJobs(written)
	p.expandParallelReferences(cfg)
	p.crossCheck(cfg)
	return cfg
}

// defaults reads `default:`.
func (p *parser) defaults(g *globals, v *value) {
	if v.kind != kindMap {
		p.errorf("default config should be a hash")
		return
	}
	allowed := make([]string, 0, len(defaultKeys)+2)
	allowed = append(allowed, defaultKeys...)
	for _, e := range v.entries {
		if e.key == "hooks" || e.key == "id_tokens" {
			p.errorf("default:%s is not supported yet", e.key)
		}
	}
	allowed = append(allowed, "hooks", "id_tokens")
	p.unknownKeys(v, "default", allowed...)
	for _, key := range defaultKeys {
		val := v.get(key)
		if val.isNull() {
			continue
		}
		if g.set[key] {
			p.errorf("%s is defined in top-level and `default:` entry", key)
			continue
		}
		p.defaultKey(g, key, val, at("default", key))
	}
}

// defaultKey reads one keyword of `default:` (or its top-level spelling).
func (p *parser) defaultKey(g *globals, key string, v *value, loc string) {
	g.set[key] = true
	switch key {
	case "before_script":
		g.beforeScript = p.scriptList(v, loc)
	case "after_script":
		g.afterScript = p.scriptList(v, loc)
	case "image":
		g.image = p.image(v, loc)
	case "services":
		g.services, _ = p.services(v, loc)
	case "cache":
		g.cache, g.caches = p.caches(v, loc)
	case "tags":
		g.tags, _ = p.stringList(v, loc+" config")
	case "timeout":
		g.timeout, g.timeoutAfter = p.timeout(v, loc)
	case "retry":
		g.retry, g.retryWhen = p.retry(v, loc)
	case "interruptible":
		b, ok := boolValue(v)
		if !ok {
			p.errorf("%s config should be a boolean value", loc)
		}
		g.interruptible = b
	case "artifacts":
		g.artifacts = p.artifacts(v, loc)
	}
}

// inheritance is a job's `inherit:`: which defaults and global variables
// it takes.
type inheritance struct {
	allDefaults, allVariables bool
	defaults, variables       map[string]bool
}

func (i inheritance) takesDefault(key string) bool { return i.allDefaults || i.defaults[key] }

func (p *parser) inherit(v *value, loc string) inheritance {
	inh := inheritance{allDefaults: true, allVariables: true}
	if v.isNull() {
		return inh
	}
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return inh
	}
	p.unknownKeys(v, loc, "default", "variables")
	read := func(key string, all *bool, some *map[string]bool) {
		x := v.get(key)
		if x.isNull() {
			return
		}
		if b, ok := boolValue(x); ok {
			*all = b
			return
		}
		names, ok := stringItems(x)
		if !ok {
			p.errorf("%s config should be a boolean value or an array of strings", at(loc, key))
			return
		}
		*all, *some = false, map[string]bool{}
		for _, n := range names {
			(*some)[n] = true
		}
	}
	read("default", &inh.allDefaults, &inh.defaults)
	read("variables", &inh.allVariables, &inh.variables)
	return inh
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
	if isBridge(v) {
		return p.bridge(name, v, g) // trigger.go
	}
	before := len(p.errs)
	var unknown []string
	for _, e := range v.entries {
		switch {
		case unsupportedJobKeys[e.key]:
			p.errorf("%s %s is not supported yet", loc, e.key)
		case !jobKeys[e.key]:
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
	inh := p.inherit(v.get("inherit"), at(loc, "inherit"))
	inherited := func(key string) bool { return g.set[key] && inh.takesDefault(key) }

	job := Job{Name: name, When: cistatus.WhenOnSuccess}
	if inherited("tags") {
		job.Tags = g.tags
	}
	if t := v.get("tags"); !t.isNull() {
		job.Tags, _ = p.stringList(t, loc+" tags")
	}
	allowFailureSet := false
	if a := v.get("allow_failure"); !a.isNull() {
		allowFailureSet = true
		job.AllowFailure, job.AllowFailureExitCodes = p.allowFailure(a, loc)
	}
	if inherited("retry") {
		job.Retry, job.RetryWhen = g.retry, g.retryWhen
	}
	if r := v.get("retry"); !r.isNull() {
		job.Retry, job.RetryWhen = p.retry(r, loc)
	}
	if inherited("timeout") {
		job.Timeout, job.TimeoutAfter = g.timeout, g.timeoutAfter
	}
	if t := v.get("timeout"); !t.isNull() {
		job.Timeout, job.TimeoutAfter = p.timeout(t, at(loc, "timeout"))
	}
	if inherited("interruptible") {
		job.Interruptible = g.interruptible
	}
	if i := v.get("interruptible"); !i.isNull() {
		b, ok := boolValue(i)
		if !ok {
			p.errorf("%s interruptible should be a boolean value", loc)
		}
		job.Interruptible = b
	}
	delayed := false
	if w := v.get("when"); !w.isNull() {
		when := cistatus.When(w.text)
		switch {
		case w.isString() && w.text == "delayed":
			// A delayed job gates as on_success; its StartAfter makes
			// the service schedule it instead of queueing it.
			delayed, when = true, cistatus.WhenOnSuccess
		case !w.isString() || !when.Valid():
			p.errorf("%s when should be one of: on_success, on_failure, always, manual, delayed", loc)
		}
		job.When = when
	}
	if si := v.get("start_in"); !si.isNull() || delayed {
		switch {
		case !delayed:
			p.errorf("%s start in must be blank when not delayed", loc)
		case si.isNull():
			p.errorf("%s start in should be a duration", loc)
		default:
			d, never, err := ParseExpireIn(si.text)
			if si.kind != kindScalar || err != nil || never || d > 7*24*time.Hour {
				p.errorf("%s start in should be a duration of up to one week", loc)
			} else {
				job.StartIn, job.StartAfter = si.text, d
			}
		}
	}
	if rg := v.get("resource_group"); !rg.isNull() {
		job.ResourceGroup = p.resourceGroup(rg, loc)
	}
	job.DependsOnAllEarlier = true
	if d := v.get("dependencies"); !d.isNull() {
		job.Dependencies, _ = p.stringList(d, loc+" dependencies")
		job.DependsOnAllEarlier = false
	}
	if n := v.get("needs"); !n.isNull() {
		job.Needs = p.needs(n, name, at(loc, "needs"))
	}

	// The entries of a job, in the order GitLab 9.x declares them.
	if inherited("before_script") {
		job.BeforeScript = g.beforeScript
	}
	if inherited("after_script") {
		job.AfterScript = g.afterScript
	}
	if b := v.get("before_script"); !b.isNull() {
		job.BeforeScript = p.scriptList(b, at(loc, "before_script"))
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
		job.AfterScript = p.scriptList(a, at(loc, "after_script"))
	}
	if inherited("cache") {
		job.Cache, job.Caches = g.cache, g.caches
	}
	if c := v.get("cache"); !c.isNull() {
		job.Cache, job.Caches = p.caches(c, at(loc, "cache"))
	}
	if inherited("image") {
		job.Image = g.image
	}
	if i := v.get("image"); !i.isNull() {
		job.Image = p.image(i, at(loc, "image"))
	}
	if inherited("services") {
		job.Services = g.services
	}
	if s := v.get("services"); !s.isNull() {
		job.Services, _ = p.services(s, at(loc, "services"))
	}
	for _, key := range []string{"only", "except"} {
		if pol := v.get(key); !pol.isNull() {
			p.policy(&job, key, pol, at(loc, key))
		}
	}
	if r := v.get("rules"); r != nil {
		p.jobRules(&job, v, loc)
	}
	// Job variables go on top of the global ones; `variables: {}` keeps the
	// globals, as GitLab 9.x's merge does (its documentation claimed
	// otherwise, but the code merged). `inherit: variables` picks which
	// global ones a job takes.
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
	if vars := v.get("variables"); !vars.isNull() {
		own := p.variables(vars, at(loc, "variables"), false)
		for _, o := range own {
			job.ownVariables = append(job.ownVariables, o.Key)
		}
		p.mergedVariables += len(globalVars) + len(own)
		if p.mergedVariables <= maxMergedVariables {
			index := g.variableIndex
			if !inh.allVariables {
				index = indexVariables(globalVars)
			} else if g.variableIndex == nil {
				g.variableIndex = indexVariables(g.variables)
				index = g.variableIndex
			}
			job.Variables = mergeVariables(globalVars, index, own)
		} else if p.mergedVariables-len(globalVars)-len(own) <= maxMergedVariables {
			p.errorf("The CI configuration is too large: its jobs hold more than %d variables in all", maxMergedVariables)
		}
	}
	if inherited("artifacts") {
		job.Artifacts = g.artifacts
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
	if r := v.get("release"); !r.isNull() {
		job.Release = p.release(r, at(loc, "release")) // release.go
	}

	if !allowFailureSet {
		// Manual jobs are optional unless they say otherwise (9.0).
		job.AllowFailure = job.When == cistatus.WhenManual
	}
	return job, len(p.errs) == before
}

// allowFailure reads `allow_failure`: a boolean, or `{exit_codes: n | [n...]}`.
func (p *parser) allowFailure(v *value, loc string) (bool, []int) {
	if b, ok := boolValue(v); ok {
		return b, nil
	}
	if v.kind != kindMap {
		p.errorf("%s allow failure should be a boolean value", loc)
		return false, nil
	}
	p.unknownKeys(v, at(loc, "allow_failure"), "exit_codes")
	codes := v.get("exit_codes")
	items := []*value{codes}
	if codes != nil && codes.kind == kindSeq {
		items = codes.items
	}
	var out []int
	for _, item := range items {
		if item == nil || item.kind != kindScalar || item.tag != "!!int" {
			p.errorf("%s exit codes should be an array of integers or an integer", at(loc, "allow_failure"))
			return false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(item.text))
		if err != nil {
			p.errorf("%s exit codes should be an array of integers or an integer", at(loc, "allow_failure"))
			return false, nil
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		p.errorf("%s exit codes should be an array of integers or an integer", at(loc, "allow_failure"))
	}
	return false, out
}

// crossCheck validates what involves several jobs or the stage list, after
// every job is valid on its own, and resolves stage indexes.
func (p *parser) crossCheck(cfg *Config) {
	// .pre and .post are always there, first and last; they are listed
	// in Stages only when a job uses them, so that files without them keep
	// their 9.x stage list.
	usesPre, usesPost := false, false
	for i := range cfg.Jobs {
		usesPre = usesPre || cfg.Jobs[i].Stage == StagePre
		usesPost = usesPost || cfg.Jobs[i].Stage == StagePost
	}
	declared := cfg.Stages
	cfg.Stages = make([]string, 0, len(declared)+2)
	if usesPre {
		cfg.Stages = append(cfg.Stages, StagePre)
	}
	for _, st := range declared {
		if st != StagePre && st != StagePost {
			cfg.Stages = append(cfg.Stages, st)
		}
	}
	if usesPost {
		cfg.Stages = append(cfg.Stages, StagePost)
	}
	stageIndex := make(map[string]int, len(cfg.Stages))
	for i := len(cfg.Stages) - 1; i >= 0; i-- {
		stageIndex[cfg.Stages[i]] = i // the first occurrence wins
	}
	allStages := append(append([]string{StagePre}, cfg.Stages[boolInt(usesPre):len(cfg.Stages)-boolInt(usesPost)]...), StagePost)
	jobs := make(map[string]*Job, len(cfg.Jobs))
	for i := range cfg.Jobs {
		jobs[cfg.Jobs[i].Name] = &cfg.Jobs[i]
	}
	for i := range cfg.Jobs {
		job := &cfg.Jobs[i]
		idx, ok := stageIndex[job.Stage]
		if !ok {
			p.errorf("%s job: chosen stage %s does not exist; available stages are %s", job.Name, job.Stage, strings.Join(allStages, ", "))
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
			switch {
			case !ok:
				p.errorf("%s job: undefined dependency: %s", job.Name, dep)
			case other.StageIndex > job.StageIndex:
				// Current GitLab takes a dependency of the same stage, with
				// needs or without (GitLab 9.x refused it "in prior
				// stages"); without needs it fetches nothing from it, as
				// FetchesFrom answers.
				p.errorf("%s job: dependency %s is not defined in current or prior stages", job.Name, dep)
			}
		}
	}
	p.checkNeeds(cfg, jobs)
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
	if v == nil || v.kind != kindSeq {
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

// commands reads `script`: a string, or an array of strings and of arrays
// (YAML anchors of lists inside a list), flattened up to maxScriptNesting
// levels as GitLab does.
func (p *parser) commands(v *value, loc string) []string {
	out, ok := flattenScript(v)
	if !ok {
		p.errorf("%s config should be a string or a nested array of strings up to %d levels deep", loc, maxScriptNesting)
	}
	return out
}

// scriptList reads before_script and after_script, which take the same
// forms as script.
func (p *parser) scriptList(v *value, loc string) []string {
	return p.commands(v, loc)
}

func flattenScript(v *value) ([]string, bool) {
	if v.isString() {
		return []string{v.text}, true
	}
	if v.kind != kindSeq {
		return nil, false
	}
	out := make([]string, 0, len(v.items))
	return out, appendScript(&out, v, 1)
}

func appendScript(out *[]string, v *value, depth int) bool {
	if depth > maxScriptNesting {
		return false
	}
	for _, item := range v.items {
		switch {
		case item.isString():
			*out = append(*out, item.text)
		case item.kind == kindSeq:
			if !appendScript(out, item, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
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

// boolInt is 1 for true.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// retryReasons are the failure reasons `retry: {when}` may name.
var retryReasons = map[string]bool{
	"always": true, "unknown_failure": true, "script_failure": true, "api_failure": true,
	"stuck_or_timeout_failure": true, "runner_system_failure": true, "runner_unsupported": true,
	"stale_schedule": true, "job_execution_timeout": true, "archived_failure": true,
	"unmet_prerequisites": true, "scheduler_failure": true, "data_integrity_failure": true,
}

// retry reads `retry`: a number, or `{max, when}`.
func (p *parser) retry(v *value, loc string) (int, []string) {
	if v.kind == kindMap {
		p.unknownKeys(v, at(loc, "retry"), "max", "when", "exit_codes")
		n := 0
		if m := v.get("max"); !m.isNull() {
			n = p.retryMax(m, loc)
		}
		var when []string
		if w := v.get("when"); !w.isNull() {
			if w.isString() {
				when = []string{w.text}
			} else if items, ok := stringItems(w); ok {
				when = items
			} else {
				p.errorf("%s retry when should be a string or an array of strings", loc)
			}
			for _, reason := range when {
				if !retryReasons[reason] {
					p.errorf("%s retry when is unknown: %s", loc, reason)
					break
				}
			}
		}
		if e := v.get("exit_codes"); !e.isNull() {
			p.errorf("%s retry exit_codes is not supported yet", loc)
		}
		return n, when
	}
	return p.retryMax(v, loc), nil
}

func (p *parser) retryMax(v *value, loc string) int {
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

// timeout reads a `timeout`: a duration as GitLab's parser reads them
// ("1h 30m", "3 hours", "90 minutes", a number of seconds), positive and
// at most a month, GitLab's bound.
func (p *parser) timeout(v *value, loc string) (string, time.Duration) {
	if v.kind != kindScalar || (v.tag != "!!str" && v.tag != "!!int") {
		p.errorf("%s config should be a duration", loc)
		return "", 0
	}
	d, never, err := ParseExpireIn(v.text)
	switch {
	case err != nil || never || d <= 0:
		p.errorf("%s config should be a duration", loc)
	case d > 30*24*time.Hour:
		p.errorf("%s config should not exceed the limit", loc)
	default:
		return v.text, d
	}
	return "", 0
}

// variables reads a hash of key value pairs. Values may be strings or
// numbers (kept as written: "1.10" stays "1.10"), booleans ("true",
// "false"), or a hash with `value`
// (and `description`, `expand`, `options` at the top level, `expand` in a
// job), as current GitLab allows.
func (p *parser) variables(v *value, loc string, topLevel bool) []Variable {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash of key value pairs", loc)
		return nil
	}
	out := make([]Variable, 0, len(v.entries))
	for _, e := range v.entries {
		val := e.val
		if val.kind == kindMap {
			allowed := []string{"value", "expand"}
			if topLevel {
				allowed = append(allowed, "description", "options")
			}
			p.unknownKeys(val, at(loc, e.key), allowed...)
			inner := val.get("value")
			switch {
			case inner.isNull():
				out = append(out, Variable{Key: e.key, Public: true})
				continue
			case isScalarVariable(inner):
				out = append(out, Variable{Key: e.key, Value: variableText(inner), Public: true})
				continue
			}
		}
		if !isScalarVariable(val) {
			p.errorf("%s config should be a hash of key value pairs, value can be a hash", loc)
			return nil
		}
		out = append(out, Variable{Key: e.key, Value: variableText(val), Public: true})
	}
	return out
}

func isScalarVariable(v *value) bool {
	return v.kind == kindScalar && (v.tag == "!!str" || v.tag == "!!int" || v.tag == "!!float" || v.tag == "!!bool")
}

// variableText is the value a variable holds: a string or number as
// written, and a boolean as Ruby writes one ("true", "false"), since
// current GitLab takes `FLAG: true` and hands the job that text. The
// unquoted YAML 1.1 words (yes, on, no, off) are booleans to GitLab's
// loader too (see boolValue), so they become "true" and "false" as well.
func variableText(v *value) string {
	if b, ok := boolValue(v); ok {
		return strconv.FormatBool(b)
	}
	return v.text
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
	p.unknownKeys(v, loc, "name", "entrypoint", "pull_policy", "docker", "kubernetes")
	img := &Image{}
	img.PullPolicy = p.pullPolicy(v, loc)
	p.runtimeOptions(v, loc)
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

// pullPolicy reads `pull_policy`: one policy or a list of them.
func (p *parser) pullPolicy(v *value, loc string) []string {
	pp := v.get("pull_policy")
	if pp.isNull() {
		return nil
	}
	policies, ok := stringItems(pp)
	if pp.isString() {
		policies, ok = []string{pp.text}, true
	}
	for _, policy := range policies {
		ok = ok && (policy == "always" || policy == "if-not-present" || policy == "never")
	}
	if !ok || len(policies) == 0 {
		p.errorf("%s pull_policy should be always, if-not-present or never, or an array of them", loc)
		return nil
	}
	return policies
}

// runtimeOptions checks the `docker` and `kubernetes` options of an image
// or service are hashes; the executors do not use them.
func (p *parser) runtimeOptions(v *value, loc string) {
	for _, key := range []string{"docker", "kubernetes"} {
		if o := v.get(key); !o.isNull() && o.kind != kindMap {
			p.errorf("%s %s config should be a hash", loc, key)
		}
	}
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
		p.unknownKeys(item, itemLoc, "name", "alias", "command", "entrypoint", "variables", "pull_policy", "docker", "kubernetes")
		var s Service
		s.PullPolicy = p.pullPolicy(item, itemLoc)
		p.runtimeOptions(item, itemLoc)
		if vars := item.get("variables"); !vars.isNull() {
			s.Variables = p.variables(vars, at(itemLoc, "variables"), false)
		}
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

// maxCaches is how many caches a job may list, GitLab's bound.
const maxCaches = 4

// caches reads `cache`: one cache, or a list of up to maxCaches. The first
// comes back alone too, for the callers that know one cache only.
func (p *parser) caches(v *value, loc string) (*Cache, []Cache) {
	if v.kind != kindSeq {
		return p.cache(v, loc), nil
	}
	if len(v.items) > maxCaches {
		p.errorf("%s config no more than %d caches can be created", loc, maxCaches)
		return nil, nil
	}
	if len(v.items) == 0 {
		return nil, nil
	}
	out := make([]Cache, 0, len(v.items))
	for _, item := range v.items {
		if c := p.cache(item, loc); c != nil {
			out = append(out, *c)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &out[0], out
}

func (p *parser) cache(v *value, loc string) *Cache {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	p.unknownKeys(v, loc, "key", "untracked", "paths", "policy", "when", "fallback_keys", "unprotect")
	c := &Cache{Key: DefaultCacheKey, Policy: "pull-push"}
	if k := v.get("key"); !k.isNull() {
		switch k.kind {
		case kindScalar: // a number is a fine key
			c.Key = k.text
		case kindMap:
			p.unknownKeys(k, at(loc, "key"), "files", "prefix")
			files, ok := stringItems(k.get("files"))
			if k.get("files").isNull() || !ok || len(files) == 0 || len(files) > 2 {
				p.errorf("%s files should be an array of one or two file paths", at(loc, "key"))
			}
			c.KeyFiles = files
			if pre := k.get("prefix"); !pre.isNull() {
				if pre.kind != kindScalar {
					p.errorf("%s prefix should be a string", at(loc, "key"))
				}
				c.KeyPrefix, c.Key = pre.text, pre.text
			}
		default:
			p.errorf("%s config should be a string, symbol or hash", at(loc, "key"))
		}
	}
	if u := v.get("untracked"); !u.isNull() {
		b, ok := boolValue(u)
		if !ok {
			p.errorf("%s config should be a boolean value", at(loc, "untracked"))
		}
		c.Untracked = b
	}
	if u := v.get("unprotect"); !u.isNull() {
		if _, ok := boolValue(u); !ok {
			p.errorf("%s config should be a boolean value", at(loc, "unprotect"))
		}
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
			// A policy from a variable ($POLICY) is resolved by the
			// runner; it is kept as written.
			if pol.isString() && strings.HasPrefix(pol.text, "$") {
				c.Policy = pol.text
				break
			}
			p.errorf("%s policy should be pull-push, push, or pull", loc)
		}
	}
	if w := v.get("when"); !w.isNull() {
		switch w.text {
		case ArtifactsOnSuccess, ArtifactsOnFailure, ArtifactsAlways:
			c.When = w.text
		default:
			p.errorf("%s when should be on_success, on_failure or always", loc)
		}
	}
	if f := v.get("fallback_keys"); !f.isNull() {
		keys, ok := stringItems(f)
		if !ok || len(keys) > 5 {
			p.errorf("%s fallback keys should be an array of up to 5 strings", loc)
		}
		c.FallbackKeys = keys
	}
	return c
}

func (p *parser) artifacts(v *value, loc string) *Artifacts {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	p.unknownKeys(v, loc, "name", "untracked", "paths", "when", "expire_in", "exclude", "expose_as", "reports", "public", "access")
	a := &Artifacts{Name: DefaultArtifactsName, When: ArtifactsOnSuccess}
	if ex := v.get("exclude"); !ex.isNull() {
		a.Exclude, _ = p.stringList(ex, loc+" exclude")
	}
	if e := v.get("expose_as"); !e.isNull() {
		if !e.isString() || len(e.text) > 100 {
			p.errorf("%s expose as should be a string of up to 100 characters", loc)
		}
		a.ExposeAs = e.text
	}
	if r := v.get("reports"); !r.isNull() {
		a.Reports = p.reports(r, at(loc, "reports"))
	}
	for _, key := range []string{"public", "access"} {
		if x := v.get(key); !x.isNull() {
			p.errorf("%s %s is not supported yet", loc, key)
		}
	}
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

// reports reads `artifacts: reports`: a hash of report types, each a path
// or a list of paths (coverage_report alone is a hash).
func (p *parser) reports(v *value, loc string) map[string][]string {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	out := make(map[string][]string, len(v.entries))
	for _, e := range v.entries {
		switch {
		case e.val.isString():
			out[e.key] = []string{e.val.text}
		case e.val.kind == kindMap && e.key == "coverage_report":
			if path := e.val.get("path"); path.isString() {
				out[e.key] = []string{path.text}
			} else {
				p.errorf("%s coverage_report path should be a string", loc)
			}
		default:
			paths, ok := stringItems(e.val)
			if !ok {
				p.errorf("%s %s should be an array of strings or a string", loc, e.key)
				continue
			}
			out[e.key] = paths
		}
	}
	return out
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
		p.unknownKeys(v, loc, "name", "url", "action", "on_stop", "auto_stop_in", "kubernetes", "deployment_tier")
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
		switch a.text {
		case EnvironmentStart, EnvironmentStop, EnvironmentPrepare, EnvironmentVerify, EnvironmentAccess:
			if a.isString() {
				env.Action = a.text
				break
			}
			fallthrough
		default:
			p.errorf("%s action should be start, stop, prepare, verify, or access", loc)
		}
	}
	if s := v.get("auto_stop_in"); !s.isNull() {
		if _, never, err := ParseExpireIn(s.text); s.kind != kindScalar || err != nil && !never {
			p.errorf("%s auto stop in should be a duration", loc)
		} else {
			env.AutoStopIn = s.text
		}
	}
	if k := v.get("kubernetes"); !k.isNull() {
		if k.kind != kindMap {
			p.errorf("%s kubernetes config should be a hash", loc)
		} else if ns := k.get("namespace"); ns.isString() {
			env.KubernetesNamespace = ns.text
		}
	}
	if t := v.get("deployment_tier"); !t.isNull() {
		switch t.text {
		case "production", "staging", "testing", "development", "other":
			env.DeploymentTier = t.text
		default:
			p.errorf("%s deployment tier must be one of production, staging, testing, development, other", loc)
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

// policy reads `only`/`except` into the job: an array of ref names,
// /regexps/, keywords and name@group/project filters, or a hash of `refs`,
// `variables`, `changes` and `kubernetes`.
func (p *parser) policy(job *Job, key string, v *value, loc string) {
	var refs []string
	if v.kind == kindMap {
		p.unknownKeys(v, loc, "refs", "variables", "changes", "kubernetes")
		if r := v.get("refs"); !r.isNull() {
			refs = p.refPolicy(r, at(loc, "refs"))
		} else if key == "only" {
			refs = []string{"branches", "tags"} // GitLab's default for only
		}
		var vars, changes []string
		if x := v.get("variables"); !x.isNull() {
			var ok bool
			vars, ok = stringItems(x)
			for _, src := range vars {
				if _, err := ciexpr.Compile(src); err != nil {
					ok = false
				}
			}
			if !ok {
				p.errorf("%s config should be an array of valid expressions", at(loc, "variables"))
			}
		}
		if x := v.get("changes"); !x.isNull() {
			var ok bool
			if changes, ok = stringItems(x); !ok {
				if x.kind == kindMap {
					changes, ok = stringItems(x.get("paths"))
				}
				if !ok {
					p.errorf("%s config should be an array of strings", at(loc, "changes"))
				}
			}
		}
		k8s := false
		if x := v.get("kubernetes"); !x.isNull() {
			if !x.isString() || x.text != "active" {
				p.errorf("%s config should be active", at(loc, "kubernetes"))
			}
			k8s = true
		}
		if key == "only" {
			job.Only, job.OnlyVariables, job.OnlyChanges, job.OnlyKubernetes = refs, vars, changes, k8s
		} else {
			job.Except, job.ExceptVariables, job.ExceptChanges, job.ExceptKubernetes = refs, vars, changes, k8s
		}
		return
	}
	refs = p.refPolicy(v, loc)
	if key == "only" {
		job.Only = refs
	} else {
		job.Except = refs
	}
}

func (p *parser) refPolicy(v *value, loc string) []string {
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

// MaxResourceGroupKey is the longest resource group key GitLab stores.
const MaxResourceGroupKey = 255

// resourceGroup reads a job's `resource_group`: a string, which may hold
// variables (expanded when the pipeline is made).
func (p *parser) resourceGroup(v *value, loc string) string {
	switch {
	case !v.isString():
		p.errorf("%s resource group should be a string", loc)
	case len(v.text) > MaxResourceGroupKey:
		p.errorf("%s resource group is too long (maximum is %d characters)", loc, MaxResourceGroupKey)
	default:
		return v.text
	}
	return ""
}
