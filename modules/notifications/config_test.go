package notifications_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/notifications"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSMTPFromEnvironment: FENNEC_SMTP_ADDRESS and FENNEC_SMTP_FROM
// configure the sender, as every setting is configured.
func TestSMTPFromEnvironment(t *testing.T) {
	t.Parallel()
	mailer := newMailServer(t, true)
	vars := map[string]string{"FENNEC_SMTP_ADDRESS": mailer.addr, "FENNEC_SMTP_FROM": "ops@fennec.example",
		"FENNEC_SMTP_REPLY_TO": "noreply@fennec.example"}
	e := &env{smtp: mailer}
	e.Server = stocktest.Start(t, fennectest.WithExtract(&e.bus), fennectest.WithConfig(func(c *config.Config) {
		c.Getenv = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}))
	author := e.CreateUser(t, "envy")
	p := e.project(t, author.Client, "Env", "private")
	e.watchers(t, p, 1, "ew")
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Configured")}); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "Env | Configured (#1)")
	if len(got) != 1 || got[0].From != "ops@fennec.example" || got[0].Header.Get("From") != "<ops@fennec.example>" ||
		got[0].Header.Get("Reply-To") != "<noreply@fennec.example>" {
		t.Fatalf("mails: %+v", got)
	}
	goldenMail(t, "issue_new_from_and_reply_to", got, "ew0@example.com", mailKnown(e))
}

// TestSMTPSettings: the flags, the file's section and the refusals of
// values that would fail late.
func TestSMTPSettings(t *testing.T) {
	t.Parallel()
	sections := notifications.Module().ConfigSections()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	flags := config.NewFlags(fs, sections...)
	if err := fs.Parse([]string{"--smtp-address", "mail.example.org:587", "--smtp-from", "git@example.org"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := flags.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	config.Modify(&cfg, notifications.SectionName, func(c *notifications.Config) { c.SMTPTLS = "starttls" })
	got := notifications.DefaultConfig()
	if err := cfg.Decode(notifications.SectionName, &got); err != nil {
		t.Fatal(err)
	}
	if got.SMTPAddress != "mail.example.org:587" || got.SMTPFrom != "git@example.org" || got.SMTPTLS != "starttls" ||
		got.SMTPTimeout != 30*time.Second || got.RetryMax != 10*time.Minute {
		t.Fatalf("settings: %+v", got)
	}
	for key, bad := range map[string]any{
		"smtp_address": "no-port", "smtp_tls": "ssl3", "retry_initial": "0s", "smtp_timeout": "-1s",
	} {
		c := config.Default()
		c.SetModule(notifications.SectionName, key, bad)
		v := notifications.DefaultConfig()
		if err := c.Decode(notifications.SectionName, &v); err == nil || !strings.Contains(err.Error(), "notifications.") {
			t.Errorf("%s=%v: %v", key, bad, err)
		}
	}
}
