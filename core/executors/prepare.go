package executors

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/fx"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// Option runs executor plugins and provides the *Pool: the one line the
// CI module adds to its fx options.
func Option() fx.Option {
	return fx.Options(
		fennec.PluginKind(executor.Kind),
		fennec.PreparePlugins(Prepare),
		fx.Provide(newPool),
	)
}

// binaryPrefix names the executor binaries found in the plugin directory.
const binaryPrefix = "executor-"

// Prepare is the executors' PluginPreparer: with no executor configured,
// it adds every executor-<name> binary of dir as executor <name>; then it
// gives every executor the host's settings (data_dir, server_data_dir).
func Prepare(cfg config.Config, dir string, plugins []config.Plugin, log *zap.Logger) []config.Plugin {
	out := make([]config.Plugin, 0, len(plugins))
	configured := false
	for _, p := range plugins {
		if p.Kind == executor.Kind.Name {
			configured = true
		}
		out = append(out, p)
	}
	if !configured {
		found := discover(dir)
		if len(found) == 0 {
			log.Warn("no executor: none is configured and no executor-* binary is in the plugin directory; CI jobs will wait", zap.String("dir", dir))
		}
		for _, p := range found {
			log.Info("executor found in the plugin directory", zap.String("executor", p.Name), zap.String("path", filepath.Join(dir, p.Path)))
		}
		out = append(out, found...)
	}
	data, err := filepath.Abs(cfg.Data)
	if err != nil {
		data = cfg.Data
	}
	for i, p := range out {
		if p.Kind != executor.Kind.Name {
			continue
		}
		s := maps.Clone(p.Settings)
		if s == nil {
			s = map[string]any{}
		}
		if _, set := s["data_dir"]; !set {
			s["data_dir"] = executorDataDir(cfg, data, p.Name)
		}
		s["server_data_dir"] = data
		out[i].Settings = s
	}
	return out
}

// executorDataDir is where an executor keeps its jobs' directories unless
// its data_dir is set: <data>/executors/<name>. With a shared store the data
// directory is shared by several nodes, and an executor that starts clears
// what it finds there as its own crash's leftovers, so each node's
// executors work in a directory of the node's own instead: under the
// temporary directory, named after the data directory and the node's
// listen address, which stay the same when the node restarts.
func executorDataDir(cfg config.Config, data, name string) string {
	if cfg.Store == "" {
		return filepath.Join(data, "executors", name)
	}
	sum := sha256.Sum256([]byte(data + "\x00" + cfg.Listen))
	return filepath.Join(os.TempDir(), "fennec-node-"+hex.EncodeToString(sum[:6]), "executors", name)
}

// discover lists the executor binaries in dir, executor-shell first.
func discover(dir string) []config.Plugin {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), binaryPrefix)
		if !ok || name == "" || strings.ContainsAny(name, ". ") {
			continue
		}
		if info, err := e.Info(); err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == "shell":
			return -1
		case b == "shell":
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []config.Plugin
	for _, name := range names {
		settings := map[string]any{"tags": []any{name}, "run_untagged": name == "shell"}
		out = append(out, config.Plugin{Name: name, Kind: executor.Kind.Name, Path: binaryPrefix + name, Settings: settings})
	}
	return out
}

// hostMembers are the host's executor plugins as pool members.
func hostMembers(h *plugin.Host) []Member {
	var ms []Member
	for _, r := range h.Routes(executor.Kind.Name) {
		name := r.Name
		ms = append(ms, Member{Name: name, Executor: r.Value.(executor.Executor), Process: func() Process {
			for _, st := range h.Status() {
				if st.Name == name {
					return Process{PID: st.PID, Running: st.State == plugin.StateRunning, Failed: st.State == plugin.StateFailed}
				}
			}
			return Process{Failed: true}
		}})
	}
	return ms
}
