package local_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// fiftyMegabyteTraces runs 50 jobs at once on e, each printing 1 MiB
// (16,384 lines of 64 bytes), and returns the peak of HeapInuse while they
// run, Sys at the end and the bytes allocated, all of this process.
func fiftyMegabyteTraces(tb testing.TB, e executor.Executor) (heapPeak, sys, alloc uint64) {
	const jobs = 50
	ctx := context.Background()
	if err := e.Configure(ctx, []byte(fmt.Sprintf(`{"builds_dir": %q, "concurrency": %d}`, tb.TempDir(), jobs))); err != nil {
		tb.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	var peak atomic.Uint64
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var wg sync.WaitGroup
	base := time.Now().UnixNano() % 1e9 * 100
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := executor.Job{ID: base + int64(i), Steps: executor.ScriptSteps(nil, []string{`printf '%063d\n' $(seq 1 16384)`}, nil), Timeout: time.Minute}
			var n int64
			res, err := e.Run(ctx, job, func(c executor.TraceChunk) error { n += int64(len(c.Data)); return nil })
			if err != nil || !res.Success() || n < 1<<20 {
				tb.Errorf("job %d: %+v %v, %d bytes of trace", i, res, err, n)
			}
			e.Cleanup(ctx, job.ID)
		}()
	}
	wg.Wait()
	close(stop)
	sampled.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return peak.Load(), after.Sys, after.TotalAlloc - before.TotalAlloc
}

// BenchmarkFiftyMegabyteTraces reports this process's memory while 50
// jobs print 1 MiB each, in process and through the gRPC server and Client
// (both ends in this process): go test -run X -bench FiftyMegabyteTraces
// -benchtime 1x ./executor/local/. Over gRPC the heap peaked at 264 MiB
// while each trace message took a 1 MiB buffer of gRPC's pool; ~33 MiB
// since messages fit its 32 KiB buffers.
func BenchmarkFiftyMegabyteTraces(b *testing.B) {
	for _, c := range []struct {
		name string
		new  func(b *testing.B) executor.Executor
	}{
		{"InProcess", func(*testing.B) executor.Executor { return newLocal() }},
		{"OverGRPC", func(b *testing.B) executor.Executor {
			e := newLocal()
			conn, _ := plugin.TestGRPCConn(b, func(s *grpc.Server) { executor.Register(s, e, nil) })
			return executor.NewClient(conn)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				peak, sys, alloc := fiftyMegabyteTraces(b, c.new(b))
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MiB")
				b.ReportMetric(float64(sys)/(1<<20), "sys-MiB")
				b.ReportMetric(float64(alloc)/(1<<20), "alloc-MiB")
			}
		})
	}
}
