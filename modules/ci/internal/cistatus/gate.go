package cistatus

import "sort"

// Decision is what stage gating makes of a created job.
type Decision int

// Decisions.
const (
	// DecisionWait: the earlier stages are not complete yet, or a blocking
	// manual job holds them; the job stays created.
	DecisionWait Decision = iota
	// DecisionPending: the job is queued for an executor.
	DecisionPending
	// DecisionManual: the job waits for a user to play it.
	DecisionManual
	// DecisionSkipped: the job's `when` condition is not met; it never runs.
	DecisionSkipped
)

// Status returns the status a decided job moves to, or StatusCreated for
// DecisionWait.
func (d Decision) Status() Status {
	switch d {
	case DecisionPending:
		return StatusPending
	case DecisionManual:
		return StatusManual
	case DecisionSkipped:
		return StatusSkipped
	}
	return StatusCreated
}

func (d Decision) String() string {
	switch d {
	case DecisionPending:
		return "pending"
	case DecisionManual:
		return "manual"
	case DecisionSkipped:
		return "skipped"
	}
	return "wait"
}

// Gate decides a created job from prior, the composite status of all jobs in
// earlier stages (StatusNone when there are none, which counts as success),
// and the job's `when`:
//
//   - prior manual: a blocking manual job holds the pipeline -> wait
//   - prior not completed (created, pending, running) -> wait
//   - on_success and manual run when prior is success or skipped
//   - on_failure runs when prior is failed
//   - always runs when prior is success, failed or skipped
//   - otherwise (including prior canceled for every `when`) -> skipped
//
// "Runs" means pending, or manual for a `when: manual` job.
func Gate(prior Status, when When) Decision {
	if prior == StatusNone {
		prior = StatusSuccess
	}
	if prior == StatusManual || !prior.Completed() {
		return DecisionWait
	}
	var allowed []Status
	switch when {
	case WhenOnSuccess, WhenManual:
		allowed = []Status{StatusSuccess, StatusSkipped}
	case WhenOnFailure:
		allowed = []Status{StatusFailed}
	case WhenAlways:
		allowed = []Status{StatusSuccess, StatusFailed, StatusSkipped}
	}
	for _, s := range allowed {
		if s == prior {
			if when == WhenManual {
				return DecisionManual
			}
			return DecisionPending
		}
	}
	return DecisionSkipped
}

// StagedJob is one job of a pipeline as Process sees it: the index of its
// stage in the pipeline's stage list, its current status and the keywords
// gating reads.
type StagedJob struct {
	StageIndex   int
	Status       Status
	AllowFailure bool
	When         When
}

// Change is a decision Process made: jobs[Index] moves to Status.
type Change struct {
	Index  int
	Status Status
}

// Process applies stage gating to a whole pipeline the way GitLab's
// ProcessPipelineService does: stage by stage in order, each created job is
// decided by Gate from the composite status of every job in earlier stages,
// counting the decisions just made, so a stage whose jobs are all skipped
// lets the next one be decided in the same pass. Pass the latest try of each
// job only. It returns the changes in stage order; jobs is not modified.
func Process(jobs []StagedJob) []Change {
	// Visit jobs stage by stage, keeping their order within a stage.
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].StageIndex < jobs[order[b]].StageIndex })

	var changes []Change
	var prior tally // every job of the stages already visited
	for start := 0; start < len(order); {
		stage := jobs[order[start]].StageIndex
		end := start
		for end < len(order) && jobs[order[end]].StageIndex == stage {
			end++
		}
		priorStatus := prior.status()
		for _, i := range order[start:end] {
			j := jobs[i]
			status := j.Status
			if status == StatusCreated {
				if d := Gate(priorStatus, j.When); d != DecisionWait {
					status = d.Status()
					changes = append(changes, Change{Index: i, Status: status})
				}
			}
			prior.add(JobState{Status: status, AllowFailure: j.AllowFailure})
		}
		start = end
	}
	return changes
}
