package internal

// Sending: the deliveries queue (core/workqueue, keyed by hook) sends each
// hook's deliveries in queue order, one worker per hook with queued
// deliveries; a delivery that fails with a connection error or a 5xx is
// tried again after a doubling wait, and the ones behind it wait too, so a
// receiver sees its events in the order they happened. Every attempt is
// recorded in the delivery log in the transaction that moves the queue,
// so a restart resumes where the last recorded attempt left off: nothing
// is lost, and nothing is sent twice unless the process died between a
// send and its record (then that one delivery is repeated once, as the
// next attempt).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/netguard"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxResponseBody caps the response body kept in the delivery log.
const maxResponseBody = 16 << 10

const redacted = "[REDACTED]"

// The outcomes of an attempt.
const (
	outcomeDelivered = "delivered"
	outcomeRetrying  = "retrying"
	outcomeFailed    = "failed"
	outcomeRefused   = "refused"
)

// errHookGone: the delivery's hook was deleted; its queue is dropped.
var errHookGone = errors.New("webhooks: hook gone")

// target is where and how a delivery is sent, read when it is sent (an
// edited URL or token applies to what is still queued).
type target struct {
	URL       string
	Token     string
	VerifySSL bool
}

// Deliveries is the queue of deliveries: a Runner (its Run sends them).
func (s *Service) Deliveries() *workqueue.Queue { return s.queue }

// errRetry is the failure of an attempt to be retried; its text is the
// attempt's error.
type errRetry struct{ e *LogEntry }

func (r errRetry) Error() string { return "webhooks: " + r.e.Error }

// deliver is the queue's handler: it sends one delivery and records the
// attempt in the delivery log with the queue's move (removal when it was
// delivered, refused or given up; else its next try, after the policy's
// wait). An attempt under way when the application stops is finished and
// recorded: the send does not see the stop.
func (s *Service) deliver(ctx context.Context, job *workqueue.Job) error {
	ctx = context.WithoutCancel(ctx)
	var d Delivery
	if err := json.Unmarshal(job.Payload, &d); err != nil {
		return workqueue.Permanent(fmt.Errorf("webhooks: a queued delivery does not decode: %w", err))
	}
	t, err := s.target(ctx, d.System, d.ProjectID, d.HookID)
	if errors.Is(err, errHookGone) {
		job.Record(func(tx *store.Tx) error { return s.drop(tx, job.Key) })
		return nil
	}
	if err != nil {
		s.log.Error("webhooks: reading a delivery's hook", zap.String("hook", d.Hook), zap.Error(err))
		return err
	}
	e := s.send(ctx, t, d.Event, d.Body)
	e.Hook, e.HookID, e.System, e.ProjectID, e.Trigger = d.Hook, d.HookID, d.System, d.ProjectID, d.Trigger
	e.Attempt = job.Attempts
	if e.Outcome == outcomeRetrying && job.Last {
		e.Outcome = outcomeFailed
	}
	if e.Outcome == outcomeFailed || e.Outcome == outcomeRefused {
		s.log.Warn("webhooks: delivery given up", zap.String("hook", d.Hook), zap.String("trigger", d.Trigger),
			zap.Int("attempt", e.Attempt), zap.Int("status", e.ResponseStatus), zap.String("error", e.Error))
	}
	job.Record(func(tx *store.Tx) error { return logAttempt(tx, e) })
	if e.Outcome == outcomeRetrying {
		return errRetry{e}
	}
	return nil
}

// backoff is the wait after the n-th failed attempt: RetryBackoff doubled
// n-1 times, at most MaxBackoff, with the house's jitter (hooks to one
// receiver that failed together do not all retry together).
func (s *Service) backoff(n int) time.Duration {
	return s.retry().Delay(n)
}

// retry is the delivery retry policy of the configuration.
func (s *Service) retry() backoff.Policy {
	return backoff.Policy{Initial: s.cfg.RetryBackoff, Max: s.cfg.MaxBackoff, Jitter: backoff.DefaultJitter}
}

// target reads the hook's URL, token and TLS switch; errHookGone when the
// hook no longer exists.
func (s *Service) target(ctx context.Context, system bool, projectID, hookID int64) (target, error) {
	if system {
		var h *SystemHook
		err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			h, err = systemHooks.Get(tx, hookID)
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return target{}, errHookGone
		}
		if err != nil {
			return target{}, err
		}
		return target{URL: h.URL, Token: s.open(h.Token, purposeSystemHookToken), VerifySSL: h.EnableSSLVerification}, nil
	}
	h, err := s.hooks.ProjectHook(ctx, projectID, hookID)
	if errors.Is(err, projects.ErrHookNotFound) {
		return target{}, errHookGone
	}
	if err != nil {
		return target{}, err
	}
	return target{URL: h.URL, Token: s.open(h.Token, projects.HookTokenPurpose), VerifySSL: h.EnableSSLVerification}, nil
}

// open unseals a hook token; a token that does not open (a damaged store,
// another key) is sent as nothing rather than stop the hook.
func (s *Service) open(token, purpose string) string {
	if token == "" {
		return ""
	}
	plain, err := s.box.Unseal(token, purpose)
	if err != nil {
		s.log.Error("webhooks: a hook token does not open; sending without it", zap.Error(err))
		return ""
	}
	return plain
}

// send makes one POST and describes it as a log entry (without the hook's
// identity, which the caller fills in). Credentials in the URL become
// basic auth and are removed from it; the token and the credentials are
// redacted in the logged headers.
func (s *Service) send(ctx context.Context, t target, event string, body []byte) *LogEntry {
	start := s.now()
	e := &LogEntry{Event: event, RequestBody: json.RawMessage(body), CreatedAt: start.UTC(),
		RequestHeaders: map[string]string{"Content-Type": "application/json", "X-Gitlab-Event": event}}
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.URL, e.Error, e.Outcome = t.URL, "Invalid url given", outcomeFailed
		return e
	}
	user, pass, basic := "", "", u.User != nil
	if basic {
		user = u.User.Username()
		pass, _ = u.User.Password()
		u.User = nil
	}
	e.URL = u.String()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	headers := map[string]string{"Content-Type": "application/json", "X-Gitlab-Event": event}
	if t.Token != "" {
		headers["X-Gitlab-Token"] = t.Token
		e.RequestHeaders["X-Gitlab-Token"] = redacted
	}
	if basic {
		e.RequestHeaders["Authorization"] = redacted
	}
	ans, built, err := s.clients.post(ctx, hookRequest{URL: e.URL, Headers: headers, Basic: basic, User: user, Pass: pass, Body: body, VerifySSL: t.VerifySSL}, maxResponseBody)
	if !built {
		e.Error, e.Outcome = err.Error(), outcomeFailed
		return e
	}
	e.Duration = s.now().Sub(start)
	if err != nil {
		var blocked *netguard.BlockedError
		if errors.As(err, &blocked) {
			e.Error, e.Outcome = blocked.Reason, outcomeRefused
			return e
		}
		e.Error, e.Outcome = describe(err), outcomeRetrying
		s.log.Info("webhooks: delivery failed", zap.String("host", u.Host), zap.String("event", event), zap.Error(err))
		return e
	}
	e.Duration = s.now().Sub(start)
	e.ResponseStatus = ans.Status
	e.ResponseBody = strings.ToValidUTF8(string(ans.Body), "\uFFFD")
	e.ResponseHeaders = ans.Headers
	e.Outcome = outcomeDelivered
	if ans.Status >= 500 {
		e.Outcome = outcomeRetrying
		e.Error = fmt.Sprintf("the receiver answered %d", ans.Status)
	}
	return e
}

// describe says why a request got no answer as "could not connect" and
// the class of the reason, nothing more: the delivery log and a test's
// answer are shown to the project's Masters, and the transport's own error
// names what they have no business knowing (the address of the host's DNS
// resolver, the addresses a name resolved to). The whole error goes to the
// server's log.
func describe(err error) string {
	return "could not connect: " + reasonClass(err)
}

func reasonClass(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var alertErr tls.AlertError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return "DNS lookup failed"
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return "TLS error (invalid certificate)"
	case errors.As(err, &recordErr), errors.As(err, &alertErr),
		// crypto/tls makes most of its handshake errors with errors.New
		// ("tls: ..."); net/http says so of a plain-HTTP answer to https.
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return "TLS error"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return "connection error"
}
