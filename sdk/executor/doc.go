// Package executor is the job-executor plugin contract: the Go interface a
// way of running CI jobs (a shell in a fresh directory, a container, a
// cluster scheduler) implements, and the Kind descriptor the host runs such
// plugins by.
//
// This is the skeleton the "how to add a plugin kind" steps of the README
// were checked against: the interface and its types, and a descriptor that
// compiles. The gRPC service (proto/), the client's job methods, Serve, the
// route's Executor methods and the conformance suite land with the CI
// issue; until then Kind routes only Describe and Configure, and nothing
// registers it with the host.
//
// The contract, as ARCHITECTURE.md sets it: outcomes are data, failures are
// errors. A script that exits 1 is a Result with exit code 1; an error from
// Run means the plugin or its machine failed, and the host fails the job as
// a system failure (retryable). Run streams trace chunks, each with its byte
// offset so appends are idempotent, and ends with a Result; the host then
// pulls the artifacts it wants and calls Cleanup. Cancel asks for a graceful
// stop; ending Run's context is the hard stop.
//
// This package imports nothing of Fennec outside sdk/.
package executor
