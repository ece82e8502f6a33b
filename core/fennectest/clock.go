package fennectest

import "time"

// NextMillisecond returns once the wall clock has moved into the next
// millisecond. The stores keep times to the millisecond, so a write made
// after the call gets a later timestamp than every write answered before
// it: a test that checks an order by time has no tie to break, however
// fast the writes are (without fsync two of them often share a
// millisecond). It waits on the clock itself rather than a guessed sleep.
func NextMillisecond() {
	start := time.Now().UnixMilli()
	for time.Now().UnixMilli() == start {
		time.Sleep(50 * time.Microsecond)
	}
}
