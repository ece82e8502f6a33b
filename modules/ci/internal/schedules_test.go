package internal

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

func TestParseCron(t *testing.T) {
	for _, tc := range []struct {
		spec, zone string
		ok         bool
	}{
		{"* * * * *", "", true},
		{"*/5 1-3 * jan,feb mon-fri", "Europe/Paris", true},
		{"0 4 * * *", "America/New_York", true},
		{"", "", false},
		{"* * * *", "", false},
		{"* * * * * *", "", false},
		{"@hourly", "", false},
		{"@every 1s", "", false},
		{"60 * * * *", "", false},
		{"0 0 31 2 *", "", false},
		{"* * * * *", "Local", false},
		{"* * * * *", "../../etc/passwd", false},
		{"* * * * *", "/etc/localtime", false},
		{"* * * * *", "Nowhere/Atlantis", false},
	} {
		_, _, err := parseCron(tc.spec, tc.zone)
		if (err == nil) != tc.ok {
			t.Errorf("parseCron(%q, %q): %v, want ok %v", tc.spec, tc.zone, err, tc.ok)
		}
	}
	// The next run is the spec's next minute in the zone, in UTC; a time
	// the zone skips (Paris's 02:30 on the night summer time starts) is
	// not run that day.
	for _, tc := range []struct{ now, want time.Time }{
		{time.Date(2026, 3, 20, 23, 59, 30, 0, time.UTC), time.Date(2026, 3, 21, 1, 30, 0, 0, time.UTC)},
		{time.Date(2026, 3, 28, 23, 59, 30, 0, time.UTC), time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC)},
	} {
		next, err := nextRun("30 2 * * *", "Europe/Paris", tc.now)
		if err != nil || !next.Equal(tc.want) {
			t.Errorf("next run after %v: %v %v, want %v", tc.now, next, err, tc.want)
		}
	}
}

// openScheduleStore is a store with the schedules' tables only.
func openScheduleStore(t testing.TB) *store.DB {
	db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var names []string
	for _, tb := range scheduleTables() {
		names = append(names, tb.Buckets()...)
	}
	if err := db.EnsureBuckets(names); err != nil {
		t.Fatal(err)
	}
	return db
}

// addSchedules stores n active schedules whose next runs start at from,
// a minute apart.
func addSchedules(t testing.TB, db *store.DB, n int, from time.Time) []int64 {
	var ids []int64
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			sc := &Schedule{ProjectID: 1, Description: fmt.Sprint(i), Ref: "main", Cron: "* * * * *", Active: true,
				NextRunAt: from.Add(time.Duration(i) * time.Minute)}
			if err := saveSchedule(tx, nil, sc); err != nil {
				return err
			}
			ids = append(ids, sc.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// The due walk answers the due schedules, soonest first, and the next
// one's time; an inactive or edited schedule is keyed as it is now.
func TestDueSchedules(t *testing.T) {
	db := openScheduleStore(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	due := addSchedules(t, db, 3, now.Add(-3*time.Minute))
	later := addSchedules(t, db, 1000, now.Add(time.Hour))
	var ids []int64
	var next time.Time
	view := func() {
		t.Helper()
		if err := db.View(context.Background(), func(tx *store.Tx) error {
			ids, next = dueSchedules(tx, now, dueBatch)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	view()
	if !slices.Equal(ids, due) || !next.Equal(now.Add(time.Hour)) {
		t.Fatalf("due %v next %v, want %v and %v", ids, next, due, now.Add(time.Hour))
	}
	// Deactivate the first, move the second past now.
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for i, id := range due[:2] {
			sc, err := schedules.Get(tx, id)
			if err != nil {
				return err
			}
			before := *sc
			if i == 0 {
				sc.Active = false
			} else {
				sc.NextRunAt = now.Add(30 * time.Minute)
			}
			if err := saveSchedule(tx, &before, sc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	view()
	if !slices.Equal(ids, due[2:]) || !next.Equal(now.Add(30*time.Minute)) {
		t.Fatalf("after the edits: due %v next %v", ids, next)
	}
	// A batch is bounded.
	now = now.Add(48 * time.Hour)
	view()
	if len(ids) != dueBatch || !slices.Equal(ids[:3], []int64{due[2], due[1], later[0]}) {
		t.Fatalf("a batch of %d, starting %v", len(ids), ids[:3])
	}
}

// BenchmarkDueSchedules reads the due schedules among few and among many
// schedules not due: the walk stops at the first one not due, so the
// two cost about the same (compare the ns/op of the two).
func BenchmarkDueSchedules(b *testing.B) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, notDue := range []int{10, 20000} {
		b.Run(fmt.Sprintf("not_due=%d", notDue), func(b *testing.B) {
			db := openScheduleStore(b)
			addSchedules(b, db, 5, now.Add(-time.Hour))
			addSchedules(b, db, notDue, now.Add(time.Hour))
			b.ResetTimer()
			for b.Loop() {
				_ = db.View(context.Background(), func(tx *store.Tx) error {
					if ids, _ := dueSchedules(tx, now, dueBatch); len(ids) != 5 {
						b.Fatalf("%d due", len(ids))
					}
					return nil
				})
			}
		})
	}
}
