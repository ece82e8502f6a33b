package workqueue

// PauseRenewals stops q renewing the leases of the jobs it runs, as a
// paused process (or one cut off from the store) would: to the other
// workers the job's worker is dead once its lease ends.
func PauseRenewals(q *Queue) { q.paused.Store(true) }
