package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fennec-forge/fennec/core/store"
)

// Only a failure to reach the database is ErrUnavailable (a 503 that
// invites a retry); the server's other answers and the driver's other
// errors stay errors of their own (a 500).
func TestWrapMarksOnlyUnreachableAsUnavailable(t *testing.T) {
	for _, c := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"hung up", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"closed", fmt.Errorf("query: %w", pgconn.ErrConnClosed), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"serialization", &pgconn.PgError{Code: "40001"}, false},
		{"driver misuse", errors.New("cannot encode value"), false},
		{"cancelled", context.Canceled, false},
	} {
		got := wrap("op", c.err)
		if errors.Is(got, store.ErrUnavailable) != c.unavailable {
			t.Errorf("%s: wrap = %v, unavailable %v, want %v", c.name, got, !c.unavailable, c.unavailable)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: wrap lost the cause: %v", c.name, got)
		}
	}
}
