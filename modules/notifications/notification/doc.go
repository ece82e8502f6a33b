// Package notification is the public contract of the notifications
// module: the Service that reads and changes a user's notification
// settings (their global one, a group's, a project's), the record it
// returns (Setting), the change a command gives (Change), the levels and
// custom events, its errors, and the module's configuration section
// (Config).
//
// An HTTP request, a page and an embedder's Go code change settings
// through this Service, as the principal auth.FromContext(ctx) names; the
// module's HTTP adapter only decodes, calls it, renders GitLab's JSON and
// maps the errors below to GitLab's answers. The mail itself (recipients,
// rendering, the sender) is the module's own business: it follows the
// events of the modules below and has no caller.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the
// cycle. It imports no Fennec package.
package notification
