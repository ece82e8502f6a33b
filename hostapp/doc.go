// The fennec command: `fennec serve` runs the host, `fennec backup FILE`
// copies the store (online, while serving), `fennec config` lists every
// setting, `fennec version` prints the version, and the admin commands the
// modules register (`fennec repo gc`, `fennec repo fsck`, ...) run through
// the admin socket of a running server or in an app started for them. See
// `fennec help`.
//
// Package main only turns command lines into core calls; all behaviour lives
// in core/ and modules/.
package main
