package cistatus

// GateNeeds decides a created job that has `needs:` from the latest tries
// of the jobs it needs (those present in the pipeline; none for
// `needs: []`, which runs at once), the way GitLab decides a DAG job
// rather than a staged one:
//
//   - a need that was skipped, or an optional manual job nobody played,
//     means the job's prerequisites will not all run: a job that is not
//     `when: always` is skipped at once, whatever the other needs are
//     doing (a staged job runs after a skipped stage);
//   - otherwise Gate decides from the needs' composite status, so an
//     always job still waits for the needs that run.
//
// A play or retry of a needed job lets its skipped dependents be decided
// again (the scheduler resets them to created).
func GateNeeds(needs []JobState, when When) Decision {
	for _, n := range needs {
		if (n.Status == StatusSkipped || (n.Status == StatusManual && n.AllowFailure)) && when != WhenAlways {
			return DecisionSkipped
		}
	}
	return Gate(Composite(needs), when)
}
