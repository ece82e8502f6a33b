// Package plugin is the host side of Fennec's out-of-process plugins (job
// executors, auth providers) over hashicorp/go-plugin and gRPC: discovering
// plugin binaries from the configuration and next to the fennec binary,
// launching them with SecureConfig (sha256), AutoMTLS and SkipHostEnv,
// forwarding their logs into zap, restarting a crashed plugin with backoff
// and killing them on shutdown.
//
// The configuration of plugins is config.Plugin. The machinery itself lands
// with the first plugin contract (auth providers, the identity issue); until
// then this package holds no code. It may import core/config, core/log and
// sdk/, never a module.
package plugin
