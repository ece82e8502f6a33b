package internal

// The deliveries' outbound HTTP: the one place the delivery speaks HTTP,
// beside the adapter's files, so sending and logging (deliver.go) stay
// transport-neutral. Every connection is dialed through the guard.

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/netguard"
)

// hookClients holds two clients: with and without certificate
// verification (enable_ssl_verification), both through the guard's dialer.
type hookClients struct{ verified, unverified *http.Client }

func newHookClients(guard *netguard.Guard, timeout time.Duration) *hookClients {
	return &hookClients{verified: newClient(guard, timeout, true), unverified: newClient(guard, timeout, false)}
}

func newClient(guard *netguard.Guard, timeout time.Duration, verify bool) *http.Client {
	t := guard.Transport()
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: !verify} //nolint:gosec // the hook's enable_ssl_verification says so
	t.ResponseHeaderTimeout = timeout
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		// GitLab followed redirects; each hop is dialed through the guard.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// hookAnswer is what a receiver answered: its status, flattened headers
// and up to limit bytes of its body.
type hookAnswer struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// hookRequest is one POST: its URL (without credentials), headers, and
// basic auth when the hook's URL carried credentials.
type hookRequest struct {
	URL        string
	Headers    map[string]string
	Basic      bool
	User, Pass string
	Body       []byte
	VerifySSL  bool
}

// post sends r and reads at most limit bytes of the answer's body. A
// request that cannot be built is reported through built=false.
func (c *hookClients) post(ctx context.Context, r hookRequest, limit int64) (ans hookAnswer, built bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return hookAnswer{}, false, err
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	if r.Basic {
		req.SetBasicAuth(r.User, r.Pass)
	}
	client := c.verified
	if !r.VerifySSL {
		client = c.unverified
	}
	resp, err := client.Do(req)
	if err != nil {
		return hookAnswer{}, true, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	return hookAnswer{Status: resp.StatusCode, Headers: flatten(resp.Header), Body: raw}, true, nil
}

func flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = strings.Join(h[k], ", ")
	}
	return out
}
