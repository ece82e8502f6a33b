// Package event is the contract of the events the issues module publishes
// through the outbox, for the webhooks module (GitLab's Issue Hook) and any
// other listener. It is public, apart from the module's root package,
// because the root imports internal/, which publishes these types.
//
// The payloads wait in the outbox: the topic and JSON never change; add
// fields only with omitempty.
package event
