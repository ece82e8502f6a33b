package internal_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/notifications/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestQueuedBeforeTheUpgradeIsSent writes mail the way a version before
// the mail queue left it queued (notifications.mails and
// notifications.deliveries, schema version 1) into a real store (the
// bbolt file, or PostgreSQL: fennectest.StoreEnv), starts Fennec on that
// data directory, and finds every mail in the file outbox, each
// recipient's in queue order, the old table gone and the queue empty.
func TestQueuedBeforeTheUpgradeIsSent(t *testing.T) {
	dir := t.TempDir()
	db := fennectest.OpenStore(t, dir)
	if err := db.EnsureBuckets(internal.OldBuckets()); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), internal.Migrations()[:1]); err != nil {
		t.Fatal(err)
	}
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := internal.WriteOldMail(tx, "old:1", "First", "ann@example.com", "bob@example.com"); err != nil {
			return err
		}
		return internal.WriteOldMail(tx, "old:2", "Second", "ann@example.com")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := stocktest.Start(t, fennectest.WithDataDir(dir, "root-pw-upgrade"), fennectest.Durable())
	outbox := filepath.Join(dir, "mail", "outbox")
	var got []string // "to subject", in file (queue id) order
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		got = got[:0]
		entries, _ := os.ReadDir(outbox)
		for _, entry := range entries {
			if !strings.HasSuffix(entry.Name(), ".eml") {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(outbox, entry.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, header(string(raw), "To")+" "+header(string(raw), "Subject"))
		}
		return len(got) == 3, strings.Join(got, "; ")
	})
	want := []string{"<ann@example.com> First", "<bob@example.com> First", "<ann@example.com> Second"}
	if !slices.Equal(got, want) {
		t.Fatalf("outbox %q, want %q", got, want)
	}
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		n := -1
		err := s.Store.View(context.Background(), func(tx *store.Tx) error {
			if store.Keys("notifications.deliveries").Exists(tx) {
				t.Fatal("the old deliveries table is still there")
			}
			n = store.Keys(workqueue.Buckets("notifications.mail")[0]).Count(tx) +
				store.Keys("notifications.mails").Count(tx)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n == 0, "jobs and mails left in the store"
	})
}

// header is the value of a mail's header name (unfolded headers only).
func header(raw, name string) string {
	for _, line := range strings.Split(raw, "\r\n") {
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return v
		}
	}
	return ""
}
