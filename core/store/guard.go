package store

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
)

// txGuard catches a goroutine that opens a transaction while it already
// holds one, or waits for a batched write while holding one. bbolt deadlocks
// in both cases as soon as a writer has to grow (remap) the file: the writer
// waits for the outer reader to close, and the goroutine that holds it waits
// for the writer. The check needs the goroutine's id, which costs a stack
// read, so it is on only in race builds (`make test`) and with the build tag
// fennec_txguard; elsewhere guardOn is false and it costs a branch.
type txGuard struct {
	mu   sync.Mutex
	open map[uint64]string // goroutine id -> what it opened
	// violations are kept as well as raised: a panic inside an HTTP handler
	// is recovered as a 500, and tests must still fail loudly
	// (fennectest checks Violations when a test ends).
	violations []string
}

// enter records that this goroutine opens a transaction; the returned
// function records that it closed it.
func (g *txGuard) enter(what string) func() {
	if !guardOn {
		return func() {}
	}
	id := goroutineID()
	g.mu.Lock()
	if g.open == nil {
		g.open = map[uint64]string{}
	}
	if outer, ok := g.open[id]; ok {
		msg := "store: " + what + " opened inside " + outer + " on the same goroutine (bbolt deadlocks when a writer remaps); pass tx.Context() to nested calls"
		g.violations = append(g.violations, msg)
		g.mu.Unlock()
		panic(msg)
	}
	g.open[id] = what
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		delete(g.open, id)
		g.mu.Unlock()
	}
}

// check refuses a goroutine that holds a transaction.
func (g *txGuard) check(what string) {
	if guardOn {
		g.enter(what)()
	}
}

// Violations lists the nested transactions the guard caught (always empty
// when the guard is off).
func (db *DB) Violations() []string {
	db.guard.mu.Lock()
	defer db.guard.mu.Unlock()
	return append([]string(nil), db.guard.violations...)
}

// GuardOn tells whether this build checks for nested transactions.
func GuardOn() bool { return guardOn }

// goroutineID reads the current goroutine's id from the first line of its
// stack ("goroutine 123 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
