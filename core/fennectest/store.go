package fennectest

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
)

// StoreEnv names the environment variable that picks the store engine of
// every server the harness starts: unset (or "bbolt") for the bbolt file
// fennec.db in the data directory, "postgres" for a database of its own on
// the test process's shared PostgreSQL server (pgserver.Shared). A module's
// suite runs unchanged on either; `make test` runs some on both.
const StoreEnv = "FENNEC_TEST_STORE"

// OnPostgres tells whether the servers of this test process keep their
// data in PostgreSQL (StoreEnv). A test about the bbolt file itself skips
// there, saying so.
func OnPostgres() bool {
	return os.Getenv(StoreEnv) == "postgres"
}

// postgresStores remembers the database of each data directory a server
// ran on, so a server started again on the same directory (WithDataDir)
// finds its data there, as a restart on the bbolt file would.
var postgresStores struct {
	mu        sync.Mutex
	byDataDir map[string]string
}

// storeFor is the cfg.Store of a server on dataDir: empty for the bbolt
// file, else the DSN of the directory's PostgreSQL database. A directory
// the test made for this server alone (lasting false) gets a database
// dropped with the test; one handed from server to server keeps its
// database until the process stops the shared server, since a subtest
// that started the first server may end long before the last one.
func storeFor(t testing.TB, dataDir string, lasting bool) string {
	t.Helper()
	if !OnPostgres() {
		return ""
	}
	key, err := filepath.Abs(dataDir)
	if err != nil {
		t.Fatalf("fennectest: data directory %s: %v", dataDir, err)
	}
	postgresStores.mu.Lock()
	defer postgresStores.mu.Unlock()
	if dsn, ok := postgresStores.byDataDir[key]; ok {
		return dsn
	}
	server := pgserver.Shared(t)
	var dsn string
	if lasting {
		dsn = server.NewLastingDatabase(t)
	} else {
		dsn = server.NewDatabase(t)
	}
	if postgresStores.byDataDir == nil {
		postgresStores.byDataDir = map[string]string{}
	}
	postgresStores.byDataDir[key] = dsn
	if !lasting {
		t.Cleanup(func() {
			postgresStores.mu.Lock()
			defer postgresStores.mu.Unlock()
			delete(postgresStores.byDataDir, key)
		})
	}
	return dsn
}

// OpenStore opens the store that a server on dataDir (WithDataDir) uses,
// on either engine, for a test that reads or writes it while no server
// runs there (a store left as a crash or an older version left it). The
// test closes it before starting a server on dataDir.
func OpenStore(t testing.TB, dataDir string) *store.DB {
	t.Helper()
	cfg := config.Default()
	cfg.Data = dataDir
	cfg.Store = storeFor(t, dataDir, true)
	db, err := fennec.OpenStore(cfg, store.Options{})
	if err != nil {
		t.Fatalf("fennectest: open the store of %s: %v", dataDir, err)
	}
	return db
}

// Main runs a package's tests and then stops the shared PostgreSQL server
// they may have started (StoreEnv), which would otherwise leave its
// directory behind. A package whose suite runs on PostgreSQL calls it from
// its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(fennectest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	pgserver.StopShared()
	return code
}

// StoreBytes is what the server's store keeps at rest, for a test that a
// secret is never stored in the clear: on bbolt the file fennec.db itself,
// free pages and all; on PostgreSQL every bucket, key and value, as the
// store's backup (a bbolt file of the same data) holds them.
func (s *Server) StoreBytes(t testing.TB) []byte {
	t.Helper()
	if s.Store.Engine().Name() == "bbolt" {
		data, err := os.ReadFile(filepath.Join(s.DataDir, "fennec.db"))
		if err != nil {
			t.Fatalf("fennectest: read the store: %v", err)
		}
		return data
	}
	var backup bytes.Buffer
	if _, err := s.Store.Backup(&backup); err != nil {
		t.Fatalf("fennectest: copy the store: %v", err)
	}
	return backup.Bytes()
}
