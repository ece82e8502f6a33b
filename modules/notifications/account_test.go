package notifications_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// TestResetPasswordMail: a user an administrator creates with
// reset_password gets a mail with a link to choose a password; one created
// with a password gets none.
func TestResetPasswordMail(t *testing.T) {
	t.Parallel()
	e := start(t)
	if _, _, err := e.Client.Users.CreateUser(&gitlab.CreateUserOptions{Email: gitlab.Ptr("new.hire@example.com"),
		Username: gitlab.Ptr("newhire"), Name: gitlab.Ptr("New Hire"), ResetPassword: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Client.Users.CreateUser(&gitlab.CreateUserOptions{Email: gitlab.Ptr("old.hand@example.com"),
		Username: gitlab.Ptr("oldhand"), Name: gitlab.Ptr("Old Hand"), Password: gitlab.Ptr("long-enough-password")}); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "Account was created for you")
	if len(got) != 1 || strings.Join(got[0].To, ",") != "new.hire@example.com" {
		t.Fatalf("account mails: %+v", got)
	}
	m := got[0]
	i := strings.Index(m.Text, e.URL+"/users/password/edit?reset_password_token=")
	if i < 0 || !strings.Contains(m.Text, "Your username is newhire.") || !strings.Contains(m.Text, "Hi New Hire!") {
		t.Fatalf("account mail:\n%s", m.Text)
	}
	link, err := url.Parse(strings.Fields(m.Text[i:])[0])
	if err != nil || len(link.Query().Get("reset_password_token")) < 20 {
		t.Fatalf("link %v %v", link, err)
	}
	if !strings.Contains(m.HTML, `href="`+link.String()+`"`) {
		t.Fatalf("no link in the HTML part:\n%s", m.HTML)
	}
	if rest := e.smtp.mails(); len(rest) != 0 {
		t.Fatalf("more mails: %s", rest[0].Subject)
	}
	goldenMail(t, "account_created", got, "new.hire@example.com", mailKnown(e))
}

// TestPasswordResetMail: a "forgot your password" request (the identity
// service the page calls) mails the account a link with the reset token,
// under a Message-ID of its own for each request.
func TestPasswordResetMail(t *testing.T) {
	t.Parallel()
	var resets identity.PasswordResets
	e := start(t, fennectest.WithExtract(&resets))
	u := e.CreateUser(t, "forgetful")
	e.settle(t)
	if err := resets.RequestPasswordReset(context.Background(), u.Email); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "Reset password instructions")
	if len(got) != 1 || strings.Join(got[0].To, ",") != u.Email {
		t.Fatalf("reset mails: %+v", got)
	}
	m := got[0]
	id := regexp.MustCompile(`^<user_` + store.IDString(u.ID) + `_reset_\d+@127\.0\.0\.1>$`)
	if !id.MatchString(m.Header.Get("Message-ID")) || m.Header.Get("In-Reply-To") != "" || m.Header.Get("Auto-Submitted") != "auto-generated" {
		t.Fatalf("reset mail headers: %v", m.Header)
	}
	i := strings.Index(m.Text, e.URL+"/users/password/edit?reset_password_token=")
	if i < 0 || !strings.Contains(m.Text, "Hi User forgetful!") || !strings.Contains(m.Text, "your account forgetful on 127.0.0.1") {
		t.Fatalf("reset mail:\n%s", m.Text)
	}
	link, err := url.Parse(strings.Fields(m.Text[i:])[0])
	if err != nil || len(link.Query().Get("reset_password_token")) < 20 {
		t.Fatalf("link %v %v", link, err)
	}
	if !strings.Contains(m.HTML, `href="`+link.String()+`"`) {
		t.Fatalf("no link in the HTML part:\n%s", m.HTML)
	}
	goldenMail(t, "password_reset", got, u.Email, mailKnown(e))
}
