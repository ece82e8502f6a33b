//go:build !linux

package plugin

import "os/exec"

// command is how a plugin process is started. Without a parent-death
// signal here, a plugin whose host was killed notices it by its parent
// changing (the plugin SDK checks) and exits.
func command(path string) *exec.Cmd {
	return exec.Command(path)
}
