// Command executor-bwrap is the isolating job executor shipped with
// Fennec: it runs jobs like executor-shell (sdk/executor/local), but each
// step under bubblewrap (bwrap, Debian's bubblewrap package):
//
//   - the system read-only: the top-level directories of / are bound
//     read-only, except /root, /home, /run, /mnt, /media, /boot and /tmp,
//     which are left out (/run holds sockets such as docker.sock, which a
//     read-only mount would not protect);
//   - a private /tmp, /dev and /proc; new PID, IPC, UTS and cgroup
//     namespaces, so killing the sandbox kills every process in it, and
//     the sandbox dies with the plugin (--die-with-parent): a plugin that
//     crashed leaves no job process behind;
//   - the job's work directory the only writable place; other jobs'
//     directories, Fennec's data directory and the paths in hide are
//     covered by empty file systems;
//   - no network (a network namespace with only loopback) unless one of the
//     job's tags is in network_tags;
//   - no capabilities; when the plugin runs as root, the steps run as user
//     (default nobody, 65534:65534) with no_new_privs.
//
// Cloning, dependency downloads and the artifacts archive happen outside
// the sandbox, in the plugin, never following a link the job made.
//
// Settings: those of executor-shell, and
//
//	network_tags   job tags that give the job the network (default ["network"])
//	hide           more absolute paths the jobs must not see
//	user           "uid:gid" the steps run as when the plugin runs as root (default "65534:65534")
//	bwrap          the bwrap binary (default: bwrap in path)
//
// Configure refuses the settings when bwrap cannot create its namespaces
// on this machine, with bwrap's own message. It imports only sdk/.
package main

import (
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/local"
)

// version is set by the Makefile (-X main.version).
var version = "dev"

func newExecutor(log executor.Logger) *local.Executor {
	return local.New(local.Options{
		Name: "executor-bwrap", Version: version, SettingsSchema: settingsSchema,
		Features: []string{executor.FeatureIsolation, executor.FeatureNetworkByTag},
		Parse:    parseSettings, Log: log,
	})
}

func main() {
	log := executor.NewLogger("executor-bwrap") // before Serve, which redirects stderr
	executor.Serve(newExecutor(log), log)
}
