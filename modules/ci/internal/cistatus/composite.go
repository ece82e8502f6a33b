package cistatus

// JobState is what the composite status needs to know about one job: its
// status and whether it is allowed to fail. Callers pass only the latest
// try of each job (a retried job's older tries do not count).
type JobState struct {
	Status       Status
	AllowFailure bool
}

// ignored reports whether a job does not count towards a composite status:
// an allowed-to-fail job that failed or was canceled (it becomes a warning)
// and an optional manual job (a manual job that is allowed to fail, which is
// every manual job unless it sets allow_failure: false).
func (j JobState) ignored() bool {
	if !j.AllowFailure {
		return false
	}
	switch j.Status {
	case StatusFailed, StatusCanceled, StatusManual:
		return true
	}
	return false
}

// warning reports whether the job is a failure that was allowed.
func (j JobState) warning() bool {
	return j.AllowFailure && (j.Status == StatusFailed || j.Status == StatusCanceled)
}

// Composite returns the status of a set of jobs (a stage or a pipeline)
// with GitLab 9.x's rules, tried in order on the jobs that count (see
// ignored); the rule numbers are those of GITLAB-FACTS section 10:
//
//  1. all skipped and some allowed failure -> success
//  2. all skipped -> skipped
//  3. all success -> success
//  4. all created -> created
//  5. success and skipped only -> success
//  6. success, skipped and canceled only -> canceled
//  7. created, skipped and pending only -> pending
//  8. any running or pending -> running
//  9. any manual -> manual
//  10. any created -> running
//  11. otherwise -> failed
//
// "All skipped" holds when no job counts, so a set made only of optional
// manual jobs is skipped, as in GitLab. An empty set has no status at all
// (StatusNone, GitLab's NULL).
func Composite(jobs []JobState) Status {
	var t tally
	for _, j := range jobs {
		t.add(j)
	}
	return t.status()
}

// tally counts jobs by status so that a composite status can be built up
// one job at a time (Process adds stage after stage).
type tally struct {
	jobs, warnings                                                         int
	counted, created, pending, running, success, skipped, canceled, manual int
	waitingForResource, scheduled                                          int
}

func (t *tally) add(j JobState) {
	t.jobs++
	if j.warning() {
		t.warnings++
	}
	if j.ignored() {
		return
	}
	t.counted++
	switch j.Status {
	case StatusCreated:
		t.created++
	case StatusPending:
		t.pending++
	case StatusRunning:
		t.running++
	case StatusSuccess:
		t.success++
	case StatusSkipped:
		t.skipped++
	case StatusCanceled:
		t.canceled++
	case StatusManual:
		t.manual++
	case StatusWaitingForResource:
		t.waitingForResource++
	case StatusScheduled:
		t.scheduled++
	}
}

func (t *tally) status() Status {
	if t.jobs == 0 {
		return StatusNone
	}
	counted, created, pending, running := t.counted, t.created, t.pending, t.running
	success, skipped, canceled, manual := t.success, t.skipped, t.canceled, t.manual
	warnings := t.warnings > 0
	switch {
	case counted == skipped && warnings: // rule 1
		return StatusSuccess
	case counted == skipped: // rule 2
		return StatusSkipped
	case counted == success: // rule 3
		return StatusSuccess
	case counted == created: // rule 4
		return StatusCreated
	case counted == success+skipped: // rule 5
		return StatusSuccess
	case counted == success+skipped+canceled: // rule 6
		return StatusCanceled
	case counted == created+skipped+pending: // rule 7
		return StatusPending
	case running+pending > 0: // rule 8
		return StatusRunning
	case t.waitingForResource > 0: // GitLab 12.7's, before manual
		return StatusWaitingForResource
	case manual > 0: // rule 9
		return StatusManual
	case t.scheduled > 0: // GitLab 11.4's, after manual
		return StatusScheduled
	case created > 0: // rule 10
		return StatusRunning
	default: // rule 11
		return StatusFailed
	}
}
