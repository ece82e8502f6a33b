package pipeline

// This file owns `parallel:`: a job written once that GitLab runs as
// several, either `parallel: N` (instances "name 1/N" ... "name N/N") or
// `parallel: {matrix: [...]}` (one instance per combination of the
// variables' values, "name: [a, b]"). Instances are ordinary jobs from
// here on: the scheduler, the executors and the runner protocol never
// learn that they were written as one.

import (
	"fmt"
	"strconv"
	"strings"
)

// maxParallel is GitLab's PARALLEL_LIMIT: the most instances one job may
// have, for a number and for a matrix (summed over its entries).
const maxParallel = 200

// maxJobNameLength is the longest job name GitLab accepts, for a name as
// written and for the name of an instance.
const maxJobNameLength = 255

// maxParallelInstances bounds the instances all the jobs of one file make.
// Each job may have maxParallel; a 1 MiB file may hold tens of thousands of
// jobs, and copying each of them two hundred times would cost gigabytes
// before ci.max_pipeline_jobs (far lower) refused the pipeline.
const maxParallelInstances = 20_000

// instance is one job a parallel job expands to, with the matrix
// variables that made it (none for `parallel: N`), for `needs: parallel:
// matrix`.
type instance struct {
	name   string
	matrix []Variable
}

// parallel expands job by its `parallel:` value v (the job itself when v
// is null); loc is the job's location ("jobs:rspec"). Errors are GitLab's.
func (p *parser) parallel(job Job, v *value, loc string) []Job {
	if len(job.Name) > maxJobNameLength {
		p.errorf("%s name is too long (maximum is %d characters)", loc, maxJobNameLength)
		return nil
	}
	if v.isNull() {
		return []Job{job}
	}
	loc = at(loc, "parallel")
	var combos [][]Variable
	switch {
	case v.kind == kindScalar && (v.tag == "!!int" || v.tag == "!!float"):
		n, ok := p.parallelNumber(v, loc)
		if !ok {
			return nil
		}
		combos = make([][]Variable, n)
	case v.kind == kindMap:
		var ok bool
		if combos, ok = p.matrix(v, loc); !ok {
			return nil
		}
	default:
		p.errorf("%s should be an integer or a hash", loc)
		return nil
	}
	p.instances += len(combos)
	if p.instances > maxParallelInstances {
		if p.instances-len(combos) <= maxParallelInstances {
			p.errorf("The CI configuration is too large: its parallel jobs make more than %d jobs in all", maxParallelInstances)
		}
		return nil
	}
	jobs := make([]Job, 0, len(combos))
	insts := make([]instance, 0, len(combos))
	total := len(combos)
	var own map[string]int // the job's variables by key, for the matrix's to replace
	for i, vars := range combos {
		inst := job
		inst.NodeIndex, inst.NodeTotal = i+1, total
		if vars == nil {
			inst.Name = fmt.Sprintf("%s %d/%d", job.Name, i+1, total)
		} else {
			inst.Name = matrixJobName(job.Name, vars)
			p.mergedVariables += len(job.Variables) + len(vars)
			if p.mergedVariables > maxMergedVariables {
				if p.mergedVariables-len(job.Variables)-len(vars) <= maxMergedVariables {
					p.errorf("The CI configuration is too large: its jobs hold more than %d variables in all", maxMergedVariables)
				}
				return nil
			}
			// Matrix variables are the job's own, over those it wrote
			// (GitLab deep-merges them into the job's variables).
			if own == nil {
				own = indexVariables(job.Variables)
			}
			inst.Variables = mergeVariables(job.Variables, own, vars)
			// They are the job's own to workflow: rules too, whose
			// variables replace only the global ones.
			inst.ownVariables = job.ownVariables[:len(job.ownVariables):len(job.ownVariables)]
			for _, v := range vars {
				inst.ownVariables = append(inst.ownVariables, v.Key)
			}
		}
		if len(inst.Name) > maxJobNameLength {
			p.errorf("jobs:%s name is too long (maximum is %d characters)", inst.Name, maxJobNameLength)
			return nil
		}
		jobs = append(jobs, inst)
		insts = append(insts, instance{name: inst.Name, matrix: vars})
	}
	if p.parallelJobs == nil {
		p.parallelJobs = map[string][]instance{}
	}
	p.parallelJobs[job.Name] = insts
	return jobs
}

// parallelNumber reads `parallel: N`.
func (p *parser) parallelNumber(v *value, loc string) (int, bool) {
	// yaml.v3 reads an integer too large for an int as a float; Ruby
	// reads it as an integer, above the bound.
	n, err := strconv.Atoi(strings.TrimSpace(v.text))
	large := err != nil && isDigits(v.text)
	switch {
	case (v.tag != "!!int" || err != nil) && !large:
		p.errorf("%s config must be an integer", loc)
	case large || n > maxParallel:
		p.errorf("%s config must be less than or equal to %d", loc, maxParallel)
	case n < 1:
		p.errorf("%s config must be greater than or equal to 1", loc)
	default:
		return n, true
	}
	return 0, false
}

// isDigits reports whether text is a positive integer, however large (a
// negative one is below the bound, not above it).
func isDigits(text string) bool {
	text = strings.TrimPrefix(strings.TrimSpace(text), "+")
	if text == "" {
		return false
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// matrix reads `parallel: {matrix: [...]}` into its combinations, in
// GitLab's order: entry by entry, and within an entry the cartesian
// product of its variables' values, the last variable varying fastest.
func (p *parser) matrix(v *value, loc string) ([][]Variable, bool) {
	before := len(p.errs)
	p.unknownKeys(v, loc, "matrix")
	m := v.get("matrix")
	if m == nil {
		p.errorf("%s config missing required keys: matrix", loc)
		return nil, false
	}
	loc = at(loc, "matrix")
	if m.kind != kindSeq {
		p.errorf("%s config should be an array of hashes", loc)
		return nil, false
	}
	for _, entry := range m.items {
		if entry.kind != kindMap {
			p.errorf("%s config should be an array of hashes", loc)
			return nil, false
		}
	}
	entries := make([][]matrixVariable, 0, len(m.items))
	count := 0
	for _, entry := range m.items {
		vars, ok := p.matrixEntry(entry, at(loc, "variables"))
		if !ok {
			continue
		}
		entries = append(entries, vars)
		product := 1
		for _, mv := range vars {
			// Capped as it grows, so that no product overflows.
			product = min(product*len(mv.values), maxParallel+1)
		}
		count = min(count+product, maxParallel+1)
	}
	if len(p.errs) > before {
		return nil, false
	}
	if count > maxParallel {
		p.errorf("%s config generates too many jobs (maximum is %d)", loc, maxParallel)
		return nil, false
	}
	combos := make([][]Variable, 0, count)
	for _, vars := range entries {
		combos = appendProduct(combos, vars, make([]Variable, 0, len(vars)))
	}
	return combos, true
}

// matrixVariable is one key of a matrix entry and its values.
type matrixVariable struct {
	key    string
	values []string
}

// matrixEntry reads one hash of a matrix: each key a string or an integer
// (YAML keys are read as text), each value a non-empty string or integer,
// or a non-empty array of them.
func (p *parser) matrixEntry(v *value, loc string) ([]matrixVariable, bool) {
	if len(v.entries) == 0 {
		p.errorf("%s config requires at least 1 items", loc)
		return nil, false
	}
	out := make([]matrixVariable, 0, len(v.entries))
	for _, e := range v.entries {
		var values []string
		ok := true
		switch e.val.kind {
		case kindScalar:
			values = []string{e.val.text}
			ok = matrixValue(e.val)
		case kindSeq:
			ok = len(e.val.items) > 0
			for _, item := range e.val.items {
				ok = ok && matrixValue(item)
				values = append(values, item.text)
			}
		default:
			ok = false
		}
		if !ok {
			p.errorf("%s config should be a hash of key value pairs, value can be an array", loc)
			return nil, false
		}
		out = append(out, matrixVariable{key: e.key, values: values})
	}
	return out, true
}

// matrixValue: a string that is not empty, or an integer (GitLab refuses
// floats, booleans and nulls).
func matrixValue(v *value) bool {
	return v.kind == kindScalar && (v.tag == "!!str" && v.text != "" || v.tag == "!!int")
}

// appendProduct appends to combos every combination of the values of
// vars, prefix being the variables chosen so far.
func appendProduct(combos [][]Variable, vars []matrixVariable, prefix []Variable) [][]Variable {
	if len(vars) == 0 {
		return append(combos, append([]Variable(nil), prefix...))
	}
	for _, val := range vars[0].values {
		combos = appendProduct(combos, vars[1:], append(prefix, Variable{Key: vars[0].key, Value: val, Public: true}))
	}
	return combos
}

// matrixJobName is GitLab's name of a matrix instance: the job's name and
// the instance's values in the order the entry wrote its keys.
func matrixJobName(name string, vars []Variable) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteString(": [")
	for i, v := range vars {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Value)
	}
	b.WriteString("]")
	return b.String()
}

// flattenJobs lists the jobs' instances in file order, in one slice of
// the right size. An instance named like a job already listed replaces it
// where it stands, as GitLab's hash of jobs by name does.
func flattenJobs(written [][]Job) []Job {
	n := 0
	for _, jobs := range written {
		n += len(jobs)
	}
	out := make([]Job, 0, n)
	index := make(map[string]int, n)
	for _, jobs := range written {
		for _, j := range jobs {
			if i, ok := index[j.Name]; ok {
				out[i] = j
				continue
			}
			index[j.Name] = len(out)
			out = append(out, j)
		}
	}
	return out
}

// expandParallelReferences makes `dependencies: [name]` and `needs:
// [name]` of a parallel job name every instance of it, and a need with
// `parallel: {matrix}` the instances its combinations name, as GitLab's
// normalizer does.
func (p *parser) expandParallelReferences(cfg *Config) {
	for i := range cfg.Jobs {
		j := &cfg.Jobs[i]
		if len(p.parallelJobs) > 0 && p.namesParallelJob(j.Dependencies) {
			deps := make([]string, 0, len(j.Dependencies))
			for _, d := range j.Dependencies {
				insts, ok := p.parallelJobs[d]
				if !ok {
					deps = append(deps, d)
					continue
				}
				for _, inst := range insts {
					deps = append(deps, inst.name)
				}
			}
			j.Dependencies = deps
		}
		if j.Needs != nil && p.needsParallelJob(j.Needs) {
			j.Needs = p.expandNeeds(j.Name, j.Needs)
		}
	}
}

func (p *parser) namesParallelJob(names []string) bool {
	for _, n := range names {
		if _, ok := p.parallelJobs[n]; ok {
			return true
		}
	}
	return false
}

func (p *parser) needsParallelJob(needs []Need) bool {
	for _, n := range needs {
		if _, ok := p.parallelJobs[n.Job]; ok {
			return true
		}
	}
	return false
}

// expandNeeds replaces each need of a parallel job by needs of its
// instances, then checks GitLab's bound on the needs of one job again,
// since the instances count.
func (p *parser) expandNeeds(job string, needs []Need) []Need {
	out := make([]Need, 0, len(needs))
	seen := make(map[string]bool, len(needs))
	add := func(n Need, name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, Need{Job: name, Artifacts: n.Artifacts, Optional: n.Optional})
		}
	}
	for _, n := range needs {
		// As GitLab's normalizer: a matrix picks instances of a parallel
		// job only; a need of any other job stays as written.
		switch insts, parallel := p.parallelJobs[n.Job]; {
		case parallel && n.matrix != nil:
			for _, vars := range n.matrix {
				add(n, matrixJobName(n.Job, vars))
			}
		case parallel:
			for _, inst := range insts {
				add(n, inst.name)
			}
		default:
			add(n, n.Job)
		}
	}
	if len(out) > MaxNeeds {
		p.errorf("%s: one job can only need %d others, but you have listed %d. See needs keyword documentation for more details",
			job, MaxNeeds, len(out))
	}
	return out
}

// needMatrix reads a need's `parallel:`, which takes a matrix only.
func (p *parser) needMatrix(v *value, loc string) ([][]Variable, bool) {
	if v.kind != kindMap {
		if v.kind == kindScalar && v.tag == "!!int" {
			p.errorf("%s config cannot use \"parallel: <number>\".", loc)
		} else {
			p.errorf("%s should be an integer or a hash", loc)
		}
		return nil, false
	}
	return p.matrix(v, loc)
}

// NodeVariables are a job's CI_NODE_INDEX (for an instance of a parallel
// job only) and CI_NODE_TOTAL (1 for any other job), as current GitLab
// sets them.
func NodeVariables(j *Job) []Variable {
	total := max(j.NodeTotal, 1)
	out := make([]Variable, 0, 2)
	if j.NodeIndex > 0 {
		out = append(out, Variable{Key: "CI_NODE_INDEX", Value: strconv.Itoa(j.NodeIndex), Public: true})
	}
	return append(out, Variable{Key: "CI_NODE_TOTAL", Value: strconv.Itoa(total), Public: true})
}
