// Package webhook is the public contract of the webhooks module. Today it
// holds the module's configuration section (Config); the Service over the
// delivery log and the system hooks follows as issue 36's conversion
// continues.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ uses this: Go forbids the cycle. It
// imports no Fennec package.
package webhook
