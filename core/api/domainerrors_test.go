package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// Domain errors of a pretend module: a sentinel, and a typed error that
// carries a detail for its answer and is also the sentinel errRefMoved.
var (
	errShelfNotFound = errors.New("shelf: not found")
	errShelfLocked   = errors.New("shelf: locked")
	errRefMoved      = errors.New("shelf: ref moved")
)

type movedError struct{ kind string }

func (e *movedError) Error() string        { return "shelf: the " + e.kind + " moved" }
func (e *movedError) Is(target error) bool { return target == errRefMoved }

func mapShelfErrors(a *api.API) {
	a.MapError(errShelfNotFound, func(error) *api.Error { return api.NotFound("Shelf") })
	a.MapError(errShelfLocked, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(errRefMoved, func(err error) *api.Error {
		var m *movedError
		if errors.As(err, &m) {
			return api.Conflict("The " + m.kind + " moved; try again")
		}
		return api.Conflict("The ref moved; try again")
	})
}

type shelfInput struct {
	Kind string `path:"kind"`
}

type shelfOutput struct{ Body struct{} }

func shelfModule() fennec.Module {
	return fennec.NewModule("shelf", fennec.ProvideRoutes(func(fennec.None) fennec.Routes {
		return fennec.Routes{Name: "shelf", Register: func(a *api.API) {
			mapShelfErrors(a)
			api.Register(a, api.Op{ID: "get-shelf", Method: http.MethodGet, Path: "/shelves/{kind}", Access: api.Public},
				func(ctx context.Context, in *shelfInput) (*shelfOutput, error) {
					return nil, shelfError(in.Kind)
				})
			// A raw handler answers through the same table.
			a.Mount("shelf-raw", "GET /-/shelves/{kind}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a.WriteError(w, shelfError(r.PathValue("kind")))
			}))
		}}
	}))
}

func shelfError(kind string) error {
	switch kind {
	case "missing":
		return fmt.Errorf("shelf 7: %w", errShelfNotFound)
	case "locked":
		return errShelfLocked
	case "moved":
		return fmt.Errorf("shelf 7: %w", &movedError{kind: "branch"})
	case "unmapped":
		return errors.New(leakedSecret)
	}
	return nil
}

// A module's sentinel, wrapped as it travels, gets the answer its module
// mapped, through operations and raw handlers alike; an unmapped error is
// still a 500 that says nothing.
func TestMappedDomainErrors(t *testing.T) {
	s := fennectest.Start(t, fennectest.WithModules(identity.Module(), shelfModule()))
	cases := []struct {
		kind   string
		status int
		body   string
	}{
		{"missing", 404, `{"message":"404 Shelf Not Found"}`},
		{"locked", 403, `{"message":"403 Forbidden"}`},
		{"moved", 409, `{"message":"The branch moved; try again"}`},
		{"unmapped", 500, `{"message":"500 Internal Server Error"}`},
	}
	for _, c := range cases {
		for _, prefix := range []string{"/api/v4/shelves/", "/-/shelves/"} {
			resp, raw := send(t, s, http.MethodGet, prefix+c.kind, nil)
			wantError(t, prefix+c.kind, resp, raw, c.status, c.body)
		}
	}
}

// Mapped errors are shared sentinels answered to many requests at once:
// every answer is built fresh and nothing writes into a shared value. Run
// with -race; the answers must also stay right under contention.
func TestMappedDomainErrorsConcurrently(t *testing.T) {
	s := fennectest.Start(t, fennectest.WithModules(identity.Module(), shelfModule()))
	want := map[string]int{"missing": 404, "locked": 403, "moved": 409}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Go(func() {
			for j := 0; j < 20; j++ {
				for kind, status := range want {
					resp, err := http.Get(s.URL + "/api/v4/shelves/" + kind)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != status {
						t.Errorf("%s: %d, want %d", kind, resp.StatusCode, status)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// ErrorResponse hands out a new *Error for every mapped error, so a caller
// that changed one could not change the next request's answer.
func TestErrorResponseIsFresh(t *testing.T) {
	a := api.New(api.Options{})
	mapShelfErrors(a)
	first, ok := a.ErrorResponse(errShelfNotFound)
	if !ok || first.Status != http.StatusNotFound {
		t.Fatalf("got %v %v", first, ok)
	}
	first.Message = "changed"
	second, _ := a.ErrorResponse(fmt.Errorf("wrapped: %w", errShelfNotFound))
	if second == first || second.Message != "404 Shelf Not Found" {
		t.Fatalf("the second answer is %v (%p, first %p)", second.Message, second, first)
	}
	if _, ok := a.ErrorResponse(errors.New("unknown")); ok {
		t.Error("an unmapped error was mapped")
	}
}

// A store that cannot be reached, and writes that kept colliding until the
// engine gave up, are both answered 503 with Retry-After: nothing was
// written, and the same request shortly after succeeds.
func TestTransientStoreErrorsAre503(t *testing.T) {
	a := api.New(api.Options{})
	for _, err := range []error{
		fmt.Errorf("postgres: %w", store.ErrUnavailable),
		fmt.Errorf("%w (40001 thirty times)", store.ErrConflictRetry),
	} {
		e, ok := a.ErrorResponse(err)
		if !ok || e.Status != http.StatusServiceUnavailable || e.GetHeaders().Get("Retry-After") != "1" {
			t.Errorf("%v: answered %+v (%v), want 503 with Retry-After: 1", err, e, ok)
		}
	}
}
