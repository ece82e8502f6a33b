//go:build !linux

package plugin

import (
	"context"
	"os/exec"
)

// command is how a plugin process is started. Without a parent-death
// signal here, a plugin whose host was killed notices it by its parent
// changing (the plugin SDK checks) and exits. When ctx ends (the host
// stops) the process is killed, even while it is still starting.
func command(ctx context.Context, path string) *exec.Cmd {
	return exec.CommandContext(ctx, path)
}
