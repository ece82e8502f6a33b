// Package sdk is what plugin authors and embedders import: one subpackage per
// plugin contract (the Go interface, Serve for the plugin side, the host-side
// client, the protobuf service with its generated code committed, and a
// conformance suite every implementation must pass).
//
// The first contract, auth providers, lands with the identity issue; job
// executors with the CI issue. sdk imports nothing else of Fennec.
package sdk
