package fennectest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Reply is a raw answer of Call: what a test asserts exactly (status,
// headers, body) where a client library would hide it.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// Call sends method path (which starts with /, as /api/v4/...) as token
// ("" for anonymous), with body: nil for none, a string as a form, []byte as JSON, anything else
// marshalled to JSON.
func (s *Server) Call(t testing.TB, token, method, path string, body any) Reply {
	t.Helper()
	var r io.Reader
	headers := []string{}
	if body != nil {
		switch b := body.(type) {
		case string:
			r = strings.NewReader(b)
			headers = append(headers, "Content-Type", "application/x-www-form-urlencoded")
		case []byte:
			r = bytes.NewReader(b)
			headers = append(headers, "Content-Type", "application/json")
		default:
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatalf("fennectest: encode the body of %s %s: %v", method, path, err)
			}
			r = bytes.NewReader(raw)
			headers = append(headers, "Content-Type", "application/json")
		}
	}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp, raw := s.JSON(t, method, path, r, nil, headers...)
	return Reply{resp.StatusCode, resp.Header, raw}
}

// Expect fails the test unless the answer has status and, when body is
// not "", exactly that body (surrounding space aside).
func (r Reply) Expect(t testing.TB, status int, body string) Reply {
	t.Helper()
	if r.Status != status || (body != "" && strings.TrimSpace(string(r.Body)) != body) {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, body)
	}
	return r
}

// Object is the body as a JSON object; numbers stay json.Number, so an id
// is compared exactly.
func (r Reply) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

// List is the body as a JSON array of objects.
func (r Reply) List(t testing.TB) []map[string]any {
	t.Helper()
	var m []map[string]any
	r.decode(t, &m)
	return m
}

// IIDs are the iid fields of a list answer, in order.
func (r Reply) IIDs(t testing.TB) []int64 {
	t.Helper()
	out := []int64{}
	for _, m := range r.List(t) {
		n, err := m["iid"].(json.Number).Int64()
		if err != nil {
			t.Fatalf("fennectest: iid of %v: %v", m, err)
		}
		out = append(out, n)
	}
	return out
}

func (r Reply) decode(t testing.TB, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(r.Body))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("fennectest: decode %s: %v", r.Body, err)
	}
}

// Names are the name fields of a list answer (labels, branches, award
// emoji), in order.
func (r Reply) Names(t testing.TB) []string {
	t.Helper()
	out := []string{}
	for _, m := range r.List(t) {
		s, ok := m["name"].(string)
		if !ok {
			t.Fatalf("fennectest: name of %v is no string", m)
		}
		out = append(out, s)
	}
	return out
}
