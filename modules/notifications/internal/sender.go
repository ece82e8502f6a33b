package internal

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
)

// mailQueue is the core work queue of the deliveries: one job per mail
// and recipient, keyed by the recipient (mailKey), so one address gets its
// mails in the order they were queued while different addresses are sent
// to concurrently.
const mailQueue = "notifications.mail"

// queuedMail is a job's payload: which mail goes to whom.
type queuedMail struct {
	MailID int64  `json:"mail_id"`
	UserID int64  `json:"user_id,omitempty"`
	To     string `json:"to"`
}

// mailKey is the queue key of a recipient: the address (lower case, as
// mail servers compare domains and most compare local parts), or the
// user when there is none.
func mailKey(to string, user int64) string {
	if to == "" {
		return "user:" + store.IDString(user)
	}
	return strings.ToLower(to)
}

// mailConnections bounds the SMTP connections open at once: each mail is
// one connection, and a notice to many watchers must not open one per
// watcher together (servers limit connections per client).
const mailConnections = 4

// newQueue builds the mail queue: retried after retry_initial doubling to
// retry_max for as long as it takes (mail has never been given up on
// while the server is unreachable), sent by send, mailConnections at once.
func (s *Service) newQueue() *workqueue.Queue {
	return workqueue.New(s.db, mailQueue, s.retry(), s.send,
		workqueue.WithMaxAttempts(math.MaxInt), workqueue.WithLogger(s.log), workqueue.WithConcurrency(mailConnections),
		workqueue.WithClock(func() time.Time { return s.now() }), workqueue.WithLease(mailLease))
}

// mailLease is how long a mail being sent is its sender's unless renewed:
// when a node dies with mail in hand (several nodes on one store) another
// sends it once the lease ends. Mail is queued by address, so the lease is
// also how long a dead node holds up that address's later mail. The queue
// renews the lease of a send in progress, so it need not cover a slow
// server's longest exchange.
const mailLease = 15 * time.Second

// expandLoop turns pending notices into queued mail: at start (what a
// crash or a stop left), whenever a commit stores a notice (Kick), and,
// while notices are left over from a failed pass, after the retry policy's
// delay.
func (s *Service) expandLoop(ctx context.Context) {
	failures := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.kick:
		}
		s.expand(ctx)
		left := false
		_ = s.db.View(ctx, func(tx *store.Tx) error {
			return notices.Scan(tx, false, 0, func(*PendingNotice) (bool, error) {
				left = true
				return false, nil
			})
		})
		if ctx.Err() != nil {
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if left {
			failures++
			timer.Reset(s.retry().Delay(failures))
		} else {
			failures = 0
		}
	}
}

// due is a delivery with its mail.
type due struct {
	d *Delivery
	m *Mail
}

// send is the mail queue's handler: it hands one delivery to the SMTP
// server (or the file outbox). Accepted, or refused for good (5xx, a mail
// that cannot be built), the job is done and the mail's count of pending
// deliveries goes down in the same commit. Refused for now (4xx), or the
// server unreachable: an error, and the queue tries again after the retry
// policy's delay, holding back the recipient's later mails meanwhile.
func (s *Service) send(ctx context.Context, job *workqueue.Job) error {
	var q queuedMail
	if err := json.Unmarshal(job.Payload, &q); err != nil {
		return workqueue.Permanent(fmt.Errorf("notifications: a queued mail does not decode: %w", err))
	}
	var m *Mail
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		m, err = mails.Get(tx, q.MailID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // nothing left to send
	}
	if err != nil {
		return err
	}
	b := due{d: &Delivery{ID: job.ID, MailID: q.MailID, UserID: q.UserID, To: q.To, Attempts: job.Attempts}, m: m}
	if err := s.deliver(ctx, b); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("notifications: mail delivery failed; will retry", zap.String("to", q.To),
				zap.Duration("in", s.retry().Delay(job.Attempts)), zap.Error(err))
		}
		return err
	}
	job.Record(func(tx *store.Tx) error { return mailDone(tx, q.MailID) })
	return nil
}

// deliver hands one delivery to the transport. nil means done: accepted,
// or dropped because it never will be.
func (s *Service) deliver(ctx context.Context, b due) error {
	if s.cfg.SMTPAddress == "" {
		return s.writeFile(ctx, b)
	}
	msg, err := s.message(b)
	if err != nil {
		// A mail that cannot be built never will be: drop it.
		s.log.Error("notifications: dropping a mail that cannot be built", zap.Int64("delivery", b.d.ID), zap.Error(err))
		return nil
	}
	client, err := s.client()
	if err != nil {
		return err
	}
	dialCtx, cancel := context.WithTimeout(ctx, s.cfg.SMTPTimeout)
	err = client.DialWithContext(dialCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("connect to %s: %w", s.cfg.SMTPAddress, err)
	}
	defer client.Close()
	err = client.Send(msg)
	if msg.IsDelivered() {
		// The server accepted the data; an error after that (the RSET
		// that follows) must not make it send the mail again.
		return nil
	}
	// The server's reply decides: 5xx for this mail or recipient is final
	// (dropped, logged); 4xx is "later", as is no reply at all (the
	// connection failed) or a refusal of the sender itself (the
	// configuration is wrong for every mail): retried.
	var se *mail.SendError
	if errors.As(err, &se) && se.Reason != mail.ErrSMTPMailFrom && se.Reason != mail.ErrConnCheck {
		if code := se.ErrorCode(); code >= 500 && code < 600 {
			s.log.Warn("notifications: the SMTP server refused a mail for good; dropped",
				zap.String("to", b.d.To), zap.Error(err))
			return nil
		}
	}
	return err
}

// mailDone counts one delivery of a mail as done, deleting the mail with
// its last one.
func mailDone(tx *store.Tx, id int64) error {
	m, err := mails.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.Pending--; m.Pending <= 0 {
		return mails.Delete(tx, m.ID)
	}
	return mails.Update(tx, m)
}

// retry is the mail retry policy of the configuration: retry_initial
// doubling to retry_max, with the house's jitter.
func (s *Service) retry() backoff.Policy {
	return backoff.Policy{Initial: s.cfg.RetryInitial, Max: s.cfg.RetryMax, Jitter: backoff.DefaultJitter}
}

func (s *Service) from() string {
	if s.cfg.SMTPFrom != "" {
		return s.cfg.SMTPFrom
	}
	return "fennec@" + s.host()
}

// message builds the MIME message of a delivery: a plain-text part and an
// HTML alternative, threading headers, the X-GitLab-* headers.
func (s *Service) message(b due) (*mail.Msg, error) {
	m := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := m.From(s.from()); err != nil {
		return nil, err
	}
	if err := m.To(b.d.To); err != nil {
		return nil, err
	}
	if s.cfg.SMTPReplyTo != "" {
		if err := m.ReplyTo(s.cfg.SMTPReplyTo); err != nil {
			return nil, err
		}
	}
	m.Subject(b.m.Subject)
	m.SetMessageIDWithValue(b.m.MessageID)
	if b.m.InReplyTo != "" {
		m.SetGenHeader(mail.HeaderInReplyTo, "<"+b.m.InReplyTo+">")
		m.SetGenHeader(mail.HeaderReferences, "<"+b.m.InReplyTo+">")
	}
	m.SetDateWithValue(b.m.CreatedAt)
	for k, v := range b.m.Headers {
		m.SetGenHeader(mail.Header(k), v)
	}
	m.SetBodyString(mail.TypeTextPlain, b.m.Text)
	m.AddAlternativeString(mail.TypeTextHTML, b.m.HTML)
	return m, nil
}

// client is an SMTP client for the configured server.
func (s *Service) client() (*mail.Client, error) {
	host, portText, err := net.SplitHostPort(s.cfg.SMTPAddress)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, err
	}
	opts := []mail.Option{mail.WithPort(port), mail.WithTimeout(s.cfg.SMTPTimeout), mail.WithHELO(s.host())}
	tlsConfig := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if s.cfg.SMTPCAFile != "" {
		pem, err := os.ReadFile(s.cfg.SMTPCAFile)
		if err != nil {
			return nil, fmt.Errorf("smtp_ca_file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("smtp_ca_file %s holds no PEM certificate", s.cfg.SMTPCAFile)
		}
		tlsConfig.RootCAs = pool
	}
	switch s.cfg.SMTPTLS {
	case "tls":
		opts = append(opts, mail.WithSSL(), mail.WithTLSConfig(tlsConfig))
	case "starttls":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory), mail.WithTLSConfig(tlsConfig))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if s.cfg.SMTPUser != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(s.cfg.SMTPUser),
			mail.WithPassword(s.cfg.SMTPPassword))
	}
	return mail.NewClient(host, opts...)
}

// outboxPrefix is where the file outbox's blobs are kept.
const outboxPrefix = "mail/outbox"

// writeFile puts a delivery into the file outbox as <id>.eml, one Put, so
// a reader never sees half a mail and a retry after a crash rewrites the
// same blob instead of adding one.
func (s *Service) writeFile(ctx context.Context, b due) error {
	msg, err := s.message(b)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		return err
	}
	_, err = s.blobs.Put(ctx, fmt.Sprintf("%s/%012d.eml", outboxPrefix, b.d.ID), &buf)
	return err
}
