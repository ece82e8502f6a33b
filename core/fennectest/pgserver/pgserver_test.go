package pgserver

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func show(t *testing.T, conn *pgx.Conn, setting string) string {
	t.Helper()
	var value string
	if err := conn.QueryRow(context.Background(), "SHOW "+setting).Scan(&value); err != nil {
		t.Fatalf("SHOW %s: %v", setting, err)
	}
	return value
}

func TestStartServesADatabase(t *testing.T) {
	server := Start(t, Options{})
	dsn := server.NewDatabase(t)
	if !strings.HasPrefix(dsn, "postgres://postgres@127.0.0.1:") || !strings.HasSuffix(dsn, "?sslmode=disable") {
		t.Errorf("DSN = %q", dsn)
	}
	conn := connect(t, dsn)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO notes VALUES (1, $1)", "héllo ✓"); err != nil {
		t.Fatal(err)
	}
	var body string
	if err := conn.QueryRow(ctx, "SELECT body FROM notes WHERE id = 1").Scan(&body); err != nil {
		t.Fatal(err)
	}
	if body != "héllo ✓" {
		t.Errorf("body = %q, want the UTF-8 text inserted", body)
	}
	for setting, want := range map[string]string{
		"server_encoding":    "UTF8",
		"lc_collate":         "C",
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		"max_connections":    "200",
		"listen_addresses":   "127.0.0.1",
	} {
		if got := show(t, conn, setting); got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
}

func TestCommittedRowSurvivesAKill(t *testing.T) {
	server := Start(t, Options{Durable: true})
	dsn := server.NewDatabase(t)
	ctx := context.Background()
	conn := connect(t, dsn)
	if got := show(t, conn, "fsync"); got != "on" {
		t.Errorf("a durable server runs with fsync = %q", got)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE ledger (entry text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO ledger VALUES ('committed')"); err != nil {
		t.Fatal(err)
	}

	server.Kill()
	if err := ping(ctx, dsn); err == nil {
		t.Fatal("the killed server still answers")
	}
	server.Restart(t)

	conn = connect(t, dsn)
	var entry string
	if err := conn.QueryRow(ctx, "SELECT entry FROM ledger").Scan(&entry); err != nil {
		t.Fatalf("after the crash: %v", err)
	}
	if entry != "committed" {
		t.Errorf("entry = %q", entry)
	}
}

func TestStopAndRestartKeepThePort(t *testing.T) {
	server := Start(t, Options{})
	port := server.Port
	server.Stop()
	if err := ping(context.Background(), server.DSN("postgres")); err == nil {
		t.Fatal("the stopped server still answers")
	}
	server.Restart(t)
	if server.Port != port {
		t.Errorf("port changed from %d to %d", port, server.Port)
	}
	if err := ping(context.Background(), server.DSN("postgres")); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

func TestDatabasesAreIsolated(t *testing.T) {
	server := Shared(t)
	if Shared(t) != server {
		t.Fatal("Shared started a second server")
	}
	first, second := server.NewDatabase(t), server.NewDatabase(t)
	if first == second {
		t.Fatalf("two databases share the DSN %s", first)
	}
	ctx := context.Background()
	if _, err := connect(t, first).Exec(ctx, "CREATE TABLE mine (x int)"); err != nil {
		t.Fatal(err)
	}
	_, err := connect(t, second).Exec(ctx, "SELECT * FROM mine")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" { // undefined_table
		t.Fatalf("the second database sees the first's table: err = %v", err)
	}
}

func TestDatabaseIsDroppedAtCleanup(t *testing.T) {
	server := Shared(t)
	var name string
	parent := t
	t.Run("user", func(t *testing.T) {
		dsn := server.NewDatabase(t)
		name = strings.TrimSuffix(dsn[strings.LastIndex(dsn, "/")+1:], "?sslmode=disable")
		// A session still open at cleanup must not keep the database.
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		parent.Cleanup(func() { _ = conn.Close(context.Background()) })
	})
	var count int
	err := connect(t, server.DSN("postgres")).QueryRow(context.Background(),
		"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&count)
	if err != nil {
		t.Fatal(err)
	}
	if count != 0 {
		t.Errorf("database %s outlived its test", name)
	}
}

func TestLastingDatabaseOutlivesItsTest(t *testing.T) {
	server := Shared(t)
	var dsn string
	t.Run("maker", func(t *testing.T) {
		dsn = server.NewLastingDatabase(t)
		if _, err := connect(t, dsn).Exec(context.Background(), "CREATE TABLE kept (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := connect(t, dsn).Exec(context.Background(), "INSERT INTO kept VALUES (1)"); err != nil {
		t.Fatalf("the lasting database went with the test that made it: %v", err)
	}
}

func TestDatabaseName(t *testing.T) {
	name := databaseName("TestX/sub-case "+strings.Repeat("long", 30), 7)
	if !strings.HasPrefix(name, "t7_testx_sub_case_long") || len(name) > 63 {
		t.Errorf("databaseName = %q (%d bytes)", name, len(name))
	}
}

func TestMissingPostgresFailsWhereRequired(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"FENNEC_REQUIRE_POSTGRES": "1"}, true},
		{map[string]string{"FENNEC_REQUIRE_POSTGRES": "0"}, false},
		{map[string]string{"CI": "true"}, true},
		{map[string]string{"CI": "1"}, true},
	} {
		if got := required(func(key string) string { return tc.env[key] }); got != tc.want {
			t.Errorf("required with %v = %v, want %v", tc.env, got, tc.want)
		}
	}
}
