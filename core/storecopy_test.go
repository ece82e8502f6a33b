package fennec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/postgres"
)

// storeDump is everything a store holds, read key by key, independently of
// the summaries CopyStore verifies with (so a wrong summary cannot hide a
// wrong copy).
type storeDump map[string]bucketDump

type bucketDump struct {
	Sequence uint64
	Keys     map[string]string
}

func dumpEngine(t *testing.T, e store.Engine) storeDump {
	t.Helper()
	out := storeDump{}
	err := e.View(context.Background(), func(etx store.EngineTx) error {
		names, err := etx.Buckets()
		if err != nil {
			return err
		}
		for _, n := range names {
			b := etx.Bucket(n)
			d := bucketDump{Sequence: b.Sequence(), Keys: map[string]string{}}
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				d.Keys[string(k)] = string(v)
			}
			// Empty buckets are what any open creates; they are not data.
			if d.Sequence != 0 || len(d.Keys) > 0 {
				out[string(n)] = d
			}
		}
		return etx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func dumpBolt(t *testing.T, path string) storeDump {
	t.Helper()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dumpEngine(t, db.Engine())
}

func dumpPostgres(t *testing.T, dsn string) storeDump {
	t.Helper()
	e, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return dumpEngine(t, e)
}

// fillStore writes buckets that exercise a copy: more keys than one copy
// batch, binary and empty values, a value of a megabyte, sequences with
// and without keys.
func fillStore(t *testing.T, path string) storeDump {
	t.Helper()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Engine().Update(context.Background(), func(etx store.EngineTx) error {
		many, _ := etx.CreateBucketIfNotExists([]byte("many"))
		for i := range 4500 {
			if err := many.Put(fmt.Appendf(nil, "k%06d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
		}
		odd, _ := etx.CreateBucketIfNotExists([]byte("odd\x00bucket"))
		_ = odd.Put([]byte{0, 1, 2, 255}, []byte{255, 0})
		_ = odd.Put([]byte("empty"), []byte{})
		_ = odd.Put([]byte("big"), bytes.Repeat([]byte("x"), 1<<20))
		_ = odd.SetSequence(77)
		seqOnly, _ := etx.CreateBucketIfNotExists([]byte("sequence-only"))
		return seqOnly.SetSequence(1 << 40)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dumpEngine(t, db.Engine())
}

// TestCopyAndRestoreAcrossEngines moves stores between bbolt and a real
// PostgreSQL: a copy there and back keeps every key, value and sequence;
// a destination that holds data is refused and left as it was; bad
// destinations fail clearly, without echoing a password; and a backup of
// a PostgreSQL store restores into bbolt and into another database.
func TestCopyAndRestoreAcrossEngines(t *testing.T) {
	pg := pgserver.Start(t, pgserver.Options{})
	ctx := context.Background()
	src := t.TempDir()
	want := fillStore(t, filepath.Join(src, "fennec.db"))
	if len(want) != 3 || len(want["many"].Keys) != 4500 {
		t.Fatalf("the source holds %d buckets", len(want))
	}
	cfgOf := func(data, storeURL string) config.Config {
		cfg := config.Default()
		cfg.Listen, cfg.Data, cfg.Store = "", data, storeURL
		return cfg
	}
	dsn := pg.NewDatabase(t)

	t.Run("round trip", func(t *testing.T) {
		rep, err := fennec.CopyStore(ctx, cfgOf(src, ""), dsn)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Keys != 4503 || rep.Buckets < 3 || !strings.Contains(rep.To, "PostgreSQL") {
			t.Fatalf("report %+v", rep)
		}
		if got := dumpPostgres(t, dsn); !reflect.DeepEqual(got, want) {
			t.Fatalf("PostgreSQL holds other data than the file: %d buckets", len(got))
		}
		back := t.TempDir()
		if _, err := fennec.CopyStore(ctx, cfgOf(back, dsn), "bbolt"); err != nil {
			t.Fatal(err)
		}
		if got := dumpBolt(t, filepath.Join(back, "fennec.db")); !reflect.DeepEqual(got, want) {
			t.Fatal("the file copied back differs from the original")
		}
		elsewhere := filepath.Join(t.TempDir(), "sub", "copy.db")
		if _, err := fennec.CopyStore(ctx, cfgOf(back, ""), "file:"+elsewhere); err != nil {
			t.Fatal(err)
		}
		if got := dumpBolt(t, elsewhere); !reflect.DeepEqual(got, want) {
			t.Fatal("the file copied to file: differs")
		}
	})

	t.Run("a destination with data is refused and left alone", func(t *testing.T) {
		full := pg.NewDatabase(t)
		other := t.TempDir()
		otherData := fillStore(t, filepath.Join(other, "fennec.db"))
		db, err := store.Open(filepath.Join(other, "fennec.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Engine().Update(ctx, func(etx store.EngineTx) error {
			b, _ := etx.CreateBucketIfNotExists([]byte("only-here"))
			return b.Put([]byte("mine"), []byte("keep me"))
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		otherData = dumpBolt(t, filepath.Join(other, "fennec.db"))
		if _, err := fennec.CopyStore(ctx, cfgOf(other, ""), full); err != nil {
			t.Fatal(err)
		}
		before := dumpPostgres(t, full)
		_, err = fennec.CopyStore(ctx, cfgOf(src, ""), full)
		if !errors.Is(err, fennec.ErrStoreNotEmpty) {
			t.Fatalf("copy into a database with data: %v", err)
		}
		if got := dumpPostgres(t, full); !reflect.DeepEqual(got, before) || got["only-here"].Keys["mine"] != "keep me" {
			t.Fatal("the refused copy changed the database")
		}
		// And a bbolt file with data, back the other way.
		_, err = fennec.CopyStore(ctx, cfgOf(src, dsn), "file:"+filepath.Join(other, "fennec.db"))
		if !errors.Is(err, fennec.ErrStoreNotEmpty) {
			t.Fatalf("copy into a file with data: %v", err)
		}
		if got := dumpBolt(t, filepath.Join(other, "fennec.db")); !reflect.DeepEqual(got, otherData) {
			t.Fatal("the refused copy changed the file")
		}
	})

	t.Run("bad sources and destinations", func(t *testing.T) {
		closed := fmt.Sprintf("postgres://fennec:s3cret-pw@127.0.0.1:%d/nothing?connect_timeout=5", freeTCPPort(t))
		for _, c := range []struct {
			cfg  config.Config
			to   string
			want string
		}{
			{cfgOf(src, ""), closed, "cannot open the PostgreSQL database postgres://fennec@127.0.0.1"},
			{cfgOf(src, ""), "postgres://%zz", "cannot open the PostgreSQL database"},
			{cfgOf(src, ""), "postgres://x@127.0.0.1/db?sslmode=bogus", "cannot open the PostgreSQL database"},
			{cfgOf(src, ""), "mysql://root:hunter2@db/x", "must be bbolt, file:/path/fennec.db or a postgres:// URL"},
			{cfgOf(src, ""), "file:", "names no file"},
			{cfgOf(src, ""), "bbolt", "the store itself"},
			{cfgOf(src, ""), "file:" + filepath.Join(src, "fennec.db"), "the store itself"},
			{cfgOf(t.TempDir(), dsn), dsn, "the store itself"},
			{cfgOf(t.TempDir(), ""), "postgres://127.0.0.1/x", "no database at"},
			{cfgOf(t.TempDir(), closed), "bbolt", "cannot open the PostgreSQL database"},
			{cfgOf(t.TempDir(), pg.NewDatabase(t)), "bbolt", "holds no Fennec data"},
		} {
			_, err := fennec.CopyStore(ctx, c.cfg, c.to)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("copy %q to %q: %v, want %q", c.cfg.Store, c.to, err, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "hunter2")) {
				t.Errorf("the error shows a password: %v", err)
			}
		}
		// A file a server holds is not copied from.
		db, err := store.Open(filepath.Join(src, "fennec.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := fennec.CopyStore(ctx, cfgOf(src, ""), pg.NewDatabase(t)); err == nil || !strings.Contains(err.Error(), "in use") {
			t.Errorf("copy of a file in use: %v", err)
		}
	})

	t.Run("backup of a PostgreSQL store restores into either engine", func(t *testing.T) {
		// An instance on PostgreSQL: its store there, its files in data.
		data := t.TempDir()
		live := pg.NewDatabase(t)
		if _, err := fennec.CopyStore(ctx, cfgOf(src, ""), live); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "secret.key"), []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
		var archive bytes.Buffer
		if err := fennec.Backup(ctx, cfgOf(data, live), &archive, fennec.BackupOptions{}, fennec.WithLogger(zap.NewNop())); err != nil {
			t.Fatal(err)
		}
		// What the offline backup saw: the data, and what the app it
		// assembled added to it (schema versions).
		inPostgres := dumpPostgres(t, live)
		for name := range want {
			if !reflect.DeepEqual(inPostgres[name], want[name]) {
				t.Fatalf("the backup changed bucket %q", name)
			}
		}

		intoBolt := filepath.Join(t.TempDir(), "bolt")
		if _, err := fennec.Restore(ctx, bytes.NewReader(archive.Bytes()), intoBolt, fennec.RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := dumpBolt(t, filepath.Join(intoBolt, "fennec.db")); !reflect.DeepEqual(got, inPostgres) {
			t.Fatal("restored into bbolt, the store differs")
		}

		target := pg.NewDatabase(t)
		intoPG := filepath.Join(t.TempDir(), "pg")
		rep, err := fennec.Restore(ctx, bytes.NewReader(archive.Bytes()), intoPG, fennec.RestoreOptions{Store: target})
		if err != nil {
			t.Fatal(err)
		}
		if got := dumpPostgres(t, target); !reflect.DeepEqual(got, inPostgres) {
			t.Fatal("restored into PostgreSQL, the store differs")
		}
		if _, err := os.Stat(filepath.Join(intoPG, "fennec.db")); err == nil {
			t.Error("a restore into PostgreSQL left a fennec.db in the data directory")
		}
		if b, err := os.ReadFile(filepath.Join(intoPG, "secret.key")); err != nil || string(b) != "k" {
			t.Errorf("secret.key: %q %v", b, err)
		}
		if !strings.Contains(strings.Join(rep.Summary, "\n"), "loaded into the PostgreSQL database") {
			t.Errorf("summary %q", rep.Summary)
		}

		// Again into the same database: refused before anything is
		// written, even into an empty data directory; replaced with force.
		again := filepath.Join(t.TempDir(), "again")
		_, err = fennec.Restore(ctx, bytes.NewReader(archive.Bytes()), again, fennec.RestoreOptions{Store: target})
		if !errors.Is(err, fennec.ErrStoreNotEmpty) || !strings.Contains(err.Error(), "--force") {
			t.Fatalf("restore into a database with data: %v", err)
		}
		if _, err := os.Stat(again); err == nil {
			if entries, _ := os.ReadDir(again); len(entries) > 0 {
				t.Errorf("a refused restore wrote into the data directory: %v", entries)
			}
		}
		// A database with other data: --force replaces all of it.
		changed := pg.NewDatabase(t)
		e, err := postgres.Open(ctx, changed, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = e.Update(ctx, func(etx store.EngineTx) error {
			b, _ := etx.CreateBucketIfNotExists([]byte("many"))
			if err := b.Put([]byte("stale"), []byte("old")); err != nil {
				return err
			}
			extra, _ := etx.CreateBucketIfNotExists([]byte("not-in-the-archive"))
			return extra.SetSequence(5)
		})
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		forced := fennec.RestoreOptions{Store: changed, Force: true}
		if _, err := fennec.Restore(ctx, bytes.NewReader(archive.Bytes()), filepath.Join(t.TempDir(), "forced"), forced); err != nil {
			t.Fatal(err)
		}
		if got := dumpPostgres(t, changed); !reflect.DeepEqual(got, inPostgres) {
			t.Fatal("restored with --force, the store differs")
		}
	})
}

// freeTCPPort is a loopback port nothing listens on (the moment it is
// returned).
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
