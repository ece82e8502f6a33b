package internal

// The DAG pass of the scheduler: jobs with `needs:` start when the jobs
// they need complete, whatever their stage. Stage gating never decides
// them: the "state" index files them apart while created
// (statusWaitingNeeds), and process, after its stage pass, asks
// decideNeeds about them. Each is decided by cistatus.GateNeeds from the
// latest tries of the jobs it needs, found through the "name" index.
//
// Cost: a look at the pipeline loads its waiting jobs with needs (not
// every job), and each needed name once, however many jobs need it; a
// needed name is a decode of one row. Jobs waiting on needs are decided
// in chunks as stage jobs are, at most DecideChunkJobs per transaction.

import (
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
)

// nameKey is a job's key in the "name" and "needed_by" indexes.
func nameKey(pipelineID int64, name string) string {
	return store.IDString(pipelineID) + "/" + name
}

// decideNeeds decides the pipeline's created jobs with needs whose needed
// jobs allow it, at most limit of them, and records the states it changes
// in present. It says how many it decided and whether more could be
// decided now (left to later transactions).
func (s *Service) decideNeeds(tx *store.Tx, p *Pipeline, present []map[jobState]bool, limit int, now time.Time) (int, bool, error) {
	needed := map[string]*cistatus.JobState{} // by name; nil: not in the pipeline
	stateOf := func(name string) (*cistatus.JobState, error) {
		if st, ok := needed[name]; ok {
			return st, nil
		}
		ids, err := jobs.IDsBy(tx, "name", nameKey(p.ID, name))
		if err != nil || len(ids) == 0 {
			needed[name] = nil
			return nil, err
		}
		j, err := jobs.Get(tx, ids[len(ids)-1]) // one latest try per name; the newest should there be more
		if err != nil {
			return nil, err
		}
		st := &cistatus.JobState{Status: cistatus.Status(j.Status), AllowFailure: j.AllowFailure}
		needed[name] = st
		return st, nil
	}
	decided := 0
	for stage, states := range present {
		if !states[jobState{statusWaitingNeeds, false}] && !states[jobState{statusWaitingNeeds, true}] {
			continue
		}
		ids, err := idsInState(tx, p.ID, stage, statusWaitingNeeds)
		if err != nil {
			return decided, false, err
		}
		for _, id := range ids {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return decided, false, err
			}
			var prior []cistatus.JobState
			for _, need := range j.Needs {
				st, err := stateOf(need.Job)
				if err != nil {
					return decided, false, err
				}
				if st != nil { // an optional need left out of the pipeline is met
					prior = append(prior, *st)
				}
			}
			d := cistatus.GateNeeds(prior, cistatus.When(j.When))
			if d == cistatus.DecisionWait {
				continue
			}
			if decided == limit {
				return decided, true, nil
			}
			if err := s.decide(tx, p, j, d, now); err != nil {
				return decided, false, err
			}
			decided++
			present[stage][jobState{j.Status, j.AllowFailure}] = true
			// A job decided here may be needed by another of this pass.
			if _, ok := needed[j.Name]; ok {
				needed[j.Name] = &cistatus.JobState{Status: cistatus.Status(j.Status), AllowFailure: j.AllowFailure}
			}
		}
		for _, af := range []bool{false, true} {
			left, err := jobs.IDsBy(tx, "state", stateKey(p.ID, stage, statusWaitingNeeds, af))
			if err != nil {
				return decided, false, err
			}
			if len(left) == 0 {
				delete(present[stage], jobState{statusWaitingNeeds, af})
			}
		}
	}
	return decided, false, nil
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
			j.Status = StatusCreated
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
			queue = append(queue, j.Name)
		}
	}
	return nil
}
