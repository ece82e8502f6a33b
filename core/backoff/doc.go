// Package backoff is Fennec's one retry policy: how long a loop that
// retries waits before its next try. Every loop that retries (the plugin
// host's restarts, the event bus, the ref journal, webhook deliveries,
// mail, the work queue) asks a Policy instead of doubling a delay of its
// own, so the rules below hold everywhere and are tested once.
//
// The wait after the n-th failure in a row is Initial * Multiplier^(n-1),
// never more than Max (nor less than Initial), computed without overflow
// however large n grows. Jitter spreads the waits of many retriers that
// failed together (a receiver that came back, a restarted store) so they
// do not all come back at the same instant: it adds up to Jitter times the
// wait, and never takes any away, so a configured initial wait stays the
// shortest wait and Max stays the longest. Sites whose tests assert exact
// delays use Jitter 0; tests of jitter itself set Rand.
//
// It imports no other Fennec package.
package backoff
