package internal

// The DAG pass of the scheduler: jobs with `needs:` start when the jobs
// they need complete, whatever their stage. Stage gating never decides
// them: the "state" index files them apart while created
// (statusWaitingNeeds), and process, after its stage pass, asks
// decideNeeds about them. Each is decided by cistatus.GateNeeds from the
// latest tries of the jobs it needs, found through the "name" index.
//
// The pass must not look at every waiting job each time: process runs on
// every change of every job, and a pipeline of n jobs waiting on needs
// would cost n² decodes (a 200-job DAG took four times as long as the
// same jobs in stages). So a waiting job is filed under the need that
// holds it (BlockedOn, "blocked" index), and a needed job, once settled
// (finished, or manual), is listed as "unsettled" until the pass has seen
// it in that status (SeenAs): the pass looks only at the jobs held by
// what settled since, and at the jobs that have just started to wait
// (BlockedOn ""). Each job is then looked at about once per need over
// the pipeline's life. Jobs are decided in chunks as stage jobs are, at
// most DecideChunkJobs per transaction.

import (
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// nameKey is a job's key in the "name" and "needed_by" indexes.
func nameKey(pipelineID int64, name string) string {
	return store.IDString(pipelineID) + "/" + name
}

// decideNeeds decides the pipeline's waiting jobs with needs that may be
// decided now, at most limit of them, and records the states it changes
// in present. It says how many it decided and whether more could be
// decided now (left to later transactions).
func (s *Service) decideNeeds(tx *store.Tx, p *Pipeline, present []map[jobState]bool, limit int, now time.Time) (int, bool, error) {
	if !waitingForNeeds(present) {
		return 0, false, nil
	}
	d := needsPass{s: s, tx: tx, p: p, present: present, limit: limit, now: now, needed: map[string]*cistatus.JobState{}}
	// Jobs that have just started to wait.
	ids, err := jobs.IDsBy(tx, "blocked", nameKey(p.ID, ""))
	if err != nil {
		return 0, false, err
	}
	if more, err := d.evaluateAll(ids); more || err != nil {
		return d.decided, more, err
	}
	// Jobs held by a need that has settled since the last pass.
	ids, err = jobs.IDsBy(tx, "unsettled", store.IDString(p.ID))
	if err != nil {
		return d.decided, false, err
	}
	for _, id := range ids {
		n, err := jobs.Get(tx, id)
		if err != nil {
			return d.decided, false, err
		}
		held, err := jobs.IDsBy(tx, "blocked", nameKey(p.ID, n.Name))
		if err != nil {
			return d.decided, false, err
		}
		if more, err := d.evaluateAll(held); more || err != nil {
			return d.decided, more, err // n stays unsettled: its held jobs are looked at again
		}
		n.SeenAs = n.Status
		if err := jobs.Update(tx, n); err != nil {
			return d.decided, false, err
		}
	}
	for stage := range present {
		for _, af := range []bool{false, true} {
			if !present[stage][jobState{statusWaitingNeeds, af}] {
				continue
			}
			left, err := jobs.IDsBy(tx, "state", stateKey(p.ID, stage, statusWaitingNeeds, af))
			if err != nil {
				return d.decided, false, err
			}
			if len(left) == 0 {
				delete(present[stage], jobState{statusWaitingNeeds, af})
			}
		}
	}
	return d.decided, false, nil
}

// waitingForNeeds reports whether a stage holds jobs waiting for needs.
func waitingForNeeds(present []map[jobState]bool) bool {
	for _, states := range present {
		if states[jobState{statusWaitingNeeds, false}] || states[jobState{statusWaitingNeeds, true}] {
			return true
		}
	}
	return false
}

// needsPass is one call of decideNeeds.
type needsPass struct {
	s       *Service
	tx      *store.Tx
	p       *Pipeline
	present []map[jobState]bool
	limit   int
	now     time.Time
	decided int
	// needed caches the state of each needed name looked up; nil: not in
	// the pipeline.
	needed map[string]*cistatus.JobState
}

// stateOf is the state of the latest try of the job named name.
func (d *needsPass) stateOf(name string) (*cistatus.JobState, error) {
	if st, ok := d.needed[name]; ok {
		return st, nil
	}
	ids, err := jobs.IDsBy(d.tx, "name", nameKey(d.p.ID, name))
	if err != nil || len(ids) == 0 {
		d.needed[name] = nil
		return nil, err
	}
	j, err := jobs.Get(d.tx, ids[len(ids)-1]) // one latest try per name; the newest should there be more
	if err != nil {
		return nil, err
	}
	st := &cistatus.JobState{Status: cistatus.Status(j.Status), AllowFailure: j.AllowFailure}
	d.needed[name] = st
	return st, nil
}

// evaluateAll looks at the waiting jobs of ids, in order; it says whether
// it stopped at the limit.
func (d *needsPass) evaluateAll(ids []int64) (bool, error) {
	for _, id := range ids {
		j, err := jobs.Get(d.tx, id)
		if err != nil {
			return false, err
		}
		if !j.waitsForNeeds() {
			continue // decided earlier in this pass
		}
		if more, err := d.evaluate(j); more || err != nil {
			return more, err
		}
	}
	return false, nil
}

// evaluate decides a waiting job when its needs allow, or files it under
// the first need that holds it. It says whether it stopped at the limit.
func (d *needsPass) evaluate(j *Job) (bool, error) {
	var prior []cistatus.JobState
	blocker := ""
	for _, need := range j.Needs {
		st, err := d.stateOf(need.Job)
		if err != nil {
			return false, err
		}
		if st == nil {
			continue // an optional need left out of the pipeline is met
		}
		if blocker == "" && !st.Status.Completed() {
			blocker = need.Job
		}
		prior = append(prior, *st)
	}
	decision := cistatus.GateNeeds(prior, cistatus.When(j.When))
	if decision == cistatus.DecisionWait {
		if blocker == "" || blocker == j.BlockedOn {
			return false, nil
		}
		j.BlockedOn = blocker
		return false, jobs.Update(d.tx, j)
	}
	if d.decided == d.limit {
		return true, nil
	}
	if err := d.s.decide(d.tx, d.p, j, decision, d.now); err != nil {
		return false, err
	}
	d.decided++
	d.present[j.StageIdx][jobState{j.Status, j.AllowFailure}] = true
	if _, ok := d.needed[j.Name]; ok { // another job of this pass may need it
		d.needed[j.Name] = &cistatus.JobState{Status: cistatus.Status(j.Status), AllowFailure: j.AllowFailure}
	}
	return false, nil
}

// settled reports whether a needed job in this status may let the jobs
// that need it be decided (or be filed under another need).
func settled(status string) bool { return finished(status) || status == StatusManual }

// neededNames are the names of the pipeline's jobs, and those some job
// needs.
func neededNames(specs []pipeline.Job) (present, needed map[string]bool) {
	present = make(map[string]bool, len(specs))
	needed = map[string]bool{}
	for i := range specs {
		present[specs[i].Name] = true
		for _, n := range specs[i].Needs {
			needed[n.Job] = true
		}
	}
	return present, needed
}

// firstBlocker is the need a new job waits for first: the first of its
// needs in the pipeline, "" for none (the DAG pass then decides it at
// once).
func firstBlocker(needs []pipeline.Need, present map[string]bool) string {
	for _, n := range needs {
		if present[n.Job] {
			return n.Job
		}
	}
	return ""
}

// resetSkippedDependents lets the skipped jobs that need the job named
// name, and those that need them in turn, be decided again: the job is
// being retried or played, so what its skip skipped may run after all. It
// is GitLab's reset of skipped jobs for needs; a staged job skipped by a
// stage stays skipped, as in GitLab 9.x, unless the whole pipeline's
// failures are retried.
func resetSkippedDependents(tx *store.Tx, pipelineID int64, name string) error {
	queue := []string{name}
	seen := map[string]bool{name: true}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		ids, err := jobs.IDsBy(tx, "needed_by", nameKey(pipelineID, next))
		if err != nil {
			return err
		}
		for _, id := range ids {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			if j.Status != StatusSkipped || seen[j.Name] {
				continue
			}
			seen[j.Name] = true
			j.Status, j.BlockedOn = StatusCreated, ""
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
			queue = append(queue, j.Name)
		}
	}
	return nil
}
