package plugin

import (
	"os/exec"
	"syscall"
)

// command is how a plugin process is started: on Linux with SIGTERM as its
// parent-death signal, so that it ends with the host even when the host is
// killed (kill -9, the OOM killer) and cannot stop it. The plugin SDK
// takes SIGTERM as the host being gone: it stops what the plugin started
// (an executor's jobs) and exits.
//
// The kernel sends the signal when the thread that started the process
// ends, not the whole host: each instance's supervisor therefore keeps its
// goroutine on one thread for as long as it runs (instance.run).
func command(path string) *exec.Cmd {
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd
}
