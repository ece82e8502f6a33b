package identity

import "github.com/fennec-forge/fennec/modules/identity/internal"

// ReservedNamespace reports whether path is one of the top-level paths no
// user or group may take (api, admin, help, -, robots.txt...), whatever its
// case. Usernames are checked here; the projects module checks group paths
// with it, since users and groups share the top-level namespace.
func ReservedNamespace(path string) bool { return internal.ReservedNamespace(path) }
