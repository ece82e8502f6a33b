package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of many writers at once: no update is lost, and a backup is
// one point in time.

// transfer is a ledger row: money moved between two accounts.
type transfer struct {
	ID     int64  `json:"id"`
	From   int    `json:"from"`
	To     int    `json:"to"`
	Amount uint64 `json:"amount"`
}

func (r *transfer) RecordID() int64      { return r.ID }
func (r *transfer) SetRecordID(id int64) { r.ID = id }

var transfers = store.NewTable[int64, transfer]("storetest.transfers",
	store.Index[transfer]{Name: "account", Keys: func(r *transfer) []string {
		return []string{accountName(r.From), accountName(r.To)}
	}})

const (
	accounts       = 4
	openingBalance = 1000
)

func accountName(i int) string { return fmt.Sprintf("acct/%d", i) }

// openBank is a database with the accounts open and the ledger declared.
func openBank(t *testing.T, open Opener) *store.DB {
	t.Helper()
	db := open(t)
	ensure(t, db, append(transfers.Buckets(), kv.Name())...)
	update(t, db, func(tx *store.Tx) error {
		for i := range accounts {
			if err := kv.Put(tx, []byte(accountName(i)), store.Key(uint64(openingBalance))); err != nil {
				return err
			}
		}
		return nil
	})
	return db
}

// moveMoney is one write of a writer: it counts itself (globally and per
// writer), moves up to amount between two accounts and records the
// transfer. Everything it decides comes from tx, so it may run again.
func moveMoney(db *store.DB, writer, from, to int, amount uint64) error {
	return db.Update(context.Background(), func(tx *store.Tx) error {
		for _, counter := range []string{"count", fmt.Sprintf("writer/%d", writer)} {
			n := store.KeyID(kv.Get(tx, []byte(counter)))
			if err := kv.Put(tx, []byte(counter), store.Key(n+1)); err != nil {
				return err
			}
		}
		fromBalance := store.KeyID(kv.Get(tx, []byte(accountName(from))))
		toBalance := store.KeyID(kv.Get(tx, []byte(accountName(to))))
		moved := min(amount, fromBalance)
		if err := kv.Put(tx, []byte(accountName(from)), store.Key(fromBalance-moved)); err != nil {
			return err
		}
		if err := kv.Put(tx, []byte(accountName(to)), store.Key(toBalance+moved)); err != nil {
			return err
		}
		return transfers.Insert(tx, &transfer{From: from, To: to, Amount: moved})
	})
}

// writer makes n transfers (forever when n < 0) until stop is closed,
// from a sequence of its own, and returns the first error.
func writer(db *store.DB, id, n int, stop <-chan struct{}, done *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(uint64(id), 42))
	for i := 0; n < 0 || i < n; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		from := rng.IntN(accounts)
		to := (from + 1 + rng.IntN(accounts-1)) % accounts
		if err := moveMoney(db, id, from, to, uint64(rng.IntN(300))); err != nil {
			return fmt.Errorf("writer %d, transfer %d: %w", id, i, err)
		}
		done.Add(1)
	}
	return nil
}

// checkLedger checks what tx sees: the money is all there, each balance
// is its opening balance plus its transfers, the ledger's count and index
// agree with its rows, and the counter counts the transfers. It returns
// the number of transfers.
func checkLedger(t *testing.T, tx *store.Tx) int {
	t.Helper()
	var sum uint64
	balances := make([]uint64, accounts)
	for i := range accounts {
		balances[i] = store.KeyID(kv.Get(tx, []byte(accountName(i))))
		sum += balances[i]
	}
	if sum != accounts*openingBalance {
		t.Errorf("the accounts hold %d in all, want %d", sum, accounts*openingBalance)
	}
	expected := make([]int64, accounts)
	touching := make([][]int64, accounts)
	for i := range expected {
		expected[i] = openingBalance
	}
	rows := 0
	err := transfers.Scan(tx, false, 0, func(r *transfer) (bool, error) {
		rows++
		expected[r.From] -= int64(r.Amount)
		expected[r.To] += int64(r.Amount)
		touching[r.From] = append(touching[r.From], r.ID)
		touching[r.To] = append(touching[r.To], r.ID)
		return true, nil
	})
	if err != nil {
		t.Fatalf("scan the ledger: %v", err)
	}
	for i := range accounts {
		if int64(balances[i]) != expected[i] {
			t.Errorf("%s holds %d, its transfers say %d", accountName(i), balances[i], expected[i])
		}
		ids, err := transfers.IDsBy(tx, "account", accountName(i))
		if err != nil || fmt.Sprint(ids) != fmt.Sprint(touching[i]) {
			t.Errorf("the index lists %d transfers of %s, the rows %d (%v)", len(ids), accountName(i), len(touching[i]), err)
		}
	}
	if n := transfers.Count(tx); n != rows {
		t.Errorf("the ledger's Count is %d, its rows %d", n, rows)
	}
	if n := store.KeyID(kv.Get(tx, []byte("count"))); n != uint64(rows) {
		t.Errorf("the counter says %d transfers, the ledger holds %d", n, rows)
	}
	return rows
}

func runConcurrency(t *testing.T, open Opener) {
	t.Run("concurrent writers lose no update", func(t *testing.T) {
		db := openBank(t, open)
		const writers, each = 8, 50
		errs := make([]error, writers)
		var wg sync.WaitGroup
		var done atomic.Int64
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = writer(db, w, each, nil, &done)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		view(t, db, func(tx *store.Tx) error {
			if rows := checkLedger(t, tx); rows != writers*each {
				t.Errorf("the ledger holds %d transfers, want %d", rows, writers*each)
			}
			for w := range writers {
				if n := store.KeyID(kv.Get(tx, []byte(fmt.Sprintf("writer/%d", w)))); n != each {
					t.Errorf("writer %d's counter = %d, want %d", w, n, each)
				}
			}
			ids, err := transfers.IDs(tx)
			if err != nil || len(ids) != writers*each || ids[0] != 1 || ids[len(ids)-1] != writers*each {
				t.Errorf("transfer ids: %d of them, from %v to %v (%v); want 1..%d", len(ids), ids[:min(1, len(ids))], ids[max(0, len(ids)-1):], err, writers*each)
			}
			return nil
		})
	})

	t.Run("a backup taken under writers is one consistent point in time", func(t *testing.T) {
		db := openBank(t, open)
		const writers = 4
		stop := make(chan struct{})
		errs := make([]error, writers)
		var wg sync.WaitGroup
		var done atomic.Int64
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = writer(db, w, 500, stop, &done)
			}()
		}
		stopped := false
		stopWriters := func() {
			if !stopped {
				stopped = true
				close(stop)
				wg.Wait()
			}
		}
		defer stopWriters()
		for deadline := time.Now().Add(20 * time.Second); done.Load() < 30; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the writers made only %d transfers in 20s", done.Load())
			}
		}
		var paths []string
		for i := range 2 {
			path := filepath.Join(t.TempDir(), fmt.Sprintf("backup-%d.db", i))
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			n, err := db.Backup(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil || n <= 0 {
				t.Fatalf("backup %d: %d bytes, %v", i, n, err)
			}
			if err := store.Verify(path); err != nil {
				t.Errorf("backup %d is no sound bbolt file: %v", i, err)
			}
			paths = append(paths, path)
			time.Sleep(20 * time.Millisecond)
		}
		stopWriters()
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		var total int
		view(t, db, func(tx *store.Tx) error { total = checkLedger(t, tx); return nil })
		for i, path := range paths {
			backup, err := store.Open(path, store.Options{})
			if err != nil {
				t.Fatalf("open backup %d: %v", i, err)
			}
			var rows int
			view(t, backup, func(tx *store.Tx) error { rows = checkLedger(t, tx); return nil })
			if err := backup.Close(); err != nil {
				t.Errorf("close backup %d: %v", i, err)
			}
			if rows < 30 || rows > total {
				t.Errorf("backup %d holds %d transfers; want at least the 30 made before it and at most the %d made in all", i, rows, total)
			}
			t.Logf("backup %d holds %d of %d transfers", i, rows, total)
		}
	})
}
