// Package internal implements the webhooks module: the tables (the
// delivery queue, the delivery log, system hooks and the few facts payloads
// need that their events do not carry), the event handlers that enqueue,
// the per-hook workers that send, and the API.
package internal
