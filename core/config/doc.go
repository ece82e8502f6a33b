// Package config holds Fennec's one Config struct and loads it from, in
// rising precedence, built-in defaults, an optional YAML file, FENNEC_*
// environment variables and command-line flags.
//
// It imports no other Fennec package; everything else receives a Config value
// (never a global).
package config
