// Package sdk is what plugin authors and embedders import: one subpackage per
// plugin contract (the Go interface, Serve for the plugin side, the host-side
// client, the protobuf service with its generated code committed, and a
// conformance suite every implementation must pass).
//
// Contracts: authprovider (auth providers such as plugins/auth-ldap). Job
// executors land with the CI issue. sdk imports nothing else of Fennec.
package sdk
