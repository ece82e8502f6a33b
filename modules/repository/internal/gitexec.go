package internal

// The git CLI, run as a process on a repository. Fennec reads and writes
// repositories in-process (go-git, gitpack); the one git process it runs is
// git fsck on the repositories of a restore, whose files came from an
// archive. git acts on much more than objects and refs: the repository's
// config (core.fsmonitor, core.sshCommand, include.path... are commands or
// other files), hooks, the index, alternates, and the environment of
// whoever runs it (GIT_DIR, GIT_CONFIG_*, GIT_INDEX_FILE,
// GIT_OBJECT_DIRECTORY...). Every git process goes through neutralGit,
// which gives it none of the operator's git environment nor any config but
// the repository's own, and sets off what could still run a command. The
// repository's own config must be one Fennec wrote (restore checks the
// archive's and writes Fennec's own in its place before git runs): no flag
// keeps git from reading it.
//
// safe.directory is left alone: git refuses a repository another user
// owns, and the files of a restore belong to the user running it, so the
// check passes without turning it off; with the system and global configs
// ignored, no list of safe directories from them applies either.

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// neutralGit returns git (the CLI's path) run with args on the bare
// repository gitDir, with a neutral configuration.
func neutralGit(ctx context.Context, git, gitDir string, args ...string) *exec.Cmd {
	full := []string{
		"--git-dir=" + gitDir,
		"--no-pager",
		// Command-line config wins over the repository's: whatever it says,
		// no file system monitor and no hooks run, no replace refs change
		// what is read, and nothing is fetched (a promisor remote's lazy
		// fetch included).
		"-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.useReplaceRefs=false",
		"-c", "protocol.allow=never",
	}
	cmd := exec.CommandContext(ctx, git, append(full, args...)...)
	cmd.Dir = gitDir // no discovery from the operator's working directory
	cmd.Env = neutralGitEnv(gitDir)
	return cmd
}

// neutralGitEnv is the environment of a git process: the process's own
// without any GIT_ variable (each one changes what git reads or runs), and
// with no system or global config.
func neutralGitEnv(gitDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_DIR="+gitDir,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
	)
}
