// Package sdk is what plugin authors and embedders import. It is a Go module
// of its own (github.com/fennec-forge/fennec/sdk), so a plugin depends on
// this small SDK and not on the whole server.
//
// plugin is the base every kind embeds: Describe and Configure, the
// handshake, logging, Serve, and the Kind descriptor a host runs a kind by.
// Then one subpackage per plugin kind (the Go interface, Serve for the
// plugin side, the host-side client and Kind descriptor, the protobuf
// service with its generated code committed, and a conformance suite every
// implementation must pass): authprovider (auth providers such as
// plugins/auth-ldap) and executor (a skeleton: interface and descriptor;
// the rest lands with the CI issue). sdk imports nothing else of Fennec.
package sdk
