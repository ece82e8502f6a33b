package internal

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func testThrottle(max int) (*throttle, *time.Time) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(throttleLimits{3, time.Minute}, throttleLimits{5, time.Minute}, max)
	th.now = func() time.Time { return now }
	return th, &now
}

// fail runs one wrong-password attempt; it reports the wait when refused.
func fail(th *throttle, login, addr string) time.Duration {
	a, wait := th.begin(login, addr)
	if a == nil {
		return wait
	}
	return 0 // charged: the failure stays counted
}

func TestThrottleLocksAndExpires(t *testing.T) {
	th, now := testThrottle(100)
	for i := 0; i < 3; i++ {
		if w := fail(th, "Alice", "192.0.2.1:1000"); w != 0 {
			t.Fatalf("attempt %d refused (%s)", i, w)
		}
	}
	// The same login folded, from another address: locked for the window.
	if w := fail(th, "alice", "198.51.100.7:2000"); w != time.Minute {
		t.Fatalf("fourth attempt: wait %s, want 1m", w)
	}
	*now = now.Add(59 * time.Second)
	if w := fail(th, "alice", ""); w != time.Second {
		t.Fatalf("wait %s, want 1s", w)
	}
	*now = now.Add(time.Second)
	if w := fail(th, "alice", ""); w != 0 {
		t.Fatalf("after the window: wait %s", w)
	}
}

func TestThrottleRefunds(t *testing.T) {
	th, _ := testThrottle(100)
	// Failures interleaved with successes of the same login never lock it.
	for i := 0; i < 10; i++ {
		fail(th, "bob", "192.0.2.9:1")
		fail(th, "bob", "192.0.2.9:1")
		a, w := th.begin("bob", "")
		if a == nil {
			t.Fatalf("round %d: refused (%s)", i, w)
		}
		th.succeeded(a)
	}
	// But the address kept its 20 failures: it is locked.
	if _, w := th.begin("carol", "192.0.2.9:5"); w == 0 {
		t.Fatal("the address's failures were cleared by a success")
	}
	// An attempt that was no wrong password gives its charge back, even the
	// one that set the lock.
	th2, _ := testThrottle(100)
	fail(th2, "dave", "")
	fail(th2, "dave", "")
	a, _ := th2.begin("dave", "")
	th2.notFailed(a)
	if a, w := th2.begin("dave", ""); a == nil {
		t.Fatalf("a refunded attempt still locks (%s)", w)
	}
}

// TestThrottleParallelGuesses: the charge is taken before the password is
// checked, so a burst of parallel guesses gets exactly the limit checked.
func TestThrottleParallelGuesses(t *testing.T) {
	th, _ := testThrottle(100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	checked := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, _ := th.begin("erin", ""); a != nil {
				mu.Lock()
				checked++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if checked != 3 {
		t.Fatalf("%d parallel guesses were checked, want 3", checked)
	}
}

func TestThrottleAddressKeys(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:443":                 "192.0.2.1",
		"[::ffff:192.0.2.1]:443":        "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443":    "2001:db8:1:2::",
		"[2001:db8:1:2:ffff::1%eth0]:1": "2001:db8:1:2::",
		"2001:db8:1:2::9":               "2001:db8:1:2::",
		"10.0.0.1":                      "10.0.0.1",
	} {
		got, ok := throttleAddrKey(in)
		if !ok || got != netip.MustParseAddr(want) {
			t.Errorf("%q: got %v %v, want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "@", "pipe:1"} {
		if _, ok := throttleAddrKey(in); ok {
			t.Errorf("%q gave an address", in)
		}
	}
	// Two hosts of one /64 share a count.
	th, _ := testThrottle(100)
	for i := 0; i < 5; i++ {
		fail(th, fmt.Sprintf("u%d", i), fmt.Sprintf("[2001:db8::%x]:1", i+1))
	}
	if _, w := th.begin("other", "[2001:db8::ffff]:1"); w == 0 {
		t.Fatal("the /64 was not locked")
	}
}

// TestThrottleMemoryBound: a flood of distinct logins never grows a table
// past its bound, locks survive the flood, and old entries are dropped.
func TestThrottleMemoryBound(t *testing.T) {
	th, now := testThrottle(100)
	for i := 0; i < 3; i++ {
		fail(th, "victim", "")
	}
	for i := 0; i < 10000; i++ {
		fail(th, fmt.Sprintf("junk-%d-%s", i, string(make([]byte, 1000))), "")
		if n := len(th.logins.entries); n > 100 {
			t.Fatalf("%d login entries after %d inserts, bound 100", n, i)
		}
	}
	if _, w := th.begin("victim", ""); w == 0 {
		t.Fatal("flooding the table lifted a lock")
	}
	*now = now.Add(2 * time.Minute)
	fail(th, "one-more", "")
	if n := len(th.logins.entries); n != 1 {
		t.Fatalf("%d entries after the window, want only the new one", n)
	}
	// A limit of 0 counts nothing.
	off := newThrottle(throttleLimits{0, time.Minute}, throttleLimits{0, time.Minute}, 100)
	for i := 0; i < 100; i++ {
		if _, w := off.begin("x", "192.0.2.1:1"); w != 0 {
			t.Fatal("a throttle turned off refused")
		}
	}
	if len(off.logins.entries)+len(off.addrs.entries) != 0 {
		t.Fatal("a throttle turned off keeps entries")
	}
	// A table full of locks counts no new key rather than dropping a lock.
	full, _ := testThrottle(4)
	for _, l := range []string{"a", "b", "c", "d"} {
		for i := 0; i < 3; i++ {
			fail(full, l, "")
		}
	}
	fail(full, "e", "")
	if len(full.logins.entries) != 4 {
		t.Fatalf("%d entries, want the 4 locks", len(full.logins.entries))
	}
	for _, l := range []string{"a", "b", "c", "d"} {
		if _, w := full.begin(l, ""); w == 0 {
			t.Fatalf("lock of %s lost", l)
		}
	}
}
