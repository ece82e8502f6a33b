package notifications_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/mail"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/notifications"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// received is one mail as the test SMTP server got it.
type received struct {
	From    string
	To      []string
	Header  mail.Header
	Text    string
	HTML    string
	Raw     []byte
	Subject string
}

// mailServer is a real SMTP server (emersion/go-smtp) on 127.0.0.1 that
// keeps what it receives; it can be stopped and started again on the same
// address, to play an outage.
type mailServer struct {
	addr string
	mu   sync.Mutex
	got  []received
	last time.Time // when the last mail was received
	srv  *smtp.Server
	// refuse, when set, answers RCPT with a temporary 451 for matching
	// addresses.
	refuse func(to string) bool
	// reject, when set, answers RCPT with a final 550 for matching
	// addresses.
	reject func(to string) bool
	// tls, when set, is offered with STARTTLS, or wraps every connection
	// when implicit is set.
	tls      *tls.Config
	implicit bool
	// user and password, when set, are required (AUTH PLAIN).
	user, password string
	// dropAfterAccept closes the connection right after accepting that
	// many mails (after the 250 for their data, before the client's next
	// command).
	dropAfterAccept int
}

func newMailServer(t testing.TB, running bool, configure ...func(*mailServer)) *mailServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &mailServer{addr: l.Addr().String()}
	for _, fn := range configure {
		fn(m)
	}
	if running {
		m.serve(t, l)
	} else {
		l.Close()
	}
	t.Cleanup(m.stop)
	return m
}

func (m *mailServer) start(t testing.TB) {
	t.Helper()
	l, err := net.Listen("tcp", m.addr)
	if err != nil {
		t.Fatal(err)
	}
	m.serve(t, l)
}

func (m *mailServer) serve(t testing.TB, l net.Listener) {
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{m: m, conn: c}, nil }))
	srv.Domain = "localhost"
	if m.tls != nil {
		if m.implicit {
			l = tls.NewListener(l, m.tls)
		} else {
			srv.TLSConfig = m.tls
		}
	}
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	m.mu.Lock()
	m.srv = srv
	m.mu.Unlock()
	go srv.Serve(l)
}

func (m *mailServer) stop() {
	m.mu.Lock()
	srv := m.srv
	m.srv = nil
	m.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

type session struct {
	m        *mailServer
	conn     *smtp.Conn
	accepted bool
	from     string
	to       []string
	authed   bool
}

func (s *session) AuthMechanisms() []string {
	if s.m.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != s.m.user || password != s.m.password {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Reset() {
	s.from, s.to = "", nil
	s.m.mu.Lock()
	drop := s.accepted && s.m.dropAfterAccept > 0
	if drop {
		s.m.dropAfterAccept--
	}
	s.m.mu.Unlock()
	s.accepted = false
	if drop {
		s.conn.Conn().Close()
	}
}
func (s *session) Logout() error { return nil }
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.m.user != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.m.mu.Lock()
	refuse, reject := s.m.refuse, s.m.reject
	s.m.mu.Unlock()
	if reject != nil && reject(to) {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	if refuse != nil && refuse(to) {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 2, 0}, Message: "try later"}
	}
	s.to = append(s.to, to)
	return nil
}
func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	got, err := parseMail(raw)
	if err != nil {
		return err
	}
	got.From, got.To = s.from, s.to
	s.m.mu.Lock()
	s.m.got = append(s.m.got, got)
	s.m.last = time.Now()
	s.m.mu.Unlock()
	s.accepted = true
	return nil
}

func parseMail(raw []byte) (received, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return received{}, err
	}
	out := received{Header: msg.Header, Raw: raw}
	out.Subject, _ = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return out, fmt.Errorf("not multipart: %q", msg.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		body, err := io.ReadAll(p) // quoted-printable is decoded by the reader
		if err != nil {
			return out, err
		}
		switch ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); ct {
		case "text/plain":
			out.Text = string(body)
		case "text/html":
			out.HTML = string(body)
		}
	}
	return out, nil
}

// lastAt is when the last mail was received.
func (m *mailServer) lastAt() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// mails returns what was received so far.
func (m *mailServer) mails() []received {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.got)
}

// take waits until the mails with the subject stop arriving (the queue is
// empty) and returns them, forgetting them.
func (e *env) take(t testing.TB, subject string) []received {
	t.Helper()
	e.settle(t)
	e.smtp.mu.Lock()
	defer e.smtp.mu.Unlock()
	var out, rest []received
	for _, g := range e.smtp.got {
		if g.Subject == subject {
			out = append(out, g)
		} else {
			rest = append(rest, g)
		}
	}
	e.smtp.got = rest
	return out
}

// recipients are the sorted envelope recipients of mails.
func recipients(mails []received) []string {
	var out []string
	for _, m := range mails {
		out = append(out, m.To...)
	}
	sort.Strings(out)
	return out
}

type env struct {
	*fennectest.Server
	smtp *mailServer
	bus  *events.Bus
}

func withSMTP(addr string) fennectest.Option {
	return fennectest.WithModuleConfig(notifications.SectionName, func(c *notifications.Config) {
		c.SMTPAddress = addr
		c.RetryInitial, c.RetryMax = 20*time.Millisecond, 200*time.Millisecond
		c.SMTPTimeout = 5 * time.Second
	})
}

func start(t testing.TB, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{smtp: newMailServer(t, true)}
	e.Server = stocktest.Start(t, append([]fennectest.Option{withSMTP(e.smtp.addr), fennectest.WithExtract(&e.bus)}, opts...)...)
	return e
}

// settle waits until every event is handled and the mail queue is empty.
func (e *env) settle(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	deadline, _ := ctx.Deadline() // what is left of the 20 s
	fennectest.Poll(t, time.Until(deadline), func() (bool, string) {
		n := e.rows(t, mailQueueOrder, "notifications.notices")
		return n == 0, fmt.Sprintf("%d mails still queued", n)
	})
}

// queued counts the deliveries in the store's queue.
func (e *env) queued(t testing.TB) int {
	t.Helper()
	return e.rows(t, mailQueueOrder)
}

// mailQueueOrder is the mail queue's bucket with one key per live job.
var mailQueueOrder = workqueue.Buckets("notifications.mail")[2]

// rows counts the rows of the module's tables in the store, in one read
// (a notice becomes deliveries in one transaction).
func (e *env) rows(t testing.TB, tables ...string) int {
	t.Helper()
	n := 0
	err := e.Store.View(context.Background(), func(tx *store.Tx) error {
		for _, table := range tables {
			n += store.Keys(table).Count(tx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) project(t testing.TB, c *gitlab.Client, name, visibility string) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) member(t testing.TB, p *gitlab.Project, u *fennectest.User, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := e.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(u.ID), AccessLevel: &level}); err != nil {
		t.Fatal(err)
	}
}

// call sends a raw request and returns status, headers and the body.
func (e *env) call(t testing.TB, token, method, path, body string) (int, http.Header, string) {
	t.Helper()
	headers := []string{}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
		headers = append(headers, "Content-Type", "application/json")
	}
	resp := e.Do(t, method, path, r, headers...)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, strings.TrimSpace(string(raw))
}
