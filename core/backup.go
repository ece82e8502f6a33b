package fennec

// fennec backup: one tar archive of the whole data directory (the store,
// every module's files, secret.key), consistent while the server serves.
// The archive opens with manifest.json, which lists every entry with its
// size and SHA-256; restore.go reads it back.

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
)

// The admin socket lets local commands (fennec backup, the modules' admin
// commands) reach a running server. It lives in the data directory with
// mode 0600, so only the account that owns the data may use it; it needs no
// token.
const adminSocketName = "fennec.sock"

// The fixed names of a backup archive, beside the participants' directories.
const (
	manifestName  = "manifest.json"
	storeName     = "fennec.db"
	secretKeyName = "secret.key"
	// BackupFormat is the version of the archive layout; restore refuses
	// a newer one.
	BackupFormat = 1
)

func isReservedName(p string) bool {
	return p == manifestName || p == storeName || p == secretKeyName
}

// adminSocket serves the admin socket of one data directory. Nodes sharing
// a data directory (a PostgreSQL store) would each take the socket over
// from the last, and the socket of a node that died would answer nobody;
// so one process at a time owns it, by an exclusive flock of
// adminSocketLockName held while it runs (the kernel drops it with a
// killed process), and the others try to take it over every second.
type adminSocket struct {
	path    string
	lock    string
	handler http.Handler
	log     *zap.Logger

	mu   sync.Mutex
	srv  *http.Server
	held *os.File // the lock file, while this process owns the socket

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// adminSocketLockName is the file whose flock says which process owns the
// admin socket.
const adminSocketLockName = "fennec.sock.lock"

// adminSocketRetry is how often a process that does not own the admin
// socket looks whether its owner has gone.
const adminSocketRetry = time.Second

func startAdminSocket(dataDir string, log *zap.Logger, command, backup http.HandlerFunc) *adminSocket {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /command/{name}", command)
	mux.HandleFunc("GET /backup", backup)
	s := &adminSocket{path: filepath.Join(dataDir, adminSocketName), lock: filepath.Join(dataDir, adminSocketLockName),
		handler: mux, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	taken, err := s.take()
	if err != nil {
		log.Warn("admin socket unavailable; online backup and admin commands disabled", zap.String("path", s.path), zap.Error(err))
		close(s.done)
		return s
	}
	if taken {
		close(s.done)
		return s
	}
	log.Info("admin socket: another process on this data directory serves it; this one takes it over if that one stops",
		zap.String("path", s.path))
	go func() {
		defer close(s.done)
		t := time.NewTicker(adminSocketRetry)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			if taken, err := s.take(); err != nil || taken {
				if err != nil {
					log.Warn("admin socket unavailable", zap.String("path", s.path), zap.Error(err))
				} else {
					log.Info("admin socket: taken over", zap.String("path", s.path))
				}
				return
			}
		}
	}()
	return s
}

// take takes the socket when no other process owns it: false, with no
// error, while one does.
func (s *adminSocket) take() (bool, error) {
	f, err := os.OpenFile(s.lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	_ = os.Remove(s.path) // a stale socket of a process that died: the lock proves it gone
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		f.Close()
		return false, err
	}
	_ = os.Chmod(s.path, 0o600)
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.srv, s.held = srv, f
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return true, nil
}

// close gives the socket up (an app stopped twice closes it once).
func (s *adminSocket) close() {
	s.closeOnce.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return
	}
	_ = s.srv.Close()
	_ = os.Remove(s.path)
	_ = s.held.Close() // and with it the flock: another process may take over
	s.srv, s.held = nil, nil
}

// openIdleStore opens the store of dataDir when no server holds it; it
// returns store.ErrLocked when one does (then the admin socket is the way
// in). The caller closes the store.
func openIdleStore(dataDir string) (*store.DB, error) {
	dbPath := filepath.Join(dataDir, storeName)
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("no database at %s: %w", dbPath, err)
	}
	return store.Open(dbPath, store.Options{LockTimeout: 200 * time.Millisecond})
}

// serverHolds says whether a running server holds the store of cfg, so
// that a command must go through its admin socket. The bbolt file's lock
// tells; PostgreSQL has no such lock (several nodes share it), so there a
// server on this data directory is known by its admin socket answering.
// An offline command needs a store to work on: a missing file, or a
// database that holds no Fennec data, is an error.
func serverHolds(ctx context.Context, cfg config.Config) (bool, error) {
	if cfg.Store == "" {
		db, err := openIdleStore(cfg.Data)
		if err == nil {
			return false, db.Close()
		}
		if errors.Is(err, store.ErrLocked) {
			return true, nil
		}
		return false, err
	}
	if adminSocketAnswers(cfg.Data) {
		return true, nil
	}
	e, err := openPostgres(ctx, cfg.Store)
	if err != nil {
		return false, err
	}
	defer e.Close()
	held, err := store.HoldsData(ctx, e)
	if err != nil {
		return false, fmt.Errorf("read the PostgreSQL database %s: %w", redactDSN(cfg.Store), err)
	}
	if !held {
		return false, fmt.Errorf("no Fennec data in the PostgreSQL database %s", redactDSN(cfg.Store))
	}
	return false, nil
}

// adminSocketAnswers says whether a server listens on the admin socket of
// dataDir (a socket file left by a crash refuses the connection).
func adminSocketAnswers(dataDir string) bool {
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, adminSocketName), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// adminRequest sends a request to the running server's admin socket in
// dataDir; the caller closes the response body.
func adminRequest(ctx context.Context, dataDir, method, path string, body io.Reader) (*http.Response, error) {
	sock := filepath.Join(dataDir, adminSocketName)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, method, "http://fennec"+path, body)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the database is in use and the server's admin socket %s does not answer: %w", sock, err)
	}
	return resp, nil
}

// BackupOptions tune a backup.
type BackupOptions struct {
	// WithoutSecretKey leaves secret.key out of the archive (keep it
	// apart: without it the sealed secrets of the store cannot be opened).
	WithoutSecretKey bool
}

// BackupManifest is the archive's first entry.
type BackupManifest struct {
	Format         int              `json:"format"`
	FennecVersion  string           `json:"fennec_version"`
	Revision       string           `json:"revision"`
	CreatedAt      time.Time        `json:"created_at"`
	SchemaVersions map[string]int   `json:"schema_versions"`
	Counts         map[string]int64 `json:"counts"`
	SecretKey      bool             `json:"secret_key"`
	// Bytes is the size of every file together; Files lists every entry
	// after the manifest, in archive order.
	Bytes int64          `json:"bytes"`
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one entry of the archive.
type ManifestFile struct {
	Path   string `json:"path"`
	Dir    bool   `json:"dir,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
}

// Backup writes a backup archive (uncompressed tar) of the data directory
// of cfg and of its store (the bbolt file, or the PostgreSQL database
// cfg.Store names) to w: through the running server's admin socket when
// one serves the data directory, otherwise from an application assembled
// from opts for the backup alone (no listener). Either way the store is
// archived as a bbolt file (Tx.WriteTo), which restore can load into
// either engine.
func Backup(ctx context.Context, cfg config.Config, w io.Writer, bo BackupOptions, opts ...Option) error {
	served, err := serverHolds(ctx, cfg)
	if err != nil {
		return err
	}
	if !served {
		cfg.Listen = ""
		app, err := New(append(opts, WithConfig(cfg))...)
		if err != nil {
			return err
		}
		// Not started: nothing runs but the backup (no start hooks, no
		// bus), so the data directory is read as it is.
		_, berr := app.writeBackup(ctx, w, bo)
		return errors.Join(berr, app.db.Close())
	}
	path := "/backup"
	if bo.WithoutSecretKey {
		path += "?without_secret_key=1"
	}
	resp, err := adminRequest(ctx, cfg.Data, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("server refused the backup: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return err
	}
	if msg := resp.Trailer.Get("Fennec-Error"); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// serveBackup is the admin socket's GET /backup: the archive, streamed; a
// failure after the first byte is told in the Fennec-Error trailer.
func (a *App) serveBackup(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Trailer", "Fennec-Error")
	w.Header().Set("Content-Type", "application/x-tar")
	bo := BackupOptions{WithoutSecretKey: r.URL.Query().Get("without_secret_key") != ""}
	m, err := a.writeBackup(r.Context(), flushWriter{w}, bo)
	if err != nil {
		a.log.Error("online backup failed", zap.Error(err))
		w.Header().Set("Fennec-Error", err.Error())
		return
	}
	a.log.Info("online backup served", zap.Int("files", len(m.Files)), zap.Int64("bytes", m.Bytes))
}

// backupEntry is one entry to archive and where its bytes come from.
type backupEntry struct {
	ManifestFile
	src  string // the file on disk, when data is nil
	data []byte
}

// backupMu keeps backups of one app one at a time (participants' holds
// are not meant to nest).
var backupMu sync.Mutex

// writeBackup writes the archive to w. The point in time is the store's
// read transaction, opened while every participant holds its writes.
func (a *App) writeBackup(ctx context.Context, w io.Writer, bo BackupOptions) (*BackupManifest, error) {
	backupMu.Lock()
	defer backupMu.Unlock()
	start := time.Now()
	parts := append([]BackupParticipant(nil), a.backup...)
	sort.Slice(parts, func(i, j int) bool { return parts[i].Name < parts[j].Name })

	// Hold every participant; thaw right after the capture, end at the end.
	var thaws, ends []func()
	thawAll := func() {
		for _, f := range thaws {
			f()
		}
		thaws = nil
	}
	defer func() {
		thawAll()
		for _, f := range ends {
			f()
		}
	}()
	for _, p := range parts {
		if p.Hold == nil {
			continue
		}
		thaw, end, err := p.Hold(ctx)
		if err != nil {
			return nil, fmt.Errorf("backup: %s: %w", p.Name, err)
		}
		thaws, ends = append(thaws, thaw), append(ends, end)
	}

	snap, err := os.CreateTemp(a.cfg.Data, ".backup-*.db")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(snap.Name())
	defer snap.Close()
	m := &BackupManifest{Format: BackupFormat, CreatedAt: time.Now().UTC(), Counts: map[string]int64{}}
	m.FennecVersion, m.Revision = Version()
	var captured []BackupFile
	err = a.db.View(ctx, func(tx *store.Tx) error {
		m.SchemaVersions = store.SchemaVersions(tx)
		for _, p := range parts {
			c, err := p.Capture(tx.Context(), tx)
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			for k, v := range c.Counts {
				m.Counts[k] += v
			}
			captured = append(captured, c.Files...)
		}
		// The point in time is taken: writes go on while the snapshot is
		// written from this transaction.
		thawAll()
		_, err := tx.WriteTo(snap)
		return err
	})
	if err == nil {
		err = snap.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	a.log.Info("backup: point in time taken", zap.Duration("took", time.Since(start)), zap.Int("files", len(captured)))

	entries := []*backupEntry{{ManifestFile: ManifestFile{Path: storeName}, src: snap.Name()}}
	if !bo.WithoutSecretKey {
		key := filepath.Join(a.cfg.Data, secretKeyName)
		if _, err := os.Stat(key); err == nil {
			entries = append(entries, &backupEntry{ManifestFile: ManifestFile{Path: secretKeyName}, src: key})
			m.SecretKey = true
		}
	}
	sort.Slice(captured, func(i, j int) bool { return captured[i].Path < captured[j].Path })
	for _, f := range captured {
		if !cleanRelative(f.Path) || isReservedName(f.Path) {
			return nil, fmt.Errorf("backup: a participant listed %q, which is not a clean relative path", f.Path)
		}
		e := &backupEntry{ManifestFile: ManifestFile{Path: f.Path, Dir: f.Dir, Size: f.Size}, data: f.Data}
		if f.Data != nil {
			e.Size = int64(len(f.Data))
		} else if !f.Dir {
			e.src = filepath.Join(a.cfg.Data, filepath.FromSlash(f.Path))
		}
		entries = append(entries, e)
	}

	// First pass: the checksums, for the manifest that comes first.
	kept := entries[:0]
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.Dir {
			kept = append(kept, e)
			continue
		}
		if e.src == snap.Name() || e.Path == secretKeyName {
			fi, err := os.Stat(e.src)
			if err != nil {
				return nil, fmt.Errorf("backup: %w", err)
			}
			e.Size = fi.Size()
		}
		sum, err := fileSum(e)
		if errors.Is(err, fs.ErrNotExist) {
			// Removed since the capture by something the participant does
			// not hold (an upload of a deleted project): it is left out.
			a.log.Warn("backup: a file went away during the backup; left out", zap.String("path", e.Path))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("backup: %s: %w", e.Path, err)
		}
		e.SHA256 = sum
		m.Bytes += e.Size
		kept = append(kept, e)
	}
	entries = kept
	for _, e := range entries {
		m.Files = append(m.Files, e.ManifestFile)
	}
	manifest, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, err
	}

	// Second pass: the archive.
	tw := tar.NewWriter(w)
	now := m.CreatedAt
	if err := tw.WriteHeader(&tar.Header{Name: manifestName, Mode: 0o600, Size: int64(len(manifest)), ModTime: now, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(manifest); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.Dir {
			if err := tw.WriteHeader(&tar.Header{Name: e.Path + "/", Mode: 0o750, ModTime: now, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.Path, Mode: 0o640, Size: e.Size, ModTime: now, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if err := copyEntry(tw, e); err != nil {
			return nil, fmt.Errorf("backup: %s: %w", e.Path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	a.log.Info("backup written", zap.Int("files", len(m.Files)), zap.Int64("bytes", m.Bytes), zap.Duration("took", time.Since(start)))
	return m, nil
}

// open is the entry's content: its data, or the first Size bytes of its file.
func (e *backupEntry) open() (io.ReadCloser, error) {
	if e.data != nil {
		return io.NopCloser(bytes.NewReader(e.data)), nil
	}
	f, err := os.Open(e.src)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, e.Size), f}, nil
}

func fileSum(e *backupEntry) (string, error) {
	r, err := e.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", err
	}
	if n != e.Size {
		return "", fmt.Errorf("the file is %d bytes, shorter than the %d captured", n, e.Size)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyEntry writes an entry's content, checking that it is still what the
// first pass summed (files a participant holds never change; anything else
// fails the backup rather than archive a lie).
func copyEntry(w io.Writer, e *backupEntry) error {
	r, err := e.open()
	if err != nil {
		return fmt.Errorf("changed during the backup: %w", err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if err != nil {
		return err
	}
	if n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return errors.New("the file changed during the backup; run the backup again")
	}
	return nil
}
