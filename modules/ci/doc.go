// Package ci is the CI module: pipelines made from a project's
// .gitlab-ci.yml on every push (and through the API), their jobs run by
// executor plugins (sdk/executor) and by real GitLab Runners (the runner
// API: registration, long-polled job requests, traces, state, artifacts),
// both fed from one queue by one scheduler; the jobs, pipelines,
// environments, deployments, runners and CI variables APIs of GitLab 9.x,
// and the traces and artifacts jobs leave under <data>/ci.
//
// Inside: internal/pipeline parses and validates the CI file (pure),
// internal/cistatus holds GitLab's status rules (pure), and internal/ the
// store, the scheduler and the API. Every job is also a status of its
// commit (repository.CommitStatuses), and every job and pipeline status
// change is published through the outbox (package event).
package ci
