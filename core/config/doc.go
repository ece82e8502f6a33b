// Package config holds the core's Config and the module sections beside it,
// loaded from, in rising precedence, built-in defaults, an optional YAML
// file, FENNEC_* environment variables and command-line flags (a module's
// section: values a host or test sets). Every setting is described once, in
// its struct tags, and the settings table is generated from them.
//
// It imports no other Fennec package; everything else receives a Config value
// (never a global), and each module its own section's struct.
package config
