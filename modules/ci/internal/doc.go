// Package internal is the CI module's implementation: the store of
// pipelines, jobs, environments, deployments and variables (store.go), the
// engine that makes pipelines and moves jobs through GitLab's statuses
// (engine.go, create.go, and dag.go for jobs with needs, in the
// transaction of the change that moved them), the scheduler that hands pending jobs to executors and to waiting
// GitLab Runners and records how they end (scheduler.go, handover.go,
// runnerqueue.go), the runners (runners.go: registration, tokens), the
// runner protocol runners speak (runnerprotocol.go: a job for a runner,
// its reports, trace and archive) and the watch over their jobs
// (runnerwatch.go: stuck, never started).
//
// Service implements the module's contract, cicd.Service: the pipeline
// and job commands and readers, triggers, CI variables, environments and
// deployments, lint and the runners' commands (pipelines.go, jobs.go,
// artifacts.go, triggers.go, variables.go, environments.go, lint.go,
// runnermanage.go), which speak no HTTP and return cicd's errors. The
// runner protocol is no cicd.Service command, for only runners speak it,
// over HTTP; it too decides with no HTTP and returns domain errors. The
// HTTP adapter over them is the http*.go files (httpjobs.go,
// httppipelines.go, httpartifactfiles.go, httptriggers.go,
// httpvariables.go, httpenvironments.go, httplint.go, httprunners.go,
// httprunnerprotocol.go, httpviews.go, and httperrors.go, the table of
// GitLab's answers). The web pages are the httppages*.go files over the
// same Service (httppages.go registers them: pipelines, environments,
// badges and the jobs' pages), their templates in templates/.
package internal
