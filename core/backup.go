package fennec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
)

// The admin socket lets local commands (fennec backup) reach a running
// server. It lives in the data directory with mode 0600, so only the account
// that owns the data may use it; it needs no token.
const adminSocketName = "fennec.sock"

type adminSocket struct {
	srv  *http.Server
	path string
}

func startAdminSocket(dataDir string, db *store.DB, log *zap.Logger, command http.HandlerFunc) *adminSocket {
	path := filepath.Join(dataDir, adminSocketName)
	_ = os.Remove(path) // a stale socket from a crash; the store lock proves we own the dir
	ln, err := net.Listen("unix", path)
	if err != nil {
		log.Warn("admin socket unavailable; online backup disabled", zap.String("path", path), zap.Error(err))
		return nil
	}
	_ = os.Chmod(path, 0o600)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /command/{name}", command)
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		n, err := db.Backup(w)
		if err != nil {
			log.Error("online backup failed", zap.Error(err))
			return
		}
		log.Info("online backup served", zap.Int64("bytes", n))
	})
	s := &adminSocket{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, path: path}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

func (s *adminSocket) close() {
	_ = s.srv.Close()
	_ = os.Remove(s.path)
}

// openIdleStore opens the store of dataDir when no server holds it; it
// returns store.ErrLocked when one does (then the admin socket is the way
// in). The caller closes the store.
func openIdleStore(dataDir string) (*store.DB, error) {
	dbPath := filepath.Join(dataDir, "fennec.db")
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("no database at %s: %w", dbPath, err)
	}
	return store.Open(dbPath, store.Options{LockTimeout: 200 * time.Millisecond})
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

// Backup writes a consistent copy of the store in dataDir to dest. When no
// server holds the store it copies it directly; when one is running, it asks
// that server through its admin socket, so the copy is taken while serving.
func Backup(ctx context.Context, dataDir, dest string) (int64, error) {
	db, err := openIdleStore(dataDir)
	if err == nil {
		defer db.Close()
		return db.BackupFile(dest)
	}
	if !errors.Is(err, store.ErrLocked) {
		return 0, fmt.Errorf("backup: %w", err)
	}
	return store.WriteSnapshot(dest, func(w io.Writer) (int64, error) {
		resp, err := adminRequest(ctx, dataDir, http.MethodGet, "/backup", nil)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("server refused backup: %s", resp.Status)
		}
		return io.Copy(w, resp.Body)
	})
}
