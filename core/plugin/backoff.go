package plugin

import "time"

// Backoff is the delay before restarting a plugin that died: Min, doubling
// with each failure in a row, capped at Max. A plugin that stayed up for
// longer than Max starts again from Min.
type Backoff struct {
	Min, Max time.Duration
}

// defaultBackoff is 100 ms doubling to 30 s.
var defaultBackoff = Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second}

// Delay is the wait before restart attempt n (0-based).
func (b Backoff) Delay(n int) time.Duration {
	b = b.orDefault()
	d := b.Min
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
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
