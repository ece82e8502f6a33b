// Package plugin is the host side of Fennec's out-of-process plugins over
// hashicorp/go-plugin and gRPC.
//
// A Host is built from the configuration (config.Plugin entries, in order,
// and config.Config.PluginDir). For each entry it resolves the binary
// (resolve.go), pins its sha256, and runs one long-lived process under a
// supervisor (supervise.go): launched with SecureConfig, AutoMTLS,
// SkipHostEnv and gRPC only, described (it must speak API v1) and configured
// with its settings; restarted with capped exponential backoff when it dies
// (calls in flight fail with authprovider.ErrUnavailable); killed on Stop.
// Plugin logs (hclog JSON on the plugin's stderr) are forwarded into zap
// with the plugin's name as a field (hclog.go).
//
// The rest of the application sees plugins through typed views: kind "auth"
// becomes an AuthProvider in AuthProviders (route.go), whose Provider value
// stays valid across restarts and routes each call to the current process.
// Configuration problems (a binary that is missing or does not match its
// sha256, settings the plugin refuses, an unknown kind) are logged clearly
// and leave that plugin out; Fennec starts anyway.
//
// It may import core/config and sdk/, never a module.
package plugin
