package notifications_test

import (
	"testing"
	"time"
)

// poll calls check until it reports done, and fails the test with the
// reason check gave last once within has passed. It is how these tests
// wait for something that happens in the background (a delivery, a log
// entry, an empty queue): on the condition itself, never for a fixed
// time. The pause between looks starts at a millisecond (most conditions
// hold within a few) and grows to 10 ms, to spare a loaded machine.
func poll(t testing.TB, within time.Duration, check func() (done bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for {
		done, why := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v: %s", within, why)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
