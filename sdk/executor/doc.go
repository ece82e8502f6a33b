// Package executor is the job-executor plugin contract: the Go interface a
// way of running CI jobs (a shell in a fresh directory, a sandbox, a
// cluster scheduler) implements, the job it is handed, Serve for the
// plugin side, the host-side gRPC Client and the Kind descriptor the host
// runs such plugins by, and the generated protobuf service under proto/.
// Describe, Configure, the handshake, the logger and serving come from the
// base package sdk/plugin, shared by every kind.
//
// A plugin is one small package main:
//
//	func main() {
//		log := executor.NewLogger("my-executor") // before Serve: it swaps stdout and stderr
//		executor.Serve(newExecutor(log), log)
//	}
//
// Package local implements most of an executor that runs jobs on this
// machine (plugins/executor-shell is local as is, plugins/executor-bwrap
// adds a sandbox), package archive the artifacts zip (globs, untracked,
// zip-slip-safe extraction), and package conformance the suite every
// executor must pass.
//
// The contract. Outcomes are data, failures are errors: a script that
// exits 1, a timeout, a cancel, a clone the server refused, a trace or an
// archive past its cap are a Result (exit code, FailureKind, message); an
// error from Run means the executor or its machine failed, and the host
// fails the job as a system failure (retryable). One call, Run, prepares
// the job (work directory, clone at the sha with the job token,
// dependencies' archives downloaded from their URLs with their JOB-TOKEN),
// runs its steps and builds its archive; it streams the trace in ordered
// chunks, each with its byte offset so appends are idempotent, and ends
// with the Result. The host then pulls the archive (Artifacts, a stream)
// and calls Cleanup. Cancel asks for a stop within 2 seconds; ending Run's
// context is the hard stop. Capabilities (tags, untagged jobs,
// concurrency) follow from the settings, whose common keys every executor
// reads alike (CommonSettings); static abilities are Description.Features
// (FeatureIsolation, FeatureNetworkByTag).
//
// On the host, Kind routes each call through the plugin host to the
// current process: Run and Artifacts through plugin.Conn.Stream, free of
// the host's call timeout since they last as long as their job.
//
// This package imports nothing of Fennec outside sdk/.
package executor
