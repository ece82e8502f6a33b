// The fennec command: `fennec serve` runs the host, `fennec backup FILE`
// copies the store (online, while serving), `fennec version` prints the
// version. See `fennec --help`.
//
// Package main only turns command lines into core calls; all behaviour lives
// in core/ and modules/.
package main
