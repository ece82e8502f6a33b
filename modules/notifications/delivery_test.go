package notifications_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/notifications"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// watchers makes n users who watch project p.
func (e *env) watchers(t *testing.T, p *gitlab.Project, n int, prefix string) []string {
	t.Helper()
	var emails []string
	for i := range n {
		u := e.CreateUser(t, prefix+store.IDString(int64(i)))
		e.member(t, p, u, gitlab.ReporterPermissions)
		if _, _, err := u.Client.NotificationSettings.UpdateSettingsForProject(p.ID, &gitlab.NotificationSettingsOptions{Level: gitlab.Ptr(gitlab.WatchNotificationLevel)}); err != nil {
			t.Fatal(err)
		}
		emails = append(emails, u.Email)
	}
	slices.Sort(emails)
	return emails
}

// TestSMTPDownThenUp: mail queued while the server is down, across a
// restart of Fennec, arrives once each when the server comes up.
func TestSMTPDownThenUp(t *testing.T) {
	t.Parallel()
	smtpServer := newMailServer(t, false) // not listening yet
	dir, password := t.TempDir(), "root-pw-down-up"
	var want []string
	var author *fennectest.User
	var project *gitlab.Project
	t.Run("queued while down", func(t *testing.T) {
		core, logs := observer.New(zap.WarnLevel)
		e := &env{smtp: smtpServer}
		e.Server = stocktest.Start(t, withSMTP(smtpServer.addr), fennectest.WithDataDir(dir, password), fennectest.WithExtract(&e.bus),
			fennectest.WithLogger(zap.New(core)))
		author = e.CreateUser(t, "author")
		project = e.project(t, author.Client, "Outage", "private")
		want = e.watchers(t, project, 5, "w")
		for _, title := range []string{"First", "Second"} {
			if _, _, err := author.Client.Issues.CreateIssue(project.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(title)}); err != nil {
				t.Fatal(err)
			}
		}
		ctxDrain(t, e)
		// Wait until the sender has tried and failed three times (backing
		// off between), the mails still queued.
		failed := func() int { return logs.FilterMessageSnippet("mail delivery failed; will retry").Len() }
		fennectest.Poll(t, 10*time.Second, func() (bool, string) {
			queued, failures := e.queued(t), failed()
			return queued == 10 && failures >= 3, fmt.Sprintf("queued %d, failures %d", queued, failures)
		})
	})
	// Fennec restarts; the server is still down for a moment, then up.
	e := &env{smtp: smtpServer}
	e.Server = stocktest.Start(t, withSMTP(smtpServer.addr), fennectest.WithDataDir(dir, password), fennectest.WithExtract(&e.bus))
	if n := e.queued(t); n != 10 {
		t.Fatalf("after the restart %d deliveries are queued, want 10", n)
	}
	smtpServer.start(t)
	for _, title := range []string{"First (#1)", "Second (#2)"} {
		got := e.take(t, "Outage | "+title)
		if r := recipients(got); !slices.Equal(r, want) {
			t.Fatalf("%s went to %v, want each of %v once", title, r, want)
		}
	}
	if n := len(smtpServer.mails()); n != 0 {
		t.Fatalf("%d more mails", n)
	}
}

func ctxDrain(t *testing.T, e *env) {
	t.Helper()
	// The events are handled (the mails queued) even while SMTP is down.
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		n, err := e.bus.Pending()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0, fmt.Sprintf("%d events pending", n)
	})
}

// TestTemporaryRefusal: a recipient the server refuses for now (451) is
// retried; the others are not held back, and nobody gets two copies.
func TestTemporaryRefusal(t *testing.T) {
	t.Parallel()
	t.Run("retry due after the round", func(t *testing.T) { temporaryRefusal(t) })
	// A retry wait shorter than a round: the refused mail is due again
	// before the round that refused it ends (as on a loaded server).
	t.Run("retry due within the round", func(t *testing.T) {
		temporaryRefusal(t, fennectest.WithModuleConfig(notifications.SectionName, func(c *notifications.Config) {
			c.RetryInitial, c.RetryMax = time.Microsecond, time.Microsecond
		}))
	})
}

func temporaryRefusal(t *testing.T, opts ...fennectest.Option) {
	e := start(t, opts...)
	author := e.CreateUser(t, "writer")
	p := e.project(t, author.Client, "Flaky", "private")
	want := e.watchers(t, p, 3, "r")
	refused := 0
	e.smtp.mu.Lock()
	e.smtp.refuse = func(to string) bool {
		if to == "r1@example.com" && refused < 2 {
			refused++
			return true
		}
		return false
	}
	e.smtp.mu.Unlock()
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Wobbly")}); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "Flaky | Wobbly (#1)")
	if r := recipients(got); !slices.Equal(r, want) {
		t.Fatalf("went to %v, want %v", r, want)
	}
	e.smtp.mu.Lock()
	defer e.smtp.mu.Unlock()
	if refused != 2 {
		t.Fatalf("refused %d times, want 2", refused)
	}
}

// TestFileOutbox: without smtp_address the mails are .eml files under
// <data>/mail/outbox, and the log says so once at start.
func TestFileOutbox(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	e := &env{}
	e.Server = stocktest.Start(t, fennectest.WithLogger(zap.New(core)), fennectest.WithExtract(&e.bus))
	if n := logs.FilterMessageSnippet("no smtp_address configured").Len(); n != 1 {
		t.Fatalf("the outbox is logged %d times, want once", n)
	}
	author := e.CreateUser(t, "filer")
	p := e.project(t, author.Client, "Disk", "private")
	want := e.watchers(t, p, 2, "f")
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("On disk"),
		Description: gitlab.Ptr("Ünïcode & <tags>")}); err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	outbox := filepath.Join(e.DataDir, "mail", "outbox")
	entries, err := os.ReadDir(outbox)
	if err != nil {
		t.Fatal(err)
	}
	var to []string
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".eml") {
			t.Fatalf("stray file %s in the outbox", entry.Name())
		}
		raw, err := os.ReadFile(filepath.Join(outbox, entry.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := parseMail(raw)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != "Disk | On disk (#1)" || !strings.Contains(m.Text, "Ünïcode & <tags>") || !strings.Contains(m.HTML, "Ünïcode &amp; &lt;tags&gt;") {
			t.Fatalf("outbox mail: %q\n%s\n%s", m.Subject, m.Text, m.HTML)
		}
		to = append(to, strings.Trim(m.Header.Get("To"), "<>"))
	}
	slices.Sort(to)
	if !slices.Equal(to, want) {
		t.Fatalf("outbox mails to %v, want %v", to, want)
	}
	if logs.FilterMessageSnippet("no smtp_address configured").Len() != 1 {
		t.Fatal("the outbox was logged again")
	}
}

// TestConnectionLostAfterAccept: the server accepts a mail and the
// connection drops before the client's next command: that mail is not
// sent again, the others follow on a new connection.
func TestConnectionLostAfterAccept(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.smtp.mu.Lock()
	e.smtp.dropAfterAccept = 2
	e.smtp.mu.Unlock()
	author := e.CreateUser(t, "dropper")
	p := e.project(t, author.Client, "Drops", "private")
	want := e.watchers(t, p, 4, "d")
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Cut")}); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "Drops | Cut (#1)")
	if r := recipients(got); !slices.Equal(r, want) {
		t.Fatalf("went to %v, want each of %v once", r, want)
	}
	e.smtp.mu.Lock()
	defer e.smtp.mu.Unlock()
	if e.smtp.dropAfterAccept != 0 {
		t.Fatalf("the connection was dropped %d times fewer than planned", e.smtp.dropAfterAccept)
	}
}

// TestPermanentRefusal: a recipient the server refuses for good (550) is
// dropped, not retried; the others get the mail.
func TestPermanentRefusal(t *testing.T) {
	t.Parallel()
	e := start(t)
	author := e.CreateUser(t, "bouncer")
	p := e.project(t, author.Client, "Bounce", "private")
	want := e.watchers(t, p, 3, "b")
	rejected := 0
	e.smtp.mu.Lock()
	e.smtp.reject = func(to string) bool {
		if to == "b2@example.com" {
			rejected++
			return true
		}
		return false
	}
	e.smtp.mu.Unlock()
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Gone")}); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "Bounce | Gone (#1)") // waits for an empty queue
	if r := recipients(got); !slices.Equal(r, want[:2]) {
		t.Fatalf("went to %v, want %v", r, want[:2])
	}
	e.smtp.mu.Lock()
	defer e.smtp.mu.Unlock()
	if rejected != 1 {
		t.Fatalf("tried the refused address %d times, want 1", rejected)
	}
}
