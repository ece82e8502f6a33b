package plugin

import (
	"context"
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
//
// When ctx ends (the host stops) the process gets SIGTERM too, even while
// it is still starting: a plugin that hangs before its handshake does not
// hold the host's stop for the start timeout.
func command(ctx context.Context, path string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	return cmd
}
