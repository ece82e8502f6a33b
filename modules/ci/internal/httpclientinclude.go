package internal

// The outbound HTTP of `include: remote`: the one place CI fetches a URL a
// CI file names, every connection through the guard (core/netguard), so a
// CI file cannot make the server reach its own network unless the
// administrator allowed it (allow_local_requests).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/fennec-forge/fennec/core/netguard"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// remoteIncludeTimeout bounds one fetch, connection to last byte: a
// pipeline's creation waits for it.
const remoteIncludeTimeout = 10 * time.Second

// remoteFetcher fetches remote includes.
type remoteFetcher struct{ client *http.Client }

func newRemoteFetcher(guard *netguard.Guard, timeout time.Duration) *remoteFetcher {
	t := guard.Transport()
	t.ResponseHeaderTimeout = timeout
	return &remoteFetcher{client: &http.Client{
		Transport: t,
		Timeout:   timeout,
		// Each hop is dialed through the guard; a hop to plain http is
		// refused as the first URL would be.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "https" {
				return errors.New("redirected to a URL that is not https")
			}
			return nil
		},
	}}
}

// fetch GETs url and returns its body, at most limit+1 bytes of it (the
// parser refuses more without this reading it). A failure the CI file's
// author should read is a *pipeline.RemoteError in GitLab's words.
func (f *remoteFetcher) fetch(ctx context.Context, url string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &pipeline.RemoteError{Because: "HTTP error"}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, remoteFailure(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, &pipeline.RemoteError{Because: fmt.Sprintf("HTTP code `%d` error", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, remoteFailure(ctx, err)
	}
	return body, nil
}

// remoteFailure words a failed fetch as GitLab does; the creation's own
// end (ctx) is not the file's fault and stays an error.
func remoteFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var blocked *netguard.BlockedError
	if errors.As(err, &blocked) {
		return &pipeline.RemoteError{Because: blocked.Reason, Blocked: true}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &pipeline.RemoteError{Because: "a timeout error"}
	}
	var oe *net.OpError
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &de) {
		return &pipeline.RemoteError{Because: "a socket error"}
	}
	return &pipeline.RemoteError{Because: "HTTP error"}
}

// SetRemoteIncludeRootCAs makes remote includes trust roots instead of
// the system's certificate authorities. For tests, which serve includes
// from a local TLS server; call it before the app starts.
func (s *Service) SetRemoteIncludeRootCAs(roots *x509.CertPool) {
	if s.remote == nil {
		return
	}
	t := s.remote.client.Transport.(*http.Transport)
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}
