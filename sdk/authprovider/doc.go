// Package authprovider is the auth-provider plugin contract: the Go interface
// a directory (LDAP, an HR database, ...) implements to let users sign in to
// Fennec with its credentials, Serve for the plugin side, the host-side gRPC
// Client and the Kind descriptor the host runs it by, and the generated
// protobuf service under proto/. Describe, Configure, the handshake, the
// logger and serving come from the base package sdk/plugin, shared by every
// kind.
//
// A plugin is one small package main:
//
//	func main() {
//		log := authprovider.NewLogger("my-directory") // before Serve: it swaps stdout and stderr
//		authprovider.Serve(newDirectory(log))
//	}
//
// Outcomes are data, failures are errors. A wrong password, an unknown user
// or a disabled account is a rejection: the methods return one of the
// sentinels ErrInvalidCredentials, ErrUnknownUser or ErrDisabled (wrapped or
// not; the host tests with errors.Is), and it travels over gRPC as a normal
// response with a reason, never as a gRPC error. Any other error means the
// provider or its machine failed; on the host side it wraps ErrUnavailable,
// and the host tries the next provider.
//
// Optional abilities are one-method interfaces (UserSearcher, UserSyncer)
// that a provider announces in Description.Features; a method the provider
// does not implement returns ErrNotSupported.
//
// Every implementation must pass the suite in the conformance subpackage.
// This package imports nothing of Fennec outside sdk/.
package authprovider
