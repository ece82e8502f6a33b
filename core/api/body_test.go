package api_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
)

// bodyModule has operations that read (or ignore) a body, signed-in or not.
func bodyModule() fennec.Module {
	return fennec.NewModule("bodies", fennec.ProvideRoutes(func(fennec.None) fennec.Routes {
		return fennec.Routes{Name: "bodies", Register: func(a *api.API) {
			api.Register(a, api.Op{ID: "body-signed-in", Method: http.MethodPost, Path: "/body-signed-in", Access: api.SignedIn, Status: http.StatusOK},
				func(ctx context.Context, _ *whoamiPostInput) (*whoamiOutput, error) { return whoami(ctx), nil })
			api.Register(a, api.Op{ID: "body-get", Method: http.MethodGet, Path: "/body-get", Access: api.Public},
				func(ctx context.Context, _ *struct{}) (*whoamiOutput, error) { return whoami(ctx), nil })
		}}
	}))
}

func startBodies(t *testing.T, opts ...fennectest.Option) *fennectest.Server {
	t.Helper()
	return start(t, append([]fennectest.Option{fennectest.WithModules(bodyModule())}, opts...)...)
}

// trickle sends head, then the body one byte every 50 ms from a goroutine
// (until the server closes the connection or 20 s pass), and returns what
// the server answered until it closed the connection, or an error after
// within.
func trickle(t *testing.T, s *fennectest.Server, head, body string, within time.Duration) (string, error) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(within))
	raw, err := io.ReadAll(conn) // until the server closes the connection
	if errors.Is(err, syscall.ECONNRESET) {
		// Closed with our bytes still arriving: the kernel resets instead
		// of a clean end, after what the server sent.
		err = nil
	}
	return string(raw), err
}

// TestSlowBodyIsCutOff: a body that trickles in slower than the body
// deadline is answered 408 in GitLab's shape and its connection closed.
// Before the fix the deadline was lifted after the timed-out read and
// net/http then waited for the rest of the body (under 256 KiB) with none:
// the 408 was logged but never sent and the connection held for good.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	s := startBodies(t, fennectest.WithConfig(func(c *config.Config) { c.BodyReadTimeout = 300 * time.Millisecond }))
	body := `{"title":"` + strings.Repeat("x", 1000) + `"}`
	head := fmt.Sprintf("POST /api/v4/samples HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	began := time.Now()
	got, err := trickle(t, s, head, body, 5*time.Second)
	if err != nil {
		t.Fatalf("no answer and no close within 5 s (%v); got %q", err, got)
	}
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.HasSuffix(strings.TrimSpace(got), `{"message":"408 Request Timeout"}`) ||
		!strings.Contains(got, "Connection: close") {
		t.Fatalf("answer %q, want a 408 with GitLab's body and Connection: close", got)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the 408 took %v", took)
	}

	// A body the operation never reads (a GET with a body): net/http reads
	// it after the handler, under the same deadline.
	head = fmt.Sprintf("GET /api/v4/body-get HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
	got, err = trickle(t, s, head, body, 5*time.Second)
	if err != nil || !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.Contains(got, "Connection: close") {
		t.Fatalf("GET with a slow body: %q %v, want a 200 and a closed connection", got, err)
	}

	// An unmatched route with a slow body is not held either.
	head = fmt.Sprintf("POST /api/v4/nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
	got, err = trickle(t, s, head, body, 5*time.Second)
	if err != nil || !strings.HasPrefix(got, "HTTP/1.1 404 ") {
		t.Fatalf("unmatched route with a slow body: %q %v", got, err)
	}
}

// TestBodyInTimeKeepsConnection: a body that arrives in time is served,
// and the connection stays usable (the deadline is lifted at the body's end,
// so it does not fire later while the handler or the next request runs).
func TestBodyInTimeKeepsConnection(t *testing.T) {
	t.Parallel()
	s := startBodies(t, fennectest.WithConfig(func(c *config.Config) { c.BodyReadTimeout = 300 * time.Millisecond }))
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	body := `{"title":"kept"}`
	for i := 0; i < 3; i++ {
		fmt.Fprintf(conn, "POST /api/v4/samples HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || !strings.Contains(string(raw), `"title":"kept"`) || resp.Close {
			t.Fatalf("request %d: %d close=%v %s", i, resp.StatusCode, resp.Close, raw)
		}
		time.Sleep(400 * time.Millisecond) // past the body deadline
	}
}

// zeros is an endless reader of 'a' bytes that allocates nothing.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestAnonymousBodiesAreNotRead: an operation that needs a caller answers
// 401 to an anonymous request, and to one with a bad token, without reading
// a large body. Before the fix every body was read in full first: 50
// parallel 9.9 MB anonymous POSTs allocated about 1 GB here.
func TestAnonymousBodiesAreNotRead(t *testing.T) {
	s := startBodies(t)
	const size = 9_900_000
	post := func(headers ...string) (int, error) {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v4/body-signed-in",
			io.LimitReader(zeros{}, size))
		if err != nil {
			return 0, err
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", formType)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, headers := range [][]string{nil, {"PRIVATE-TOKEN", "not-a-token"}} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, err := post(headers...)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					codes[-1]++ // the server may close before the client is done sending
					return
				}
				codes[code]++
			}()
		}
		wg.Wait()
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("credentials %v: 50 x 9.9 MB POSTs allocated %.1f MB; answers %v", headers, float64(allocated)/1e6, codes)
		// How many clients see their connection cut before they read the
		// 401 depends on scheduling (more on a loaded machine); what must
		// hold is that nothing else is answered, and the allocation below.
		if codes[http.StatusUnauthorized] < 25 || len(codes) > 2 || (len(codes) == 2 && codes[-1] == 0) {
			t.Errorf("answers %v, want 401s (a few cut connections allowed)", codes)
		}
		if allocated > 100<<20 {
			t.Errorf("50 refused POSTs allocated %d MB, want under 100 MB", allocated>>20)
		}
	}
}

// TestBodyCredentialsStillWork: private_token in the body still signs in,
// when the body is small, and when a large body starts with it. A large body
// with its token past the first 64 KiB is refused unread: the price of not
// reading anonymous bodies.
func TestBodyCredentialsStillWork(t *testing.T) {
	t.Parallel()
	s := startBodies(t)
	u := s.CreateUser(t, "")
	big := strings.Repeat("x", 200<<10)
	for _, c := range []struct {
		what, ctype, body string
		status            int
	}{
		{"small form", formType, form("private_token", u.Token, "note", "hello"), 200},
		{"small json", jsonType, `{"note":"hello","private_token":"` + u.Token + `"}`, 200},
		{"large form, token first", formType, form("private_token", u.Token, "note", big), 200},
		{"large json, token first", jsonType, `{"private_token":"` + u.Token + `","note":"` + big + `"}`, 200},
		{"large json, token after a long value", jsonType, `{"note":"` + big + `","private_token":"` + u.Token + `"}`, 401},
		{"large form, no token", formType, form("note", big), 401},
		{"large form, bad token first", formType, form("private_token", "nope", "note", big), 401},
	} {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/body-signed-in", strings.NewReader(c.body), "Content-Type", c.ctype)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.what, resp.StatusCode, raw, c.status)
			continue
		}
		if c.status == 200 && !strings.Contains(string(raw), `"username":"`+u.Username+`"`) {
			t.Errorf("%s: %s", c.what, raw)
		}
		if c.status == 401 {
			wantError(t, c.what, resp, raw, 401, `{"message":"401 Unauthorized"}`)
		}
	}
	// Large multipart with the token in the first part.
	buf, ctype := multipartBody(t, "private_token", u.Token, "note", big)
	resp, raw := send(t, s, http.MethodPost, "/api/v4/body-signed-in", buf, "Content-Type", ctype)
	if resp.StatusCode != 200 {
		t.Errorf("large multipart, token first: %d %s", resp.StatusCode, raw)
	}
	// Header credentials decide before the body: a bad header token is 401
	// even with a good one in the body.
	resp, raw = send(t, s, http.MethodPost, "/api/v4/body-signed-in", strings.NewReader(form("private_token", u.Token)),
		"Content-Type", formType, "PRIVATE-TOKEN", "nope")
	wantError(t, "bad header, good body", resp, raw, 401, `{"message":"401 Unauthorized"}`)
}
