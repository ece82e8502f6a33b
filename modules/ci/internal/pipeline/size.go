package pipeline

import (
	"fmt"

	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// TooManyJobs is the configuration error of a pipeline that would have n
// jobs when a pipeline may have at most limit.
func TooManyJobs(n, limit int) *ConfigError {
	return configError(fmt.Sprintf("jobs config holds %d jobs for this pipeline, more than the limit of %d", n, limit))
}

// ForPipeline selects the jobs of a pipeline that is to be stored: JobsFor's
// jobs for ref, refused with TooManyJobs past maxJobs, and the stages that
// hold them, in order, with each job's StageIndex counted among those
// stages. No jobs gives none, and no error (NoJobsMessage is the caller's);
// a pipeline that `workflow: rules` do not create gives
// ciexpr.ErrWorkflowFiltered. A job needing one that only/except or rules
// left out, unless the need is optional, refuses the pipeline
// (MissingNeeds).
//
// Stages that no job of the pipeline uses are left out, as GitLab lists a
// pipeline's stages from its jobs: every status change of a job looks at
// each stage of its pipeline, and a 1 MiB file can declare some 200,000
// stages, so a pipeline's cost must follow its jobs, which the limit
// bounds, and not the stages list.
func (c *Config) ForPipeline(ref RefInfo, maxJobs int) (stages []string, jobs []Job, err error) {
	wf := c.WorkflowFor(ref)
	if !wf.Create {
		return nil, nil, ciexpr.ErrWorkflowFiltered
	}
	ref.WorkflowVariables = wf.Variables
	jobs = c.JobsFor(ref)
	if onlyPredefinedStages(jobs) {
		// GitLab creates no pipeline of .pre and .post jobs alone.
		return nil, nil, nil
	}
	if len(jobs) > maxJobs {
		return nil, nil, TooManyJobs(len(jobs), maxJobs)
	}
	if missing := MissingNeeds(jobs); len(missing) > 0 {
		return nil, nil, &ConfigError{Messages: missing}
	}
	used := make([]bool, len(c.Stages))
	for i := range jobs {
		used[jobs[i].StageIndex] = true
	}
	index := make([]int, len(c.Stages))
	for i, name := range c.Stages {
		if used[i] {
			index[i] = len(stages)
			stages = append(stages, name)
		}
	}
	for i := range jobs {
		jobs[i].StageIndex = index[jobs[i].StageIndex]
	}
	return stages, jobs, nil
}

// onlyPredefinedStages reports whether every job is in .pre or .post.
func onlyPredefinedStages(jobs []Job) bool {
	for i := range jobs {
		if jobs[i].Stage != StagePre && jobs[i].Stage != StagePost {
			return false
		}
	}
	return true
}
