package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/backoff"
)

const ms = time.Millisecond

func TestDelayDoublesFromInitialToMax(t *testing.T) {
	p := backoff.Policy{Initial: 100 * ms, Max: 30 * time.Second}
	want := []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms,
		6400 * ms, 12800 * ms, 25600 * ms, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		attempt := i - 2 // -2, -1 and 0 are taken as the first failure (1)
		if got := p.Delay(attempt); got != w {
			t.Errorf("Delay(%d) = %s, want %s", attempt, got, w)
		}
	}
}

func TestDelayNeverOverflows(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Max: time.Hour}
	for _, n := range []int{63, 64, 65, 1000, 1 << 20, math.MaxInt} {
		if got := p.Delay(n); got != time.Hour {
			t.Errorf("Delay(%d) = %s, want the cap", n, got)
		}
	}
	// Max at the largest duration: the wait grows to it, never past it
	// into negative numbers.
	huge := backoff.Policy{Initial: time.Second, Max: math.MaxInt64}
	prev := time.Duration(0)
	for n := 1; n < 200; n++ {
		d := huge.Delay(n)
		if d < prev || d <= 0 {
			t.Fatalf("Delay(%d) = %d after %d", n, d, prev)
		}
		prev = d
	}
	if prev != math.MaxInt64 {
		t.Errorf("Delay(199) = %d, want the cap", prev)
	}
	jittered := backoff.Policy{Initial: time.Second, Max: math.MaxInt64, Jitter: 1, Rand: func() float64 { return 0.999 }}
	for n := 1; n < 200; n++ {
		if d := jittered.Delay(n); d <= 0 {
			t.Fatalf("jittered Delay(%d) = %d", n, d)
		}
	}
}

func TestDelayCap(t *testing.T) {
	custom := backoff.Policy{Initial: 10 * ms, Max: 25 * ms}
	for n, w := range []time.Duration{10 * ms, 20 * ms, 25 * ms, 25 * ms} {
		if got := custom.Delay(n + 1); got != w {
			t.Errorf("Delay(%d) = %s, want %s", n+1, got, w)
		}
	}
	// A Max below Initial, zero included, caps at Initial.
	for _, max := range []time.Duration{0, -time.Second, ms} {
		p := backoff.Policy{Initial: time.Second, Max: max}
		for _, n := range []int{1, 2, 5} {
			if got := p.Delay(n); got != time.Second {
				t.Errorf("Max %s: Delay(%d) = %s, want Initial", max, n, got)
			}
		}
	}
	if got := (backoff.Policy{}).Delay(3); got != 0 {
		t.Errorf("zero policy: %s, want 0", got)
	}
}

func TestDelayMultiplier(t *testing.T) {
	p := backoff.Policy{Initial: 100 * ms, Max: time.Minute, Multiplier: 3}
	if got := p.Delay(3); got != 900*ms {
		t.Errorf("x3 Delay(3) = %s", got)
	}
	for _, m := range []float64{1, 0.5, -2, math.NaN()} {
		p := backoff.Policy{Initial: 100 * ms, Max: time.Minute, Multiplier: m}
		if got := p.Delay(10); got != 100*ms {
			t.Errorf("multiplier %v: Delay(10) = %s, want a constant 100ms", m, got)
		}
	}
}

func TestJitterBounds(t *testing.T) {
	r := 0.0
	p := backoff.Policy{Initial: 100 * ms, Max: time.Second, Jitter: 0.5, Rand: func() float64 { return r }}
	cases := []struct {
		r       float64
		attempt int
		want    time.Duration
	}{
		{0, 1, 100 * ms},   // no jitter drawn: the nominal wait
		{0.5, 1, 125 * ms}, // half of the 50% allowance
		{0.999, 1, 149950 * time.Microsecond},
		{0.5, 3, 500 * ms},    // 400ms + 100ms
		{0.9, 4, time.Second}, // 800ms + 360ms, capped
		{0.9, 9, time.Second}, // at the cap, jitter adds nothing
		{-3, 2, 200 * ms},     // a bad source is clamped to [0, 1]
		{7, 2, 300 * ms},
	}
	for _, c := range cases {
		r = c.r
		if got := p.Delay(c.attempt); got != c.want {
			t.Errorf("rand %v: Delay(%d) = %s, want %s", c.r, c.attempt, got, c.want)
		}
	}
	// Jitter above 1 is taken as 1.
	r = 0.5
	if got := (backoff.Policy{Initial: 100 * ms, Max: time.Second, Jitter: 4, Rand: p.Rand}).Delay(1); got != 150*ms {
		t.Errorf("jitter 4: %s, want 150ms", got)
	}
	// With the real source every wait stays within [nominal, nominal*(1+J)].
	real := backoff.Policy{Initial: 100 * ms, Max: time.Hour, Jitter: 0.2}
	seen := map[time.Duration]bool{}
	for i := 0; i < 1000; i++ {
		d := real.Delay(2)
		if d < 200*ms || d > 240*ms {
			t.Fatalf("Delay(2) = %s, want within [200ms, 240ms]", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Errorf("%d distinct waits in 1000: the jitter does not spread them", len(seen))
	}
}
