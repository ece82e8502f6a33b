package internal

import (
	"testing"
	"time"
)

// The notifier: a wake closes the job's channel for all its waiters and
// only theirs, the next watch gets a fresh channel, releases (twice is
// once) leave nothing behind, and past the cap watch refuses.
func TestTraceWaits(t *testing.T) {
	stopping := make(chan struct{})
	tw := newTraceWaits(stopping)
	tw.max = 3
	a, releaseA, okA := tw.watch(1)
	b, releaseB, okB := tw.watch(1)
	other, releaseOther, okOther := tw.watch(2)
	if !okA || !okB || !okOther {
		t.Fatal("watch refused under the cap")
	}
	if _, release, ok := tw.watch(3); ok {
		t.Fatal("watch past the cap")
	} else {
		release() // harmless
	}
	if n, jobs := tw.waiting(); n != 3 || jobs != 2 {
		t.Fatalf("waiting %d for %d jobs", n, jobs)
	}
	tw.wake(1)
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		case <-time.After(time.Second):
			t.Fatal("a waiter of job 1 was not woken")
		}
	}
	select {
	case <-other:
		t.Fatal("job 2's waiter woken by job 1")
	default:
	}
	tw.wake(1) // nobody waits: nothing to do, no panic on a closed channel
	again, releaseAgain, _ := tw.watch(1)
	if again == a {
		t.Fatal("a woken channel was handed out again")
	}
	releaseA()
	releaseA()
	releaseB()
	releaseAgain()
	releaseOther()
	if n, jobs := tw.waiting(); n != 0 || jobs != 0 {
		t.Fatalf("after every release: waiting %d for %d jobs", n, jobs)
	}
	close(stopping)
	if _, _, ok := tw.watch(1); ok {
		t.Fatal("watch while the server stops")
	}
}

// BenchmarkTraceWake is a write's cost when nobody waits for its job.
func BenchmarkTraceWake(b *testing.B) {
	tw := newTraceWaits(nil)
	for i := 0; b.Loop(); i++ {
		tw.wake(int64(i))
	}
}
