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
// carries a mark in its environment, FENNEC_JOB_MARK=<the job's
// directory>: on cancel, timeout and at the end of each step the process
// group and every marked process are killed (SIGTERM, then SIGKILL after
// half a second), so background and detached children go too, unless they
// clear their environment and leave the group; a Sandbox with a PID
// namespace closes that gap.
//
// The trace is read from the steps' pipe a chunk at a time (under 32 KiB,
// so that over gRPC each chunk is one message in one of gRPC's 32 KiB
// buffers) and the next read waits until the chunk is sent: a job printing
// faster than the host takes its trace waits on its pipe, and a job holds
// a chunk's buffer and its copy whatever it prints.
//
// When the host is gone (killed with it, the plugin gets SIGTERM or finds
// itself re-parented) or closes the connection, sdk/plugin's Serve calls
// Stop, which kills every process of the jobs running before the plugin
// exits. When the executor's own process dies (it crashed or was killed
// with SIGKILL), its jobs' shells die with it (their parent-death signal)
// but what they started goes on, re-parented to init. The first Configure of the next process
// therefore kills every process whose mark is a job directory under the
// builds directory, then removes those directories; Cleanup of a job the
// process does not hold does the same for that job's. Processes of the
// shell executor that cleared their environment and left their process
// group escape this too (out of scope: a job that hides on purpose needs a
// sandbox); a sandbox's processes are found by the mark that bwrap and
// setpriv pass on, and executor-bwrap's --die-with-parent already takes
// the whole PID namespace down with the plugin. The builds directory must
// belong to one executor: the host's default,
// <data>/executors/<name>/builds, does.
//
// It imports only sdk/ and the standard library.
package local
