// Package executors is the host side of job executors for the CI module:
// which executor plugins run (Prepare, registered by Option), and the
// Pool that hands each job a free executor that takes it.
//
// The CI module adds Option() to its fx options and asks for *Pool:
//
//	slot, err := pool.Acquire(ctx, job.Tags) // waits for a free executor whose tags cover the job's
//	if err != nil { ... }                     // ErrNoExecutor: none could ever take these tags
//	defer slot.Release()                      // frees the place; Cleanup runs in the background
//	res, err := slot.Run(ctx, job, appendToTrace)
//	switch {
//	case errors.Is(err, executors.ErrExecutorCrashed): // the process died mid-job; it is being restarted
//	case err != nil:                                   // the executor failed: a system failure
//	case res.Artifacts.Filename != "":
//		slot.Artifacts(ctx, file) // the zip
//	}
//	// slot.Cancel(ctx) from elsewhere stops the job within 2 s.
//
// Which executors: the configuration's plugins of kind "executor", in
// order, each with its settings (tags, run_untagged, concurrency and its
// own keys; see sdk/executor.CommonSettings). With none configured, every
// executor-<name> binary in the plugin directory runs as executor <name>:
// executor-shell (the stock default, from `make build`) takes untagged
// jobs and jobs tagged "shell"; any other takes jobs tagged <name> only.
// Either way the host adds data_dir (<data>/executors/<name>, unless set)
// and server_data_dir (<data>) to the settings.
//
// The pool learns each executor's capabilities (tags, concurrency) from
// the plugin after every start of its process, never hands an executor
// more jobs than its concurrency, hands freed places to waiting jobs in
// the order they asked, and spreads jobs over the least loaded executor.
// A process that dies fails the jobs it was running with
// ErrExecutorCrashed; the plugin host restarts it, and the pool takes it
// back once it answers again.
//
// The pool does not hold up the server's start: it learns its executors
// in the background, jobs wait until an executor that takes them is ready,
// and GET /-/readiness lists each executor's state (Readiness, through
// core/api's readiness reports).
//
// It imports core, core/api, core/config, core/plugin and sdk/executor; the
// plugin host (core/plugin) stays kind-agnostic.
package executors
