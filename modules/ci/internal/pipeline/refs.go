package pipeline

import (
	"regexp"
	"strings"

	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// Source is what created a pipeline. The only/except keywords name sources
// in the plural (pushes, triggers, ...), except api, external and web.
type Source string

// Pipeline sources of GitLab 9.x.
const (
	SourcePush     Source = "push"
	SourceWeb      Source = "web"
	SourceTrigger  Source = "trigger"
	SourceSchedule Source = "schedule"
	SourceAPI      Source = "api"
	SourceExternal Source = "external"
	SourcePipeline Source = "pipeline"
)

// policyKeyword is the only/except keyword that selects pipelines of this
// source.
func (s Source) policyKeyword() string {
	switch s {
	case "":
		return ""
	case SourceAPI, SourceExternal, SourceWeb:
		return string(s)
	case SourcePush:
		return "pushes"
	case SourceMergeRequestEvent:
		return "merge_requests"
	case SourceParentPipeline:
		return "pipelines"
	}
	return string(s) + "s"
}

// RefInfo describes the pipeline that jobs are selected for.
type RefInfo struct {
	// Name is the branch or tag name, without refs/heads/ or refs/tags/.
	Name  string
	IsTag bool
	// Source created the pipeline; empty matches no source keyword.
	Source Source
	// ProjectPath is the project's full path (group/project), matched by
	// name@group/project filters.
	ProjectPath string
	// Variables, when set, looks up the pipeline's variables that are not
	// the file's (trigger, project, group, predefined) for the `variables`
	// expressions of only/except; a name it does not answer is looked up
	// in the job's YAML variables (its own over the global ones). Nil
	// leaves those expressions unevaluated (see runs).
	Variables func(name string) (string, bool)
	// Changed and FileExists answer `changes` (of rules and of only/except
	// maps) and `rules: exists`, as ciexpr.RuleContext's fields of those
	// names: nil Changed is "changes unknown" (they hold), nil FileExists
	// "no file exists".
	Changed    func(compareTo string) (paths []string, known bool)
	FileExists func(glob *ciexpr.Glob) bool
	// WorkflowVariables are the variables of the workflow rule that
	// created the pipeline (Config.WorkflowFor): every job receives them
	// over the file's global variables.
	WorkflowVariables []ciexpr.Variable
}

// JobsFor returns the jobs that belong to a pipeline for ref, in file order,
// applying each job's only/except. Resolve a job's dependencies against the
// result with Job.DependenciesIn. No jobs means the pipeline is not created
// (NoJobsMessage).
//
// Jobs with `rules:` are decided by them (see applyRules): the jobs
// returned then carry the outcome (when, allow_failure, variables). The
// workflow's variables (ref.WorkflowVariables) are given to every job
// first, so that rules see them.
func (c *Config) JobsFor(ref RefInfo) []Job {
	m := newRefMatcher(ref)
	var out []Job
	for _, job := range c.Jobs {
		if len(ref.WorkflowVariables) > 0 {
			withWorkflowVariables(&job, ref.WorkflowVariables)
		}
		if job.HasRules {
			if applyRules(&job, ref) {
				out = append(out, job)
			}
			continue
		}
		if m.runs(&job) {
			out = append(out, job)
		}
	}
	return out
}

// RunsFor reports whether the job belongs to a pipeline for ref.
func (j *Job) RunsFor(ref RefInfo) bool {
	if j.HasRules {
		job := *j
		return applyRules(&job, ref)
	}
	return newRefMatcher(ref).runs(j)
}

// refMatcher applies policies to one ref, compiling each regexp once.
type refMatcher struct {
	ref     RefInfo
	regexps map[string]*regexp.Regexp
	exprs   map[string]*ciexpr.Expr
}

func newRefMatcher(ref RefInfo) *refMatcher {
	return &refMatcher{ref: ref, regexps: make(map[string]*regexp.Regexp), exprs: make(map[string]*ciexpr.Expr)}
}

// runs is GitLab's rule: a job with `only` runs when one of its patterns
// matches, and a job with `except` does not run when one of those matches.
// Of only/except written as maps, every key must match; `variables` and
// `changes` are not evaluated yet and count as matching for only and as
// not matching for except (the job is kept either way), and
// `kubernetes: active` never matches (no cluster integration here).
//
// With RefInfo.Variables set, `variables` expressions are evaluated as
// GitLab 10.7 to 12 did: only's hold when any expression holds, and an
// except of refs and variables excludes the job when both match.
func (m *refMatcher) runs(j *Job) bool {
	if j.OnlyKubernetes {
		return false
	}
	if m.ref.Source == SourceMergeRequestEvent && len(j.Only) == 0 {
		// A job without only has GitLab's default, branches and tags,
		// and a merge request pipeline is neither.
		return false
	}
	if len(j.Only) > 0 && !m.anyMatches(j.Only) {
		return false
	}
	evaluate := m.ref.Variables != nil
	if evaluate && len(j.OnlyVariables) > 0 && !m.anyHolds(j, j.OnlyVariables) {
		return false
	}
	if len(j.OnlyChanges) > 0 && !m.changesMatch(j.OnlyChanges, true) {
		return false
	}
	if len(j.ExceptChanges) > 0 && m.changesMatch(j.ExceptChanges, false) {
		return false
	}
	if j.ExceptKubernetes || (!evaluate && len(j.ExceptVariables) > 0) {
		return true // an except that cannot match
	}
	refsMatch := len(j.Except) > 0 && m.anyMatches(j.Except)
	varsMatch := len(j.ExceptVariables) > 0 && m.anyHolds(j, j.ExceptVariables)
	switch {
	case len(j.Except) > 0 && len(j.ExceptVariables) > 0:
		return !(refsMatch && varsMatch)
	case len(j.Except) > 0:
		return !refsMatch
	case len(j.ExceptVariables) > 0:
		return !varsMatch
	}
	return true
}

// anyHolds evaluates expressions against the job's variables over the
// pipeline's. Parse validated them; one that no longer compiles holds not.
func (m *refMatcher) anyHolds(j *Job, sources []string) bool {
	lookup := func(name string) (string, bool) {
		if v, ok := m.ref.Variables(name); ok {
			return v, true
		}
		for i := len(j.Variables) - 1; i >= 0; i-- {
			if j.Variables[i].Key == name {
				return j.Variables[i].Value, true
			}
		}
		return "", false
	}
	for _, src := range sources {
		e, ok := m.exprs[src]
		if !ok {
			e, _ = ciexpr.Compile(src)
			m.exprs[src] = e
		}
		if e != nil && ciexpr.AnyHolds([]*ciexpr.Expr{e}, lookup) {
			return true
		}
	}
	return false
}

// changesMatch says whether a path the pipeline changed matches one of
// the globs of an only/except `changes`; unknown changes give unknown
// (true for only, so that the job is kept, false for except).
func (m *refMatcher) changesMatch(globs []string, unknown bool) bool {
	if m.ref.Changed == nil {
		return unknown
	}
	changed, known := m.ref.Changed("")
	if !known {
		return unknown
	}
	for _, pattern := range globs {
		g, err := ciexpr.CompileGlob(pattern)
		if err != nil {
			continue
		}
		for _, path := range changed {
			if g.Match(path) {
				return true
			}
		}
	}
	return false
}

func (m *refMatcher) anyMatches(patterns []string) bool {
	for _, p := range patterns {
		if m.matches(p) {
			return true
		}
	}
	return false
}

func (m *refMatcher) matches(policy string) bool {
	pattern, path := splitPolicyPath(policy)
	if path != "" && path != m.ref.ProjectPath {
		return false
	}
	if m.ref.Source == SourceMergeRequestEvent {
		// Its ref is refs/merge-requests/<iid>/head: no branch, tag or
		// branch name matches, only the keyword.
		return pattern == "merge_requests"
	}
	switch {
	case pattern == "tags" && m.ref.IsTag,
		pattern == "branches" && !m.ref.IsTag:
		return true
	case pattern != "" && pattern == m.ref.Source.policyKeyword():
		return true
	case isSlashed(pattern):
		re, ok := m.regexps[pattern]
		if !ok {
			// Parse validated the pattern; a Job built by hand may not be.
			re, _ = regexp.Compile(pattern[1 : len(pattern)-1])
			m.regexps[pattern] = re
		}
		return re != nil && re.MatchString(m.ref.Name)
	}
	return pattern == m.ref.Name
}

// splitPolicyPath splits "pattern@group/project" into the pattern and the
// project path. GitLab splits at the first '@', which breaks a regexp or a
// branch name containing one; a project path cannot contain '@', so here the
// split is at the last '@', and a pattern that is a whole /regexp/ has no
// path at all.
func splitPolicyPath(policy string) (pattern, path string) {
	if isSlashed(policy) {
		return policy, ""
	}
	i := strings.LastIndexByte(policy, '@')
	if i < 0 {
		return policy, ""
	}
	return policy[:i], policy[i+1:]
}

// UsesVariableExpressions reports whether a job's only/except has
// `variables` expressions, or the file has rules (a job's or the
// workflow's): only then does JobsFor need RefInfo.Variables.
func (c *Config) UsesVariableExpressions() bool {
	if c.Workflow != nil && len(c.Workflow.Rules) > 0 {
		return true
	}
	for i := range c.Jobs {
		if len(c.Jobs[i].OnlyVariables) > 0 || len(c.Jobs[i].ExceptVariables) > 0 || c.Jobs[i].HasRules {
			return true
		}
	}
	return false
}
