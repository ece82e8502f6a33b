// Package plugin is the host side of Fennec's out-of-process plugins over
// hashicorp/go-plugin and gRPC, for every kind of plugin alike.
//
// A Host is built from the configuration (config.Plugin entries, in order,
// and config.Config.PluginDir) and the kinds it runs, each given by its
// descriptor (sdk/plugin.Kind, exported by the kind's package, such as
// authprovider.Kind). For each entry it resolves the binary (resolve.go),
// pins its sha256, and runs one long-lived process under a supervisor
// (supervise.go): launched with SecureConfig, AutoMTLS, SkipHostEnv and
// gRPC only, described through the base service (it must be of the
// configured kind and speak the kind's API version) and configured with its
// settings; restarted with capped exponential backoff when it dies (calls
// in flight fail with sdk/plugin.ErrUnavailable); killed on Stop, and
// ending with the host however it ends (a parent-death signal on Linux,
// pdeathsig_linux.go; the SDK's side exits when re-parented). Plugin
// logs (hclog JSON on the plugin's stderr) are forwarded into zap with the
// plugin's name as a field (hclog.go).
//
// The rest of the application sees plugins through Routes(kind): for each
// runnable plugin, the value the kind's descriptor made of the host's
// stable handle on it (conn.go, an sdk/plugin.Conn), such as an
// authprovider.Provider that routes each call to the current process.
// Configuration problems (a binary that is missing or does not match its
// sha256, settings the plugin refuses, an unknown kind) are logged clearly
// and leave that plugin out; Fennec starts anyway.
//
// It may import core/config, core/backoff (the retry policy) and the base
// package sdk/plugin; never a plugin kind (sdk/authprovider, ...) and never
// a module, so a new kind is a descriptor and a client, not a change here.
// The architecture test enforces it.
package plugin
