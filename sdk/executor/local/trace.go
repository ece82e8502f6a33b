package local

import (
	"fmt"
	"sync"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// trace is a job's trace: every write, from the steps' output or from the
// executor's own lines, goes out as the next chunk, in order. Past max
// bytes it sends one line saying so and calls onLimit; after a send error
// it calls onError. Either way later writes are dropped (and reported as
// written, so a step's output keeps draining until it is killed).
type trace struct {
	mu      sync.Mutex
	send    func(executor.TraceChunk) error
	off     int64
	max     int64
	stopped bool
	err     error
	onLimit func()
	onError func(error)
}

func (t *trace) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || len(p) == 0 {
		return len(p), nil
	}
	data := p
	over := t.max > 0 && t.off+int64(len(p)) > t.max
	if over {
		data = p[:t.max-t.off]
	}
	if len(data) > 0 && !t.emit(data) {
		return len(p), nil
	}
	if over {
		t.emit([]byte(fmt.Sprintf("\nERROR: the job's log passed its limit of %d bytes; the job was stopped\n", t.max)))
		t.stopped = true
		if t.onLimit != nil {
			t.onLimit()
		}
	}
	return len(p), nil
}

// emit sends data as the next chunk; false after a send error.
func (t *trace) emit(data []byte) bool {
	// The chunk is copied: the caller reuses its buffer, and a sender may
	// keep the slice (an in-process host appending it to a list).
	chunk := executor.TraceChunk{Offset: t.off, Data: append([]byte(nil), data...)}
	if err := t.send(chunk); err != nil {
		t.err, t.stopped = err, true
		if t.onError != nil {
			t.onError(err)
		}
		return false
	}
	t.off += int64(len(data))
	return true
}

// Printf writes one line of the executor's own.
func (t *trace) Printf(format string, args ...any) {
	fmt.Fprintf(t, format+"\n", args...)
}

// sendErr is the error that stopped the trace, if a send failed.
func (t *trace) sendErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}
