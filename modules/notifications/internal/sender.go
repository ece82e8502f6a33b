package internal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	mail "github.com/wneessen/go-mail"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
)

// sendBatch is how many deliveries one round reads from the queue.
const sendBatch = 200

// sendLoop delivers the queue: at start (what a crash or a stop left),
// whenever a commit queues mail (Kick), and when a retry falls due. While
// the SMTP server cannot be reached, the wait doubles from retry_initial to
// retry_max; the queue stays in the store meanwhile.
func (s *Service) sendLoop(ctx context.Context) {
	failures := 0 // sends in a row that failed
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		fired := false
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			fired = true
		case <-s.kick:
		}
		s.expand(ctx)
		if !fired && failures > 0 {
			continue // the server is down: the timer retries the sending
		}
		wait, err := s.sendDue(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			wait = s.retry().Delay(failures)
			s.log.Warn("notifications: mail delivery failed; will retry", zap.Duration("in", wait), zap.Error(err))
		} else {
			failures = 0
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// due is a delivery with its mail, read from the queue.
type due struct {
	d *Delivery
	m *Mail
}

// sendDue sends every delivery that is due, batch after batch; it returns
// how long until the next retry of one that is not (an hour when none).
// An error means the transport failed (the server is down): the caller
// backs off.
func (s *Service) sendDue(ctx context.Context) (time.Duration, error) {
	var after int64
	wait := time.Hour
	for {
		var batch []due
		now := s.now()
		err := s.db.View(ctx, func(tx *store.Tx) error {
			batch = batch[:0]
			cache := map[int64]*Mail{}
			return deliveries.Scan(tx, false, 0, func(d *Delivery) (bool, error) {
				if d.NextTry.After(now) {
					wait = min(wait, d.NextTry.Sub(now))
					return true, nil
				}
				if d.ID <= after {
					// Handled earlier in this round and still queued: a
					// temporary refusal whose retry time has already
					// passed (a slow round). Go round again at once;
					// without this it waited for the next kick, or an hour.
					wait = 0
					return true, nil
				}
				m, ok := cache[d.MailID]
				if !ok {
					var err error
					if m, err = mails.Get(tx, d.MailID); err != nil {
						return false, err
					}
					cache[d.MailID] = m
				}
				batch = append(batch, due{d: d, m: m})
				return len(batch) < sendBatch, nil
			})
		})
		if err != nil || len(batch) == 0 {
			return wait, err
		}
		after = batch[len(batch)-1].d.ID
		if err := s.deliver(ctx, batch); err != nil {
			return wait, err
		}
	}
}

// deliver hands a batch to the transport, one SMTP connection for all,
// and marks each delivery done in the store as soon as the server has
// accepted it. The marks run concurrently so the store's group commit
// writes many in one fsync, and all are awaited before returning.
func (s *Service) deliver(ctx context.Context, batch []due) error {
	var marks sync.WaitGroup
	var markErr error
	var mu sync.Mutex
	mark := func(d *Delivery) {
		marks.Add(1)
		go func() {
			defer marks.Done()
			if err := s.markSent(d); err != nil {
				mu.Lock()
				markErr = err
				mu.Unlock()
			}
		}()
	}
	defer marks.Wait()
	if s.cfg.SMTPAddress == "" {
		for _, b := range batch {
			if err := s.writeFile(b); err != nil {
				return err
			}
			mark(b.d)
		}
		marks.Wait()
		return markErr
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
	for _, b := range batch {
		msg, err := s.message(b)
		if err != nil {
			// A mail that cannot be built never will be: drop it.
			s.log.Error("notifications: dropping a mail that cannot be built", zap.Int64("delivery", b.d.ID), zap.Error(err))
			mark(b.d)
			continue
		}
		err = client.Send(msg)
		if msg.IsDelivered() {
			// The server accepted the data; an error after that (the
			// RSET that follows) must not make it send the mail again.
			mark(b.d)
			if err != nil {
				return err
			}
			continue
		}
		// The server's reply decides: 5xx for this mail or recipient is
		// final (dropped, logged), 4xx is "later" (this delivery waits,
		// the others go on). No reply at all (the connection failed), or
		// a refusal of the sender itself (the configuration is wrong for
		// every mail): back off and retry everything.
		var se *mail.SendError
		code := 0
		if errors.As(err, &se) && se.Reason != mail.ErrSMTPMailFrom && se.Reason != mail.ErrConnCheck {
			code = se.ErrorCode()
		}
		switch {
		case code >= 500 && code < 600:
			s.log.Warn("notifications: the SMTP server refused a mail for good; dropped",
				zap.String("to", b.d.To), zap.Error(err))
			mark(b.d)
			continue
		case code >= 400 && code < 500:
			if err := s.postpone(b.d, err); err != nil {
				return err
			}
			continue
		}
		return err // the connection is gone: back off, retry the rest
	}
	marks.Wait()
	return markErr
}

// markSent records a delivery as done (deleting it, and its mail with the
// last one).
func (s *Service) markSent(d *Delivery) error {
	return s.db.Update(context.Background(), func(tx *store.Tx) error {
		if !deliveries.Exists(tx, d.ID) {
			return nil
		}
		if err := deliveries.Delete(tx, d.ID); err != nil {
			return err
		}
		m, err := mails.Get(tx, d.MailID)
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
	})
}

// postpone schedules a temporarily refused delivery for later.
func (s *Service) postpone(d *Delivery, cause error) error {
	return s.db.Update(context.Background(), func(tx *store.Tx) error {
		row, err := deliveries.Get(tx, d.ID)
		if err != nil {
			return err
		}
		row.Attempts++
		row.NextTry = s.now().Add(s.retry().Delay(row.Attempts))
		row.LastError = cause.Error()
		return deliveries.Update(tx, row)
	})
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

// writeFile puts a delivery into the file outbox as <id>.eml, through a
// temporary file and a rename, so a reader never sees half a mail and a
// retry after a crash rewrites the same file instead of adding one.
func (s *Service) writeFile(b due) error {
	msg, err := s.message(b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.outbox, 0o750); err != nil {
		return err
	}
	name := filepath.Join(s.outbox, fmt.Sprintf("%012d.eml", b.d.ID))
	tmp, err := os.CreateTemp(s.outbox, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := msg.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
