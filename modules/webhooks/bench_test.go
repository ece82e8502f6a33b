package webhooks_test

import (
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkPushTo10Hooks: pushes (through the commits API) to a project
// with 10 hooks and to one without, alternately, in the same run. It
// reports the push request's latency with and without hooks, and the time
// from the push request to the last of its 10 deliveries (medians, and the
// worst delivery time).
//
//	go test -run '^$' -bench PushTo10Hooks -benchtime 1x ./modules/webhooks/
func BenchmarkPushTo10Hooks(b *testing.B) {
	e := start(b, true, fennectest.WithLogger(zap.NewNop()))
	alice := e.CreateUser(b, "alice")
	hooked := stocktest.NewProject(b, alice.Client, "hooked", "private")
	plain := stocktest.NewProject(b, alice.Client, "plain", "private")
	rcv := newReceiver(b)
	const hooks = 10
	for i := range hooks {
		addHook(b, alice.Client, hooked.ID, rcv.URL+"/h"+strconv.Itoa(i), "")
	}
	commitFile(b, alice.Client, hooked.ID, "master", "f", "warm")
	commitFile(b, alice.Client, plain.ID, "master", "f", "warm")
	rcv.waitFor(b, "", hooks)
	const pushes = 30
	var with, without, last []float64
	b.ResetTimer()
	for range b.N {
		for i := range pushes {
			start := time.Now()
			sha := commitFile(b, alice.Client, hooked.ID, "master", "f", strconv.Itoa(i)).ID
			with = append(with, ms(time.Since(start)))
			// Wait for the 10 deliveries of sha (the receiver stamps their
			// arrival: how soon the wait sees them does not count).
			var at []time.Time
			fennectest.Poll(b, 20*time.Second, func() (bool, string) {
				at = nil
				for _, d := range rcv.all() {
					if d.Body["after"] == sha {
						at = append(at, d.At)
					}
				}
				return len(at) == hooks, fmt.Sprintf("push %d: %d of %d deliveries", i, len(at), hooks)
			})
			sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
			last = append(last, ms(at[hooks-1].Sub(start)))
			// The same push to the project without hooks, once all is
			// quiet again, as the one above started.
			start = time.Now()
			commitFile(b, alice.Client, plain.ID, "master", "f", strconv.Itoa(i))
			without = append(without, ms(time.Since(start)))
			e.Drain(b)
		}
	}
	b.StopTimer()
	b.ReportMetric(fennectest.Median(with), "push-ms-10-hooks")
	b.ReportMetric(fennectest.Median(without), "push-ms-no-hooks")
	b.ReportMetric(fennectest.Median(last), "last-delivery-ms")
	sort.Float64s(last)
	b.ReportMetric(last[len(last)-1], "last-delivery-max-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
