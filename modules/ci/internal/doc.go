// Package internal is the CI module's implementation: the store of
// pipelines, jobs, environments, deployments and variables (store.go), the
// engine that makes pipelines and moves jobs through GitLab's statuses
// (engine.go, create.go, in the transaction of the change that moved
// them), the scheduler that hands pending jobs to executors and to waiting
// GitLab Runners and records how they end (scheduler.go, handover.go,
// runnerqueue.go), the runners (runners.go: registration, tokens), the
// runner API runners call (runnerapi.go) and the watch over their jobs
// (runnerwatch.go: stuck, never started).
//
// Service implements the module's contract, cicd.Service: the pipeline
// and job commands and readers, triggers, CI variables, environments and
// deployments, and lint (pipelines.go, jobs.go, artifacts.go,
// triggers.go, variables.go, environments.go, lint.go), which speak no
// HTTP and return cicd's errors. The HTTP adapter over them is the
// http*.go files (httpjobs.go, httppipelines.go, httpartifactfiles.go,
// httptriggers.go, httpvariables.go, httpenvironments.go, httplint.go,
// httpviews.go, and httperrors.go, the table of GitLab's answers). The
// runners' API (runnersapi.go) and the runner API (runnerapi.go) still
// mix handlers and logic.
package internal
