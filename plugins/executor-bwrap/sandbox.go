package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/local"
)

const settingsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "executor-bwrap settings",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "tags": {"type": "array", "items": {"type": "string"}, "description": "tags the executor serves"},
    "run_untagged": {"type": "boolean", "description": "take jobs without tags; default true when tags is empty"},
    "concurrency": {"type": "integer", "minimum": 1, "description": "jobs at once; default the number of CPUs, at least 2"},
    "builds_dir": {"type": "string", "description": "absolute directory of the jobs' directories; default <data_dir>/builds"},
    "path": {"type": "string", "description": "the jobs' PATH, where bash, git and bwrap are found"},
    "network_tags": {"type": "array", "items": {"type": "string"}, "default": ["network"], "description": "a job with one of these tags has the network"},
    "hide": {"type": "array", "items": {"type": "string"}, "description": "more absolute paths the jobs must not see"},
    "user": {"type": "string", "default": "65534:65534", "description": "uid:gid the steps run as when the plugin runs as root"},
    "bwrap": {"type": "string", "description": "the bwrap binary; default bwrap in path"},
    "data_dir": {"type": "string", "description": "set by the host: a directory of the executor's own"},
    "server_data_dir": {"type": "string", "description": "set by the host: Fennec's data directory, hidden from jobs"}
  }
}`

type settings struct {
	local.Settings
	NetworkTags []string `json:"network_tags"`
	Hide        []string `json:"hide"`
	User        string   `json:"user"`
	Bwrap       string   `json:"bwrap"`
}

// leftOut are the top-level directories never bound into the sandbox.
var leftOut = []string{"proc", "dev", "tmp", "root", "home", "run", "mnt", "media", "boot", "lost+found"}

// sandbox builds each step's bwrap command line.
type sandbox struct {
	bwrap, setpriv string
	networkTags    []string
	hide           []string
	asRoot         bool // the plugin is root: bwrap keeps the uid and setpriv drops to owner
	owner          *syscall.Credential
}

func parseSettings(raw []byte) (local.Settings, local.Sandbox, error) {
	s := settings{NetworkTags: []string{"network"}, User: "65534:65534"}
	if err := local.DecodeSettings(raw, &s); err != nil {
		return local.Settings{}, nil, err
	}
	path := s.Path
	if path == "" {
		path = local.DefaultPath
	}
	if s.BuildsDir == "" && s.DataDir != "" {
		// local's default, needed here: the builds directory is always
		// covered, so that a job's root is mounted straight into an empty
		// file system (a parent bwrap had to create would be closed to the
		// steps' user) and no job sees another.
		s.BuildsDir = filepath.Join(s.DataDir, "builds")
	}
	sb := &sandbox{networkTags: s.NetworkTags, asRoot: os.Geteuid() == 0}
	var err error
	if s.Bwrap == "" {
		s.Bwrap = "bwrap"
	}
	if sb.bwrap, err = look(s.Bwrap, path); err != nil {
		return local.Settings{}, nil, fmt.Errorf("bwrap: %w (apt-get install bubblewrap)", err)
	}
	for _, h := range append([]string{s.ServerDataDir, s.DataDir, s.BuildsDir}, s.Hide...) {
		if h == "" {
			continue
		}
		if !filepath.IsAbs(h) {
			return local.Settings{}, nil, fmt.Errorf("hide: %q is not an absolute path", h)
		}
		sb.hide = append(sb.hide, filepath.Clean(h))
	}
	// Parents first: a directory covered later would hide what was
	// mounted inside it.
	slices.SortFunc(sb.hide, func(a, b string) int { return len(a) - len(b) })
	if sb.asRoot {
		if sb.setpriv, err = look("setpriv", path); err != nil {
			return local.Settings{}, nil, fmt.Errorf("setpriv (util-linux) is needed to drop to user %s: %w", s.User, err)
		}
		uid, gid, ok := strings.Cut(s.User, ":")
		u, err1 := strconv.ParseUint(uid, 10, 32)
		g, err2 := strconv.ParseUint(gid, 10, 32)
		if !ok || err1 != nil || err2 != nil || u == 0 {
			return local.Settings{}, nil, fmt.Errorf("user %q must be uid:gid with a uid other than 0", s.User)
		}
		sb.owner = &syscall.Credential{Uid: uint32(u), Gid: uint32(g)}
	}
	if err := sb.probe(); err != nil {
		return local.Settings{}, nil, err
	}
	return s.Settings, sb, nil
}

func look(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, path)
}

// probe runs true in the sandbox, so a machine that cannot create the
// namespaces refuses the settings at start-up, not every job.
func (sb *sandbox) probe() error {
	c := sb.command(nil, []string{"true"})
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.ExtraFiles = []*os.File{r}
	go func() {
		w.Write(c.Fd3)
		w.Close()
	}()
	out, err := cmd.CombinedOutput()
	r.Close()
	if err != nil {
		return fmt.Errorf("bwrap cannot create its sandbox on this machine: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Wrap runs argv in the job's sandbox.
func (sb *sandbox) Wrap(job executor.Job, dirs local.Dirs, argv []string) (local.Command, error) {
	network := false
	for _, t := range job.Tags {
		if slices.Contains(sb.networkTags, t) {
			network = true
		}
	}
	// No --chdir: bwrap would change directory before setpriv, as a root
	// without capabilities that may not enter work/; the step script cds.
	// The job's root is bound read-only as a whole (bwrap would create a
	// missing parent of work/ with mode 0700, closed to the steps' user),
	// then work/ read-write on top of it.
	binds := []string{"--ro-bind", dirs.Root, dirs.Root, "--bind", dirs.Work, dirs.Work}
	if network {
		binds = append(binds, "--share-net")
	}
	c := sb.command(binds, argv)
	c.Owner = sb.owner
	return c, nil
}

// command is how bwrap runs cmd: its options (the read-only system, the
// hidden paths, then extra, the job's binds) go through file descriptor 3
// (--args 3), so that its command line, which is what every process of
// the sandbox sees of it in /proc (its PID 1 is bwrap), says nothing of
// the host's layout, the paths hidden or the data directories; only cmd
// follows "--".
func (sb *sandbox) command(extra, cmd []string) local.Command {
	// --die-with-parent: when the plugin dies, the outer bwrap gets its
	// parent-death signal and the sandbox's init, and with it the whole
	// PID namespace, follows; without it a crash left the steps running
	// until the next process's sweep of marked processes.
	a := []string{"--die-with-parent", "--new-session",
		"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"}
	if sb.asRoot {
		// No user namespace: setpriv needs real uids to drop to, and
		// CAP_SETUID/SETGID only for that; setuid clears the rest.
		a = append(a, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
	} else {
		a = append(a, "--unshare-user")
	}
	entries, _ := os.ReadDir("/")
	for _, e := range entries {
		name := e.Name()
		p := "/" + name
		switch {
		case slices.Contains(leftOut, name):
		case e.Type()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", target, p)
			}
		case e.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	a = append(a, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run")
	for _, h := range sb.hide {
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			a = append(a, "--tmpfs", h)
		} else if err == nil {
			a = append(a, "--ro-bind", "/dev/null", h)
		}
	}
	a = append(a, extra...)
	var data []byte
	for _, arg := range a {
		data = append(append(data, arg...), 0)
	}
	argv := []string{sb.bwrap, "--args", "3", "--"}
	if sb.asRoot {
		argv = append(argv, sb.setpriv, "--reuid="+strconv.Itoa(int(sb.owner.Uid)), "--regid="+strconv.Itoa(int(sb.owner.Gid)),
			"--clear-groups", "--no-new-privs", "--")
	}
	return local.Command{Argv: append(argv, cmd...), Fd3: data}
}

var _ local.Sandbox = (*sandbox)(nil)
