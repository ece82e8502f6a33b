package fennec

// fennec store copy: moving an instance's store from one engine to another
// (the data directory's bbolt file, a PostgreSQL database), and what
// restore needs to load an archive's store into PostgreSQL. The copy is
// verified as a backup is: both sides are summarised bucket by bucket
// (keys, sequence, a digest of every key and value) and must agree.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/postgres"
)

// ErrStoreNotEmpty is returned by CopyStore for a destination that already
// holds data, and by Restore for a PostgreSQL database that does, without
// RestoreOptions.Force.
var ErrStoreNotEmpty = errors.New("the destination store already holds Fennec data")

// CopyReport is what CopyStore did.
type CopyReport struct {
	// From and To describe both stores (a PostgreSQL URL without its
	// password).
	From, To string
	Buckets  int
	Keys     int64
}

// isPostgresURL says whether s names a PostgreSQL database.
func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// redactDSN is a PostgreSQL URL fit for messages and logs: no password,
// no query (which may carry one too).
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" && u.Path == "" {
		return "(an unreadable postgres:// URL)"
	}
	u.RawQuery = ""
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// openPostgres opens the PostgreSQL engine of dsn, with a bounded wait and
// an error that says which database (never its password).
func openPostgres(ctx context.Context, dsn string) (*postgres.Engine, error) {
	if !isPostgresURL(dsn) {
		return nil, errors.New("a PostgreSQL store is named by a postgres:// URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	e, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		return nil, fmt.Errorf("cannot open the PostgreSQL database %s: %w", redactDSN(dsn), err)
	}
	return e, nil
}

// copyTarget is one side of a copy: an open engine and how to speak of it.
type copyTarget struct {
	engine store.Engine
	about  string
	// boltPath is the file of a bbolt target; created says the copy made
	// it (so a failed copy removes it).
	boltPath string
	created  bool
}

// openBoltTarget opens the bbolt file at path; it must exist unless create.
func openBoltTarget(path string, create bool) (*copyTarget, error) {
	t := &copyTarget{about: "the bbolt file " + path, boltPath: path}
	if _, err := os.Stat(path); err != nil {
		if !create || !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no database at %s: %w", path, err)
		}
		t.created = true
	}
	db, err := store.Open(path, store.Options{LockTimeout: 200 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%s is in use: stop the server that holds it first", path)
	}
	if err != nil {
		return nil, err
	}
	t.engine = db.Engine()
	return t, nil
}

// parseCopyDestination reads --to: "bbolt" (fennec.db in the data
// directory), "file:PATH", or a postgres:// URL.
func parseCopyDestination(cfg config.Config, to string) (dsn, boltPath string, err error) {
	switch {
	case isPostgresURL(to):
		return to, "", nil
	case to == "bbolt":
		return "", filepath.Join(cfg.Data, storeName), nil
	case strings.HasPrefix(to, "file:"):
		p := strings.TrimPrefix(strings.TrimPrefix(to, "file:"), "//")
		if p == "" {
			return "", "", errors.New("file: names no file (file:/path/fennec.db)")
		}
		return "", filepath.Clean(p), nil
	}
	return "", "", fmt.Errorf("the destination must be bbolt, file:/path/fennec.db or a postgres:// URL, not %q", redactArg(to))
}

// redactArg keeps an unrecognised destination out of messages when it
// looks like it may carry a credential.
func redactArg(s string) string {
	if strings.Contains(s, "@") || strings.Contains(s, "password") {
		return "(a URL with credentials)"
	}
	return s
}

// sameFile says whether a and b are one file (or, not existing, one path).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, _ := filepath.Abs(a)
	absB, _ := filepath.Abs(b)
	return absA == absB
}

// CopyStore copies the store of cfg (its bbolt file, or the PostgreSQL
// database cfg.Store names) into the store to names ("bbolt" for fennec.db
// in the data directory, "file:PATH", or a postgres:// URL), which must
// hold no data. No server may serve the source meanwhile: a bbolt file's
// lock ensures it; for PostgreSQL the operator stops every node (a server
// on this data directory is refused, and a source that changes during the
// copy fails it). The copy is verified; a failed one leaves the
// destination as it was (a file the copy created is removed).
func CopyStore(ctx context.Context, cfg config.Config, to string) (*CopyReport, error) {
	dsn, boltPath, err := parseCopyDestination(cfg, to)
	if err != nil {
		return nil, err
	}
	if cfg.Store == "" && boltPath != "" && sameFile(boltPath, filepath.Join(cfg.Data, storeName)) ||
		cfg.Store != "" && dsn == cfg.Store {
		return nil, errors.New("the destination is the store itself")
	}

	// The source.
	var src *copyTarget
	if cfg.Store == "" {
		src, err = openBoltTarget(filepath.Join(cfg.Data, storeName), false)
		if err != nil {
			return nil, err
		}
	} else {
		if adminSocketAnswers(cfg.Data) {
			return nil, fmt.Errorf("a server is running on %s: stop it, and every other node of the database, first", cfg.Data)
		}
		e, err := openPostgres(ctx, cfg.Store)
		if err != nil {
			return nil, err
		}
		src = &copyTarget{engine: e, about: "the PostgreSQL database " + redactDSN(cfg.Store)}
	}
	defer src.engine.Close()
	before, err := store.Summarize(ctx, src.engine)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src.about, err)
	}
	if !anyData(before) {
		return nil, fmt.Errorf("%s holds no Fennec data", src.about)
	}

	// The destination.
	var dst *copyTarget
	if dsn != "" {
		e, err := openPostgres(ctx, dsn)
		if err != nil {
			return nil, err
		}
		dst = &copyTarget{engine: e, about: "the PostgreSQL database " + redactDSN(dsn)}
	} else {
		if dst, err = openBoltTarget(boltPath, true); err != nil {
			return nil, err
		}
	}
	closeDst := func() error { return dst.engine.Close() }
	defer func() {
		if closeDst != nil {
			_ = closeDst()
		}
	}()
	held, err := store.HoldsData(ctx, dst.engine)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dst.about, err)
	}
	if held {
		return nil, fmt.Errorf("%w: %s (copy into an empty store only)", ErrStoreNotEmpty, dst.about)
	}

	rep := &CopyReport{From: src.about, To: dst.about}
	err = copyAndVerify(ctx, src.engine, dst.engine, before, rep)
	if err != nil {
		// Undo: the destination was empty, so emptying it again (or
		// removing the file the copy made) leaves it as it was.
		undo := store.Empty(context.WithoutCancel(ctx), dst.engine)
		cerr := closeDst()
		closeDst = nil
		if dst.created {
			undo = errors.Join(cerr, os.Remove(dst.boltPath))
		}
		if undo != nil {
			return nil, fmt.Errorf("%w; and emptying %s again failed too (%v): empty it before another copy", err, dst.about, undo)
		}
		return nil, err
	}
	err = closeDst()
	closeDst = nil
	return rep, err
}

// copyAndVerify copies src into dst and checks the result against before,
// src's summary taken before the copy; src read again must not have changed.
func copyAndVerify(ctx context.Context, src, dst store.Engine, before map[string]store.BucketSummary, rep *CopyReport) error {
	if err := store.Copy(ctx, src, dst); err != nil {
		return err
	}
	after, err := store.Summarize(ctx, dst)
	if err != nil {
		return fmt.Errorf("read the copy back: %w", err)
	}
	again, err := store.Summarize(ctx, src)
	if err != nil {
		return fmt.Errorf("read the source again: %w", err)
	}
	if diff := compareSummaries(before, again); diff != "" {
		return fmt.Errorf("the source changed during the copy (%s): a server is writing to it; stop every node and copy again", diff)
	}
	if diff := compareSummaries(before, after); diff != "" {
		return fmt.Errorf("the copy differs from the source: %s", diff)
	}
	for _, s := range before {
		rep.Buckets++
		rep.Keys += int64(s.Keys)
	}
	return nil
}

// anyData says whether a summary has a key or a sequence anywhere.
func anyData(sums map[string]store.BucketSummary) bool {
	for _, s := range sums {
		if s.Keys > 0 || s.Sequence != 0 {
			return true
		}
	}
	return false
}

// compareSummaries names the first difference between two stores'
// summaries ("" when none). A bucket one side lacks counts as empty on
// that side: every open creates a few empty buckets.
func compareSummaries(want, got map[string]store.BucketSummary) string {
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		w, g := want[n], got[n]
		switch {
		case w.Keys != g.Keys:
			return fmt.Sprintf("bucket %q has %d keys, not %d", n, g.Keys, w.Keys)
		case w.Sequence != g.Sequence:
			return fmt.Sprintf("bucket %q has sequence %d, not %d", n, g.Sequence, w.Sequence)
		case w.Digest != g.Digest && w.Keys > 0:
			return fmt.Sprintf("bucket %q has other keys or values", n)
		}
	}
	return ""
}
