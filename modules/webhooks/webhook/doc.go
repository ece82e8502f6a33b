// Package webhook is the public contract of the webhooks module: its
// Service (the delivery logs of project and system hooks, sending a
// payload on demand, the system hooks), the records it returns (Attempt,
// SystemHook), its domain errors, and its configuration section (Config).
// Project hooks themselves are the projects module's (projects.Hooks).
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the
// cycle. It imports no Fennec package.
package webhook
