package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// DefaultMultiplier is the growth of the wait when Multiplier is zero.
const DefaultMultiplier = 2

// DefaultJitter is the jitter of the house's retrying loops: enough to
// spread retriers that failed together, small enough that a wait stays
// close to what its configuration says.
const DefaultJitter = 0.2

// Policy is exponential backoff with a cap and jitter. The zero value
// retries at once; set at least Initial.
type Policy struct {
	// Initial is the wait after the first failure.
	Initial time.Duration
	// Max caps the wait; a Max below Initial (zero included) caps at
	// Initial, so Policy{Initial: d} waits d every time.
	Max time.Duration
	// Multiplier is the growth from one wait to the next: 0 means
	// DefaultMultiplier (doubling); below 1 is taken as 1 (a wait never
	// shrinks while failures go on).
	Multiplier float64
	// Jitter, between 0 and 1, adds a random part of up to Jitter times
	// the wait (still capped at Max). 0 gives exact waits.
	Jitter float64
	// Rand returns a number in [0, 1) for the jitter; nil uses
	// math/rand/v2. Tests set it to make jitter deterministic.
	Rand func() float64
}

// Delay is the wait after the attempt-th failure in a row, counted from 1
// (an attempt below 1 is taken as 1): Initial, then Initial*Multiplier,
// and so on up to Max, plus jitter.
func (p Policy) Delay(attempt int) time.Duration {
	if p.Initial <= 0 {
		return 0
	}
	limit := max(p.Max, p.Initial)
	d := p.nominal(attempt, limit)
	j := min(max(p.Jitter, 0), 1)
	if j == 0 || d >= limit {
		return d
	}
	r := p.Rand
	if r == nil {
		r = rand.Float64
	}
	extra := float64(d) * j * min(max(r(), 0), 1)
	if float64(limit-d) <= extra {
		return limit
	}
	return d + time.Duration(extra)
}

// nominal is the wait without jitter, at most limit.
func (p Policy) nominal(attempt int, limit time.Duration) time.Duration {
	m := p.Multiplier
	switch {
	case m == 0:
		m = DefaultMultiplier
	case m < 1 || math.IsNaN(m):
		m = 1
	}
	attempt = max(attempt, 1)
	// In floating point, so a large attempt gives +Inf (capped) instead of
	// wrapping an integer round to a negative or zero wait.
	f := float64(p.Initial) * math.Pow(m, float64(attempt-1))
	if math.IsInf(f, 0) || math.IsNaN(f) || f >= float64(limit) {
		return limit
	}
	return time.Duration(f)
}
