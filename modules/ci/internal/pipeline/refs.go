package pipeline

import (
	"regexp"
	"strings"
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
}

// JobsFor returns the jobs that belong to a pipeline for ref, in file order,
// applying each job's only/except. Resolve a job's dependencies against the
// result with Job.DependenciesIn. No jobs means the pipeline is not created
// (NoJobsMessage).
func (c *Config) JobsFor(ref RefInfo) []Job {
	m := newRefMatcher(ref)
	var out []Job
	for _, job := range c.Jobs {
		if m.runs(&job) {
			out = append(out, job)
		}
	}
	return out
}

// RunsFor reports whether the job belongs to a pipeline for ref.
func (j *Job) RunsFor(ref RefInfo) bool {
	return newRefMatcher(ref).runs(j)
}

// refMatcher applies policies to one ref, compiling each regexp once.
type refMatcher struct {
	ref     RefInfo
	regexps map[string]*regexp.Regexp
}

func newRefMatcher(ref RefInfo) *refMatcher {
	return &refMatcher{ref: ref, regexps: make(map[string]*regexp.Regexp)}
}

// runs is GitLab's rule: a job with `only` runs when one of its patterns
// matches, and a job with `except` does not run when one of those matches.
// Of only/except written as maps, every key must match; `variables` and
// `changes` are not evaluated yet and count as matching for only and as
// not matching for except (the job is kept either way), and
// `kubernetes: active` never matches (no cluster integration here).
func (m *refMatcher) runs(j *Job) bool {
	if j.OnlyKubernetes {
		return false
	}
	if len(j.Only) > 0 && !m.anyMatches(j.Only) {
		return false
	}
	exceptUnevaluated := len(j.ExceptVariables) > 0 || len(j.ExceptChanges) > 0 || j.ExceptKubernetes
	if len(j.Except) > 0 && !exceptUnevaluated && m.anyMatches(j.Except) {
		return false
	}
	return true
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
