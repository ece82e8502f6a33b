// Package cicd is the public contract of the CI module (issue 36, "A
// module's anatomy"): what a web page, an admin command, another module or
// an embedder may ask of CI without HTTP, and what it answers. It defines
// the Service (pipelines and jobs: create, retry, cancel, play, erase, and
// the readers of a job's trace and artifacts), the records it returns with
// their named ids (PipelineID, JobID), the inputs of its commands, its
// sentinel errors, the queries other modules make about a commit's
// pipelines (Pipelines), and the module's settings and plug points (Config,
// Executors). The events are package event's.
//
// The name: the module serves pipelines and their jobs, and "pipeline" is
// taken by internal/pipeline (the CI file's parser), which most of the
// implementation imports beside this package; cicd names both halves of
// the work without an import alias in every file.
//
// It imports no HTTP (the architecture test holds it to that): the
// implementation in internal/ returns these errors wrapped with %w, and
// the module's HTTP adapter maps each to GitLab's answer.
package cicd
