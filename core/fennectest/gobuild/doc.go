// Package gobuild builds the Go programs that tests run as real processes
// (the shipped plugins, test plugins, the fennec binary) once per source
// instead of once per test or per test binary: `go test ./...` runs one
// binary per package, and several of them used to link the same plugin.
//
// A build is cached under the system temp directory, keyed by the Go
// toolchain, the build flags and the content of every source file the
// program depends on; a file lock lets the test binaries of one run (which
// go test starts in parallel) wait for each other's build instead of
// repeating it. A later run reuses it while nothing it depends on changed.
//
// It imports no Fennec package, so any test may use it.
package gobuild
