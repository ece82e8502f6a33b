package plugin

import (
	"time"

	"github.com/fennec-forge/fennec/core/backoff"
)

// Backoff is the delay before restarting a plugin that died: Min, doubling
// with each failure in a row, capped at Max. A plugin that stayed up for
// longer than Max starts again from Min.
type Backoff struct {
	Min, Max time.Duration
}

// defaultBackoff is 100 ms doubling to 30 s.
var defaultBackoff = Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second}

// Delay is the wait before restart attempt n (0-based), by the house's
// retry policy without jitter: a host supervises each plugin once, so
// there is no crowd of restarts to spread, and the waits stay exact.
func (b Backoff) Delay(n int) time.Duration {
	b = b.orDefault()
	return backoff.Policy{Initial: b.Min, Max: b.Max}.Delay(n + 1)
}

func (b Backoff) orDefault() Backoff {
	if b.Min <= 0 {
		b.Min = defaultBackoff.Min
	}
	if b.Max <= 0 {
		b.Max = defaultBackoff.Max
	}
	if b.Max < b.Min {
		b.Max = b.Min
	}
	return b
}
