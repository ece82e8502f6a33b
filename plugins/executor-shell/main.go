// Command executor-shell is the job executor shipped with Fennec and its
// default: each job runs with bash in a work directory of its own under
// the builds directory, after a clone of the project at the job's sha with
// the real git CLI over HTTP with the job token. It kills a job's process
// group (and every process carrying the job's marker) on cancel, timeout
// and at the end of each step, and removes the job's directory on Cleanup.
// When it dies (crash, SIGKILL), the host restarts it, and the new process
// kills what the jobs of the dead one left running before removing their
// directories; a job process that cleared its environment and left its
// process group on purpose escapes that (use executor-bwrap for jobs you
// do not trust). The host starts it; it does not run by hand.
//
// It isolates nothing: jobs run as the user Fennec runs as and can read
// what that user can. Use executor-bwrap for jobs you do not trust.
//
// Settings (a JSON object, see settingsSchema):
//
//	tags           tags it serves (default none)
//	run_untagged   take untagged jobs (default: true without tags)
//	concurrency    jobs at once (default: the number of CPUs, at least 2)
//	builds_dir     where job directories go (default <data_dir>/builds)
//	path           the jobs' PATH, where bash and git are found too
//	data_dir, server_data_dir   set by the host
//
// It imports only sdk/.
package main

import (
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/local"
)

// version is set by the Makefile (-X main.version).
var version = "dev"

const settingsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "executor-shell settings",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "tags": {"type": "array", "items": {"type": "string"}, "description": "tags the executor serves"},
    "run_untagged": {"type": "boolean", "description": "take jobs without tags; default true when tags is empty"},
    "concurrency": {"type": "integer", "minimum": 1, "description": "jobs at once; default the number of CPUs, at least 2"},
    "builds_dir": {"type": "string", "description": "absolute directory of the jobs' directories; default <data_dir>/builds"},
    "path": {"type": "string", "description": "the jobs' PATH; default /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
    "data_dir": {"type": "string", "description": "set by the host: a directory of the executor's own"},
    "server_data_dir": {"type": "string", "description": "set by the host: Fennec's data directory"}
  }
}`

func parseSettings(raw []byte) (local.Settings, local.Sandbox, error) {
	var s local.Settings
	err := local.DecodeSettings(raw, &s)
	return s, nil, err
}

func newExecutor(log executor.Logger) *local.Executor {
	return local.New(local.Options{
		Name: "executor-shell", Version: version, SettingsSchema: settingsSchema,
		Parse: parseSettings, Log: log,
	})
}

func main() {
	log := executor.NewLogger("executor-shell") // before Serve, which redirects stderr
	executor.Serve(newExecutor(log), log)
}
