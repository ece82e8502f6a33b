package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Leases: one holder at a time for work that must not run twice at once
// (a background loop of one node among several sharing the store). A
// lease is a row of the _leases bucket: its holder, until when it holds,
// and a fencing token that grows each time the lease changes hands.
//
// Taking, renewing and releasing are store writes, so they are as
// consistent as any other. Fencing: a context made by WithLease carries
// the lease, and every write made with it (Update, UpdateAlone, and the
// services they call with tx.Context()) first checks, in its own
// transaction, that the lease still has this holder and token; otherwise
// it fails with ErrLeaseLost and writes nothing. A holder paused past its
// lease (a stopped process, a long collection) and resumed after another
// took over therefore cannot act on what it read before: the check and
// the takeover touch the same row, and the store serialises them.

var leaseBucket = Keys("_leases")

// ErrLeaseLost is the error of a write fenced by a lease that its holder
// no longer has.
var ErrLeaseLost = errors.New("store: the lease was lost")

// Lease is a lease this node holds.
type Lease struct {
	Name   string
	Holder string
	Token  uint64
	Until  time.Time
}

// LeaseRecord is a lease as stored, for reports (health, metrics).
type LeaseRecord struct {
	Name   string    `json:"-"`
	Holder string    `json:"holder"`
	Token  uint64    `json:"token"`
	Until  time.Time `json:"until"`
}

func readLease(tx *Tx, name string) (LeaseRecord, bool, error) {
	raw := leaseBucket.Get(tx, []byte(name))
	if raw == nil {
		return LeaseRecord{Name: name}, false, nil
	}
	var r LeaseRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return LeaseRecord{}, false, fmt.Errorf("store: lease %s: %w", name, err)
	}
	r.Name = name
	return r, true, nil
}

func writeLease(tx *Tx, r LeaseRecord) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return leaseBucket.Put(tx, []byte(r.Name), raw)
}

// TryLease takes the named lease for holder for ttl, when it is free,
// expired or already holder's (then it is renewed, keeping its token).
// It returns nil, with no error, while another holder has it.
//
// ctx is not used for the write (taking a lease must not be half-done by
// a cancellation) and may not carry a lease.
func (db *DB) TryLease(_ context.Context, name, holder string, ttl time.Duration) (*Lease, error) {
	var got *Lease
	err := db.UpdateAlone(context.Background(), func(tx *Tx) error {
		got = nil
		r, _, err := readLease(tx, name)
		if err != nil {
			return err
		}
		now := time.Now()
		if r.Holder != "" && r.Holder != holder && now.Before(r.Until) {
			return nil
		}
		if r.Holder != holder {
			r.Token++
			r.Holder = holder
		}
		r.Until = now.Add(ttl)
		if err := writeLease(tx, r); err != nil {
			return err
		}
		got = &Lease{Name: name, Holder: holder, Token: r.Token, Until: r.Until}
		return nil
	})
	return got, err
}

// Renew extends a held lease by ttl from now; ErrLeaseLost when it changed
// hands meanwhile.
func (db *DB) Renew(_ context.Context, l *Lease, ttl time.Duration) error {
	var until time.Time
	err := db.UpdateAlone(context.Background(), func(tx *Tx) error {
		r, _, err := readLease(tx, l.Name)
		if err != nil {
			return err
		}
		if r.Holder != l.Holder || r.Token != l.Token {
			return ErrLeaseLost
		}
		r.Until = time.Now().Add(ttl)
		until = r.Until
		return writeLease(tx, r)
	})
	if err == nil {
		l.Until = until
	}
	return err
}

// Release gives a held lease up at once, so another node need not wait
// for it to expire; a lease already lost is no error. then, if given, runs
// in the same transaction when the lease was still held (a signal that
// tells the other nodes, say): they hear of the release only once it is
// committed, and never of one that did not happen.
func (db *DB) Release(_ context.Context, l *Lease, then ...func(*Tx) error) error {
	return db.UpdateAlone(context.Background(), func(tx *Tx) error {
		r, _, err := readLease(tx, l.Name)
		if err != nil || r.Holder != l.Holder || r.Token != l.Token {
			return err
		}
		r.Holder, r.Until = "", time.Time{}
		if err := writeLease(tx, r); err != nil {
			return err
		}
		for _, fn := range then {
			if err := fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
}

// LeaseOf reads one lease as stored; found is false when no node ever
// took it (or it was pruned).
func (db *DB) LeaseOf(ctx context.Context, name string) (r LeaseRecord, found bool, err error) {
	err = db.View(ctx, func(tx *Tx) error {
		r, found, err = readLease(tx, name)
		return err
	})
	return r, found, err
}

// PruneLeases removes the leases whose names start with prefix and that
// ended more than grace ago: the liveness leases of nodes long gone, one
// per process that ever ran, would otherwise pile up. A pruned lease reads
// as never taken, which to its readers is the same as ended. Run it with
// a context fenced by the leader's lease (WithLease).
func (db *DB) PruneLeases(ctx context.Context, prefix string, grace time.Duration) (int, error) {
	var pruned int
	err := db.Update(ctx, func(tx *Tx) error {
		pruned = 0
		cutoff := time.Now().Add(-grace)
		var stale [][]byte
		var err error
		leaseBucket.Walk(tx, []byte(prefix), false, func(k, _ []byte) bool {
			var r LeaseRecord
			if r, _, err = readLease(tx, string(k)); err != nil {
				return false
			}
			if r.Until.Before(cutoff) {
				stale = append(stale, append([]byte(nil), k...))
			}
			return true
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := leaseBucket.Delete(tx, k); err != nil {
				return err
			}
		}
		pruned = len(stale)
		return nil
	})
	return pruned, err
}

// Leases lists every lease as stored, by name.
func (db *DB) Leases(ctx context.Context) ([]LeaseRecord, error) {
	var out []LeaseRecord
	err := db.View(ctx, func(tx *Tx) error {
		out = nil
		var err error
		leaseBucket.Walk(tx, nil, false, func(k, _ []byte) bool {
			var r LeaseRecord
			r, _, err = readLease(tx, string(k))
			out = append(out, r)
			return err == nil
		})
		return err
	})
	return out, err
}

type leaseKey struct{}

// WithLease is ctx carrying l: writes made with it are fenced by l.
func WithLease(ctx context.Context, l *Lease) context.Context {
	return context.WithValue(ctx, leaseKey{}, l)
}

// fence wraps a write function with the check of the lease ctx carries.
func fence(ctx context.Context, fn func(*Tx) error) func(*Tx) error {
	l, _ := ctx.Value(leaseKey{}).(*Lease)
	if l == nil {
		return fn
	}
	return func(tx *Tx) error {
		r, _, err := readLease(tx, l.Name)
		if err != nil {
			return err
		}
		if r.Holder != l.Holder || r.Token != l.Token {
			return fmt.Errorf("%w: %s is held by %q (token %d), not %q (token %d)", ErrLeaseLost, l.Name, r.Holder, r.Token, l.Holder, l.Token)
		}
		return fn(tx)
	}
}
