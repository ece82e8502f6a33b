package main

import (
	"fmt"
	"io"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// mailSink is a real SMTP server (emersion/go-smtp) on loopback that
// records every mail it accepts by recipient and Message-ID, which is how
// Fennec names a change in its mail (<issue_ID@host>, <note_ID@host>): the
// multi-node test's receiver of notification mail.
type mailSink struct {
	addr string
	srv  *smtp.Server
	mu   sync.Mutex
	// seen: mailIdentity -> arrival times, one per delivery.
	seen map[string][]time.Time
	// forget is the one identity the sink pretends it never got
	// (FENNEC_MULTINODE_LOSE_ONE=mail), to see the check fail.
	forget    string
	forgetAll bool
}

func newMailSink(t *testing.T) *mailSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &mailSink{addr: l.Addr().String(), seen: map[string][]time.Time{}, forgetAll: multiNodeLoseOne("mail")}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{sink: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	go s.srv.Serve(l)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// mailIdentity names one mail to one recipient: a change's mail owed to
// two users is two deliveries. The Message-ID's host is left out: it is
// the external URL's, which each node has its own of.
func mailIdentity(to, messageID string) string {
	local, _, _ := strings.Cut(strings.Trim(messageID, "<>"), "@")
	return strings.ToLower(to) + " " + local
}

func (s *mailSink) record(to []string, messageID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rcpt := range to {
		id := mailIdentity(rcpt, messageID)
		if s.forgetAll && (s.forget == "" || s.forget == id) && strings.Contains(id, "note_") {
			s.forget = id
			continue
		}
		s.seen[id] = append(s.seen[id], time.Now())
	}
}

// missing lists the wanted identities not delivered yet.
func (s *mailSink) missing(want []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range want {
		if len(s.seen[id]) == 0 {
			out = append(out, id)
		}
	}
	return out
}

// duplicates counts, among want, the mails delivered more than once, the
// extra deliveries, and the longest time from a mail's first delivery to
// its last.
func (s *mailSink) duplicates(want []string) (mails, extra int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range want {
		times := s.seen[id]
		if len(times) < 2 {
			continue
		}
		mails++
		extra += len(times) - 1
		window = max(window, times[len(times)-1].Sub(times[0])) // recorded in order
	}
	return mails, extra, window
}

func (s *mailSink) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, times := range s.seen {
		n += len(times)
	}
	return n
}

// sinkSession is one SMTP conversation: the recipients, then the data,
// whose Message-ID names the mail.
type sinkSession struct {
	sink *mailSink
	to   []string
}

func (ss *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }

func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *sinkSession) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return fmt.Errorf("sink: a mail that does not parse: %w", err)
	}
	_, _ = io.Copy(io.Discard, m.Body)
	id := m.Header.Get("Message-ID")
	if id == "" {
		return &smtp.SMTPError{Code: 550, Message: "sink: a mail without a Message-ID"}
	}
	ss.sink.record(ss.to, id)
	return nil
}

func (ss *sinkSession) Reset()        { ss.to = nil }
func (ss *sinkSession) Logout() error { return nil }

// multiNodeWatcher is a user who watches everything (notification level
// watch), so that every issue and comment of a project they are a member
// of owes them a mail.
type multiNodeWatcher struct {
	id    int64
	email string
}

// newMultiNodeWatchers makes two watchers: two recipients are two keys of
// the mail queue, worked at once, as real recipients are.
func newMultiNodeWatchers(t *testing.T, admin *crashClient) []multiNodeWatcher {
	t.Helper()
	var out []multiNodeWatcher
	for i := range 2 {
		name := fmt.Sprintf("watcher%d", i)
		w := multiNodeWatcher{email: name + "@example.com"}
		var u struct {
			ID int64 `json:"id"`
		}
		admin.mustJSON(t, "POST", "/users", map[string]any{"username": name, "name": "Watcher " + name, "email": w.email,
			"password": "password-123-" + name, "skip_confirmation": true}, 201, &u)
		w.id = u.ID
		var level struct {
			Level string `json:"level"`
		}
		admin.mustJSON(t, "PUT", "/notification_settings?sudo="+name, map[string]string{"level": "watch"}, 200, &level)
		if level.Level != "watch" {
			t.Fatalf("%s's notification level is %q, want watch", name, level.Level)
		}
		out = append(out, w)
	}
	return out
}

// mailIdentities are the mails the acknowledged issues and notes owe the
// watchers: one per change and watcher, named as the nodes name them
// (<issue_ID@host> opens an issue's thread, <note_ID@host> is a comment).
func (l *multiNodeLedger) mailIdentities(watchers []multiNodeWatcher) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, w := range watchers {
		for _, issues := range l.issues {
			for _, is := range issues {
				out = append(out, mailIdentity(w.email, fmt.Sprintf("issue_%d", is.id)))
			}
		}
		for _, notes := range l.notes {
			for _, id := range notes {
				out = append(out, mailIdentity(w.email, fmt.Sprintf("note_%d", id)))
			}
		}
	}
	return out
}
