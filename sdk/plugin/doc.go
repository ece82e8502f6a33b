// Package plugin is the base every Fennec plugin kind is built on, the part
// that does not depend on what a plugin does (signing users in, running
// jobs):
//
//   - Base, the two methods every plugin implements: Describe (name,
//     version, the API versions of its kind's contract, features, the JSON
//     schema of its settings) and Configure (its settings as JSON);
//   - the go-plugin handshake shared by the host and every plugin, and the
//     glue that puts the base service and a kind's service on one gRPC
//     server (Serve) or hands the host the connection (HostPlugins);
//   - NewLogger, the hclog JSON logger on standard error that the host
//     forwards into its own log (build it before Serve, which swaps stdout
//     and stderr);
//   - Kind, the descriptor a host runs a kind of plugin by, and Conn, the
//     host's stable handle on one configured plugin that a kind's Route
//     turns into the kind's Go interface;
//   - the errors every kind shares: ErrUnavailable (the plugin or its
//     machine failed), ErrInvalidSettings, ErrNotSupported.
//
// A kind package (authprovider, executor) embeds Base in its Go interface,
// defines its own gRPC service, and exports a Kind. Authors of a plugin use
// the kind package; they rarely import this one directly.
//
// It imports nothing of Fennec outside sdk/ (the host side lives in
// core/plugin, which imports this package and no kind).
package plugin
