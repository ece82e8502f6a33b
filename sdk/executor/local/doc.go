// Package local is an executor.Executor that runs jobs on this machine,
// for plugins to build on: executor-shell uses it as is, executor-bwrap
// adds a Sandbox around each step. A third party can write another
// sandbox (firejail, systemd-run, a VM) in a page.
//
// Each job gets a directory of its own under the builds directory:
//
//	<builds>/job-<id>-<random>/   0700, the plugin's
//	  work/<project>/             CI_PROJECT_DIR: the clone at the job's sha, then the steps' files
//	  work/tmp/, work/home/       TMPDIR and HOME
//	  plugin/                     step scripts and file variables (written by the plugin only)
//	  artifacts.zip               the archive (never visible to a sandboxed job)
//
// What a sandboxed job can write (work/) is kept apart from what the
// plugin writes (plugin/, the archive), so a job cannot aim a plugin write
// somewhere else with a symbolic link; the archive is read through an
// os.Root, and git's list of tracked files is taken right after the
// checkout, before any step could change the repository's configuration.
//
// Run, in order: the directories; the clone with the real git CLI (git
// init, fetch of the job's ref with the job token sent as an HTTP header
// rather than stored in .git/config, then of every branch and tag if the
// sha is not under the ref, checkout of the sha); each dependency's
// archive, downloaded with its JOB-TOKEN and extracted (archive.Extract);
// the steps, each a fresh bash (-e -o pipefail) in its own process group,
// its lines echoed as "$ line", stdout and stderr into one ordered trace;
// the artifacts archive when its when applies. Every process a job starts
// carries a marker in its environment: on cancel, timeout and at the end
// of each step the process group and every marked process are killed
// (SIGTERM, then SIGKILL after half a second), so background and detached
// children go too, unless they clear their environment and leave the
// group; a Sandbox with a PID namespace closes that gap.
//
// The first Configure of a process removes job directories a previous
// process left behind (it crashed or was killed), so the builds directory
// must belong to one executor: the host's default,
// <data>/executors/<name>/builds, does.
//
// It imports only sdk/ and the standard library.
package local
