// Package events is Fennec's typed event bus with a transactional outbox.
//
// A module publishes an event inside the same store transaction as the change
// that caused it (Bus.Publish(tx, ev)); the event is written to an outbox
// bucket and handed to subscribers only after that transaction commits. An
// event stays in the outbox until every subscriber that was registered for its
// topic has handled it, so a crash between commit and delivery loses nothing:
// the next start delivers it again (at-least-once; handlers must tolerate a
// repeat). A failing handler is retried with backoff without holding up the
// other subscribers of the same event.
//
// It imports only core/store and core/backoff (the retry policy) and knows
// no domain.
package events
