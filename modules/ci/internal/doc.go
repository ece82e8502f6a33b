// Package internal is the CI module's implementation: the store of
// pipelines, jobs, environments, deployments and variables (store.go), the
// engine that makes pipelines and moves jobs through GitLab's statuses
// (engine.go, in the transaction of the change that moved them), the
// scheduler that hands pending jobs to executors and to waiting GitLab
// Runners and records how they end (scheduler.go, handover.go,
// runnerqueue.go), the runners (runners.go: registration, tokens), the
// runner API runners call (runnerapi.go) and the watch over their jobs
// (runnerwatch.go: stuck, never started), and the API (jobsapi.go,
// artifactfiles.go, pipelinesapi.go, envapi.go, varsapi.go, runnersapi.go,
// lintapi.go, triggers.go).
package internal
