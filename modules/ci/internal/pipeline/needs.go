package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// This file reads `needs:` and checks what it says across jobs. A job
// with needs starts as soon as the jobs it names have completed, whatever
// their stage (the scheduler's DAG pass); `needs: []` starts at once. The
// graph is checked when the file is read (undefined jobs, later stages,
// cycles, duplicates) and when a pipeline's jobs are known (a job that
// only/except leaves out, ForPipeline).

// MaxNeeds is how many jobs one job may need: GitLab's default
// ci_needs_size_limit. It also bounds what one job's needs cost the
// scheduler each time it looks at the job.
const MaxNeeds = 50

// Need is one entry of a job's `needs:`.
type Need struct {
	// Job is the needed job's name.
	Job string `json:"job"`
	// Artifacts: the job fetches the needed job's artifacts (the default).
	Artifacts bool `json:"artifacts"`
	// Optional: the needed job may be left out of the pipeline (by
	// only/except); the need then counts as met.
	Optional bool `json:"optional,omitempty"`
	// matrix, from `parallel: {matrix}`, picks the instances of a
	// parallel job this need names (expandParallelReferences); nil for
	// every instance. Read while parsing only.
	matrix [][]Variable
}

// needKeys are the keys of a need written as a hash; needUnsupportedKeys
// are those of needs on other projects and pipelines, not run yet.
var (
	needKeys            = []string{"job", "artifacts", "optional", "project", "pipeline", "ref", "parallel"}
	needUnsupportedKeys = []string{"project", "pipeline", "ref"}
)

// needs reads a job's `needs:`: an array of job names or of hashes
// {job, artifacts, optional}. It returns a non-nil slice, empty for
// `needs: []`, so that a job that wrote the keyword is told apart from one
// that did not (nil).
func (p *parser) needs(v *value, jobName, loc string) []Need {
	if v.kind != kindSeq {
		p.errorf("%s config should be an array", loc)
		return []Need{}
	}
	if len(v.items) > MaxNeeds {
		// Refused before its entries are read: a hostile file may list
		// thousands.
		p.errorf("%s: one job can only need %d others, but you have listed %d. See needs keyword documentation for more details",
			jobName, MaxNeeds, len(v.items))
		return []Need{}
	}
	out := make([]Need, 0, len(v.items))
	seen := make(map[string]bool, len(v.items))
	var duplicated []string
	for _, item := range v.items {
		need, ok := p.need(item, at(loc, "need"))
		if !ok {
			continue
		}
		if seen[need.Job] {
			duplicated = append(duplicated, need.Job)
			continue
		}
		seen[need.Job] = true
		out = append(out, need)
	}
	if len(duplicated) > 0 {
		p.errorf("%s config has the following needs duplicated: %s.", loc, strings.Join(duplicated, ", "))
	}
	return out
}

// need reads one entry of `needs:`.
func (p *parser) need(v *value, loc string) (Need, bool) {
	if v.isString() {
		return Need{Job: v.text, Artifacts: true}, true
	}
	if v.isNull() || v.kind != kindMap {
		p.errorf("%s config can only be a string or a hash", loc)
		return Need{}, false
	}
	for _, key := range needUnsupportedKeys {
		if v.get(key) != nil {
			p.errorf("%s %s is not supported yet: Fennec needs jobs of the same pipeline only", loc, key)
			return Need{}, false
		}
	}
	p.unknownKeys(v, loc, needKeys...)
	need := Need{Artifacts: true}
	job := v.get("job")
	if !job.isString() || job.text == "" {
		p.errorf("%s job should be a string", loc)
		return Need{}, false
	}
	need.Job = job.text
	if par := v.get("parallel"); !par.isNull() {
		var ok bool
		if need.matrix, ok = p.needMatrix(par, at(loc, "parallel")); !ok {
			return Need{}, false
		}
	}
	for _, flag := range []struct {
		key string
		dst *bool
	}{{"artifacts", &need.Artifacts}, {"optional", &need.Optional}} {
		b := v.get(flag.key)
		if b.isNull() {
			continue
		}
		val, ok := boolValue(b)
		if !ok {
			p.errorf("%s %s should be a boolean value", loc, flag.key)
			return Need{}, false
		}
		*flag.dst = val
	}
	return need, true
}

// checkNeeds validates the jobs' needs against each other, once every job
// is valid on its own and has its stage index: each needed job exists
// (unless optional) in the same or an earlier stage, `dependencies:` names
// only needed jobs, and the needs have no cycle.
func (p *parser) checkNeeds(cfg *Config, jobs map[string]*Job) {
	for i := range cfg.Jobs {
		job := &cfg.Jobs[i]
		if job.Needs == nil {
			continue
		}
		needed := make(map[string]bool, len(job.Needs))
		for _, need := range job.Needs {
			needed[need.Job] = true
			other, ok := jobs[need.Job]
			switch {
			case !ok && need.Optional:
			case !ok:
				p.errorf("%s job: undefined need: %s", job.Name, need.Job)
			case other.StageIndex > job.StageIndex:
				p.errorf("%s job: need %s is not defined in current or prior stages", job.Name, need.Job)
			}
		}
		var missing []string
		for _, dep := range job.Dependencies {
			if !needed[dep] {
				missing = append(missing, dep)
			}
		}
		if len(missing) > 0 {
			p.errorf("jobs:%s dependencies the %s should be part of needs", job.Name, strings.Join(missing, ", "))
		}
	}
	if len(p.errs) == 0 {
		if cycle := needsCycle(cfg.Jobs, jobs); cycle != "" {
			p.errorf("The pipeline has circular dependencies: %s", cycle)
		}
	}
}

// needsCycle finds a cycle of needs and words it as GitLab's topological
// sort does, "" when there is none. The walk is iterative and visits each
// job and each need once: a file of thousands of jobs cannot exhaust the
// stack nor take more than linear time.
func needsCycle(list []Job, jobs map[string]*Job) string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(list))
	type frame struct {
		job  *Job
		next int
	}
	for i := range list {
		if state[list[i].Name] != unseen {
			continue
		}
		path := []frame{{job: &list[i]}}
		state[list[i].Name] = onPath
		for len(path) > 0 {
			top := &path[len(path)-1]
			if top.next == len(top.job.Needs) {
				state[top.job.Name] = done
				path = path[:len(path)-1]
				continue
			}
			name := top.job.Needs[top.next].Job
			top.next++
			other, ok := jobs[name]
			if !ok {
				continue // an optional need of a job not in the file
			}
			switch state[name] {
			case onPath:
				if name == top.job.Name {
					return "self-dependency: " + name
				}
				var members []string
				for k := len(path) - 1; k >= 0; k-- {
					members = append(members, strconv.Quote(path[k].job.Name))
					if path[k].job.Name == name {
						break
					}
				}
				reverse(members)
				return fmt.Sprintf("topological sort failed: [%s]", strings.Join(members, ", "))
			case unseen:
				state[name] = onPath
				path = append(path, frame{job: other})
			}
		}
	}
	return ""
}

func reverse(s []string) {
	for i, k := 0, len(s)-1; i < k; i, k = i+1, k-1 {
		s[i], s[k] = s[k], s[i]
	}
}

// MissingNeeds words, GitLab's way, each need of jobs (a pipeline's, from
// JobsFor) on a job that is not among them and is not optional: a job the
// file defines but only/except left out of this pipeline.
func MissingNeeds(jobs []Job) []string {
	present := make(map[string]bool, len(jobs))
	for i := range jobs {
		present[jobs[i].Name] = true
	}
	var out []string
	for i := range jobs {
		for _, need := range jobs[i].Needs {
			if !need.Optional && !present[need.Job] {
				out = append(out, fmt.Sprintf("'%s' job needs '%s' job, but '%s' does not exist in the pipeline. "+
					"This might be because of the only, except, or rules keywords. "+
					"To need a job that sometimes does not exist in the pipeline, use needs:optional.",
					jobs[i].Name, need.Job, need.Job))
			}
		}
	}
	return out
}

// HasNeeds reports whether the job wrote `needs:` (even `needs: []`): it
// then starts when its needs complete, not when its stage's turn comes.
func (j *Job) HasNeeds() bool { return j.Needs != nil }

// FetchesFrom reports whether the job fetches the artifacts of a job of
// the pipeline named name, in the stage of index stage. A job with needs
// fetches from the needed jobs whose need keeps artifacts (narrowed by
// `dependencies:` when it writes one, a subset of its needs); one without
// fetches from earlier stages, all of them or those `dependencies:` names.
func (j *Job) FetchesFrom(name string, stage int) bool {
	named := func() bool {
		for _, d := range j.Dependencies {
			if d == name {
				return true
			}
		}
		return false
	}
	if j.HasNeeds() {
		for _, need := range j.Needs {
			if need.Job == name {
				return need.Artifacts && (j.DependsOnAllEarlier || named())
			}
		}
		return false
	}
	return stage < j.StageIndex && (j.DependsOnAllEarlier || named())
}
