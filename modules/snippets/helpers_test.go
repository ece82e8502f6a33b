package snippets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// env is a running stock application with its bus and store, so a test can
// wait for event deliveries (drain) and look for rows that must be gone.
type env struct {
	*fennectest.Server
	bus *events.Bus
	db  *store.DB
}

func start(t *testing.T, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{}
	e.Server = stocktest.Start(t, append([]fennectest.Option{fennectest.WithExtract(&e.bus, &e.db)}, opts...)...)
	return e
}

// resp is a raw answer.
type resp struct {
	Status int
	Body   string
	Header http.Header
	what   string
}

// call sends a raw request. token may be empty (anonymous); body is nil, a
// string (sent form-encoded, so it may hold any bytes) or a value sent as
// JSON.
func (e *env) call(t *testing.T, token, method, path string, body any) resp {
	t.Helper()
	var r io.Reader
	var hdr []string
	if token != "" {
		hdr = append(hdr, "PRIVATE-TOKEN", token)
	}
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
		hdr = append(hdr, "Content-Type", "application/x-www-form-urlencoded")
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
		hdr = append(hdr, "Content-Type", "application/json")
	}
	res, raw := e.JSON(t, method, "/api/v4"+path, r, nil, hdr...)
	return resp{Status: res.StatusCode, Body: strings.TrimSuffix(string(raw), "\n"), Header: res.Header, what: method + " " + path}
}

// want checks the exact status and JSON body (an empty want: empty body).
func (r resp) want(t *testing.T, status int, body string) {
	t.Helper()
	if r.Status != status || !sameJSON(r.Body, body) {
		t.Fatalf("%s: got %d %s\nwant %d %s", r.what, r.Status, r.Body, status, body)
	}
}

func sameJSON(got, want string) bool {
	if want == "" {
		return got == ""
	}
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		panic("bad expectation " + want)
	}
	return json.Unmarshal([]byte(got), &g) == nil && reflect.DeepEqual(g, w)
}

func (r resp) status(t *testing.T, status int) resp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: got %d %s, want %d", r.what, r.Status, r.Body, status)
	}
	return r
}

func (r resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("%s: %q is not an object: %v", r.what, r.Body, err)
	}
	return m
}

func (r resp) arr(t *testing.T) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal([]byte(r.Body), &a); err != nil || a == nil {
		t.Fatalf("%s: %q is not an array of objects: %v", r.what, r.Body, err)
	}
	return a
}

// pages checks every pagination header.
func (r resp) pages(t *testing.T, total, totalPages, perPage, page int, next, prev string) {
	t.Helper()
	fennectest.CheckPages(t, r.what, r.Header, total, totalPages, perPage, page, next, prev)
}

// ids are the "id"s of a list, in order.
func ids(list []map[string]any) []int64 {
	out := make([]int64, 0, len(list))
	for _, m := range list {
		out = append(out, num(m["id"]))
	}
	return out
}

func wantIDs(t *testing.T, what string, list []map[string]any, want ...int64) {
	t.Helper()
	if got := ids(list); !slices.Equal(got, want) {
		t.Fatalf("%s: ids %v, want %v", what, got, want)
	}
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// snippetBody is a valid project snippet create.
func snippetBody(title, visibility string) map[string]any {
	return map[string]any{"title": title, "file_name": "hello.rb", "code": "puts 'hello'\n", "visibility": visibility}
}

// createSnippet creates a project snippet through the raw API (with the
// spec's code parameter) and returns it.
func (e *env) createSnippet(t *testing.T, token string, project int64, title, visibility string) map[string]any {
	t.Helper()
	return e.call(t, token, http.MethodPost, "/projects/"+store.IDString(project)+"/snippets", snippetBody(title, visibility)).
		status(t, http.StatusCreated).obj(t)
}

// contentStored says whether the content bucket still holds a snippet's
// content (the rows a deletion must remove).
func (e *env) contentStored(t *testing.T, id int64) bool {
	t.Helper()
	found := false
	err := e.db.View(context.Background(), func(tx *store.Tx) error {
		found = store.Keys("snippets.content").Has(tx, store.Key(uint64(id)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

const (
	notFoundProject = `{"message":"404 Project Not Found"}`
	notFoundSnippet = `{"message":"404 Snippet Not Found"}`
	forbidden       = `{"message":"403 Forbidden"}`
	unauthorized    = `{"message":"401 Unauthorized"}`
)

// callRaw sends a JSON body exactly as given (bytes a JSON encoder would
// not produce: invalid UTF-8).
func (e *env) callRaw(t *testing.T, token, method, path, body string) resp {
	t.Helper()
	hdr := []string{"Content-Type", "application/json"}
	if token != "" {
		hdr = append(hdr, "PRIVATE-TOKEN", token)
	}
	res, raw := e.JSON(t, method, "/api/v4"+path, strings.NewReader(body), nil, hdr...)
	return resp{Status: res.StatusCode, Body: strings.TrimSuffix(string(raw), "\n"), Header: res.Header, what: method + " " + path}
}

// publish commits events as their module would, then waits for their
// delivery (a redelivery, when the event was published before).
func (e *env) publish(t *testing.T, evs ...events.Event) {
	t.Helper()
	err := e.db.Update(context.Background(), func(tx *store.Tx) error {
		for _, ev := range evs {
			if err := e.bus.Publish(tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
}

// pending is the number of undelivered events (a subscriber that fails
// keeps its event waiting for a retry).
func (e *env) pending(t *testing.T) int {
	t.Helper()
	n, err := e.bus.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
