package internal_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// start runs the stock application and hands back identity's service.
func start(t *testing.T, opts ...fennectest.Option) (*fennectest.Server, *internal.Service) {
	t.Helper()
	var svc *internal.Service
	s := stocktest.Start(t, append(opts, fennectest.WithExtract(&svc))...)
	return s, svc
}

func get(t *testing.T, s *fennectest.Server, path string, headers ...string) int {
	t.Helper()
	resp := s.Do(t, http.MethodGet, path, nil, headers...)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSudoReadWritesNoToken: GET /user with sudo used to mint a private token
// for the target on every call, and the eleventh evicted the target's own
// login token. A read must write no token.
func TestSudoReadWritesNoToken(t *testing.T) {
	t.Parallel()
	s, svc := start(t)
	x := s.CreateUser(t, "sudoed")
	own := s.Login(t, x.Username, x.Password)
	ctx := context.Background()
	before, err := svc.TokenCount(ctx, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if st := get(t, s, "/api/v4/user?sudo=sudoed", "PRIVATE-TOKEN", s.RootToken); st != http.StatusOK {
			t.Fatalf("call %d: %d", i, st)
		}
	}
	after, err := svc.TokenCount(ctx, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("20 sudo reads changed sudoed's token count from %d to %d", before, after)
	}
	if st := get(t, s, "/api/v4/user", "PRIVATE-TOKEN", own); st != http.StatusOK {
		t.Errorf("sudoed's own login token stopped working after sudo reads: %d", st)
	}
}
