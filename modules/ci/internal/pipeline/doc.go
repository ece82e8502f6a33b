// Package pipeline owns the pure core of a CI pipeline's configuration:
// parsing and validating `.gitlab-ci.yml` with GitLab 9.x's keywords and
// the structural keywords of current GitLab (`default`, `extends`,
// `!reference`, `include: local`, `project` and `remote`, hidden template
// jobs, `parallel`, the current forms of job keywords), with GitLab's
// error wording; the resolved model of
// stages and jobs the scheduler works from (Config, Job), the only/except
// rules that select a ref's jobs (Config.JobsFor), artifacts' expire_in
// durations, the slugs GitLab derives from refs, project paths and
// environment names, `$VAR` expansion, and the predefined variables a job
// receives with their precedence.
//
// A file is read in GitLab's order: YAML (aliases and merge keys, as
// Ruby's Psych applies them), then includes (the including file wins),
// then extends (deep merge), then !reference tags, then validation.
// `parallel:` expands a job into its instances as it is read (parallel.go).
// Keywords Fennec does not run yet (resource_group, secrets, needs of other
// projects and pipelines, ...) are refused by name. `needs:` within the
// pipeline is read and checked across jobs in needs.go.
//
// A configuration error is data: Parse returns a *ConfigError whose first
// message is what the pipeline's yaml_errors shows. No input makes Parse
// panic, and its time and memory are bounded whatever the input: documents
// above MaxConfigBytes are refused, aliases are counted at their full
// expanded size, so a "billion laughs" document is refused quickly, and
// includes (count, depth, total size), extends (depth, merged entries) and
// !reference (depth) have bounds of their own.
//
// The package does no I/O, has no store and no clock: ParseFiles reads
// included files through the Files its caller gives. It imports the
// standard library, gopkg.in/yaml.v3 and the sibling cistatus and ciexpr
// (the CI expression language, for only/except variables) packages only;
// nothing else in Fennec (core, modules, sdk) may be imported here.
package pipeline
