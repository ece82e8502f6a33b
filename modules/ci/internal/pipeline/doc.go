// Package pipeline owns the pure core of a CI pipeline's configuration:
// parsing and validating `.gitlab-ci.yml` with GitLab 9.x's keywords and
// error wording (Parse), the resolved model of stages and jobs the scheduler
// works from (Config, Job), the only/except rules that select a ref's jobs
// (Config.JobsFor), artifacts' expire_in durations, the slugs GitLab derives
// from refs, project paths and environment names, `$VAR` expansion, and the
// predefined variables a job receives with their precedence.
//
// A configuration error is data: Parse returns a *ConfigError whose first
// message is what the pipeline's yaml_errors shows. No input makes Parse
// panic, and its time and memory are bounded whatever the input: documents
// above MaxConfigBytes are refused, and aliases are counted at their full
// expanded size, so a "billion laughs" document is refused quickly.
//
// The package has no I/O, no store and no clock. It imports the standard
// library, gopkg.in/yaml.v3 and the sibling cistatus package only; nothing
// else in Fennec (core, modules, sdk) may be imported from here.
package pipeline
