package store

import (
	"context"
	"sync"
)

// groupCommit gathers concurrent Update calls into shared transactions. The
// first caller starts a leader goroutine that commits everything queued;
// calls that arrive meanwhile wait for the next round. Unlike bbolt's own
// Batch there is no delay timer, so one writer alone pays no extra latency,
// and a crowd of writers pays one fsync per round instead of one each.
type groupCommit struct {
	mu      sync.Mutex
	max     int
	queue   []*batchCall
	running bool
}

type batchCall struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan error
}

func (g *groupCommit) do(ctx context.Context, db *DB, fn func(*Tx) error) error {
	call := &batchCall{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, call)
	if !g.running {
		g.running = true
		go g.run(db)
	}
	g.mu.Unlock()
	err := <-call.done
	if p, ok := err.(*panicError); ok {
		panic(p.value) // the caller's own panic, raised where it would have been
	}
	return err
}

func (g *groupCommit) run(db *DB) {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		n := min(len(g.queue), g.max)
		round := g.queue[:n:n]
		g.queue = append([]*batchCall(nil), g.queue[n:]...)
		g.mu.Unlock()
		g.commit(db, round)
	}
}

// commit runs a round in one transaction. When a call fails (or panics) the
// transaction is rolled back and the round runs again without it, so one
// caller's error never fails another's; the failed calls then run once more
// each alone, so that the error they report does not depend on writes that
// were rolled back (and they commit if they now succeed).
func (g *groupCommit) commit(db *DB, round []*batchCall) {
	defer db.guard.enter("Update")()
	var alone []*batchCall
	for len(round) > 0 {
		failed := -1
		txs := make([]*Tx, len(round))
		err := db.engine.Update(context.Background(), func(etx EngineTx) error {
			failed = -1
			for i, c := range round {
				txs[i] = db.newTx(c.ctx, etx)
				err := db.timed(func(tx *Tx) error { return safeCall(c.fn, tx) }, txs[i])
				if eerr := etx.Err(); eerr != nil {
					// The engine failed under this call (a lost
					// connection, a conflict): the round's concern,
					// not the call's.
					return eerr
				}
				if err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, tx := range txs {
				tx.committed()
			}
		}
		if failed < 0 || len(round) == 1 {
			// Success, a commit failure that concerns everyone, or a
			// lone call's own error.
			for _, c := range round {
				c.done <- err
			}
			break
		}
		alone = append(alone, round[failed])
		round = append(round[:failed:failed], round[failed+1:]...)
	}
	for _, c := range alone {
		c.done <- db.update(c.ctx, func(tx *Tx) error { return safeCall(c.fn, tx) })
	}
}

// safeCall turns a panic in fn into an error for its own caller (and keeps
// the leader goroutine alive).
func safeCall(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r}
		}
	}()
	return fn(tx)
}

type panicError struct{ value any }

func (e *panicError) Error() string { return "store: write function panicked" }
