package stock_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestProfilePagesInChromium: a user in a real browser adds an SSH key on
// /profile/keys and clones their private project over SSH with it using
// the git CLI, then makes a personal access token on its page and uses
// it through client-go. axe-core checks every kind of profile page (no
// serious or critical violation), and each is screenshot.
func TestProfilePagesInChromium(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("OpenSSH client (ssh) not installed")
	}
	b := chrome.Start(t)
	var sshd repository.SSHServer
	s := stocktest.Start(t, fennectest.WithExtract(&sshd),
		fennectest.WithModuleConfig[repository.Config](repository.SectionName, func(c *repository.Config) { c.SSHListen = "127.0.0.1:0" }))
	shots := chrome.Artifacts(t, "profile-pages")
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "secret", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "first", map[string]string{"README.md": "from the profile walk\n"})

	// Rows for the lists to show: a secondary address, a project's level.
	if _, _, err := alice.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("alice.work@example.com")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.NotificationSettings.UpdateSettingsForProject(p.ID, &gitlab.NotificationSettingsOptions{Level: gitlab.Ptr(gitlab.CustomNotificationLevel)}); err != nil {
		t.Fatal(err)
	}
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	visit := func(name, path, ready string) {
		t.Helper()
		must(name, chromedp.Do(tab, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS(ready))))
		chrome.Screenshot(t, tab, shots, name+".png")
		chrome.CheckAccessibility(t, tab, name)
	}
	chrome.SignIn(t, tab, s.URL, "alice", alice.Password)
	// The header leads to the settings.
	must("settings link", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`nav.menu a[href="/profile"]`)), chromedp.WaitVisible(chromedp.CSS(`#profile-name`))))
	chrome.Screenshot(t, tab, shots, "profile.png")
	chrome.CheckAccessibility(t, tab, "profile")
	visit("emails", "/profile/emails", `a[href$="/delete"]`)
	visit("password", "/profile/password/edit", "#current-password")
	visit("notifications", "/profile/notifications", "#source-level-0")
	visit("applications", "/profile/applications", "main h1")
	visit("sessions", "/profile/active_sessions", "table.list")

	// An SSH key through the form, then git over SSH with it.
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must("key", err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	must("private key", err)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id_ed25519")
	must("write key", os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600))
	sp, err := ssh.NewPublicKey(pub)
	must("public key", err)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " alice@browser"
	visit("keys-empty", "/profile/keys", "#key-key")
	must("add key", chromedp.Do(tab, chromedp.SetValue(chromedp.CSS("#key-key"), line), chromedp.SetValue(chromedp.CSS("#key-title"), "Browser key"),
		chromedp.Click(chromedp.CSS(`form[action="/profile/keys"] button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#key-sha256"))))
	fingerprint, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#key-sha256")))
	must("fingerprint", err)
	if fingerprint != ssh.FingerprintSHA256(sp) {
		t.Fatalf("the page's fingerprint %q, want %q", fingerprint, ssh.FingerprintSHA256(sp))
	}
	chrome.Screenshot(t, tab, shots, "key.png")
	chrome.CheckAccessibility(t, tab, "key")
	visit("keys", "/profile/keys", "table.list")
	must("confirm", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`table.list a[href$="/delete"]`)), chromedp.WaitVisible(chromedp.CSS(`main form button.primary`))))
	chrome.Screenshot(t, tab, shots, "confirm.png")
	chrome.CheckAccessibility(t, tab, "remove key confirmation")

	port := sshd.Addr()[strings.LastIndexByte(sshd.Addr(), ':')+1:]
	var known strings.Builder
	for _, k := range sshd.HostKeys() {
		known.WriteString("[127.0.0.1]:" + port + " " + string(ssh.MarshalAuthorizedKey(k)))
	}
	knownHosts := filepath.Join(dir, "known_hosts")
	must("known hosts", os.WriteFile(knownHosts, []byte(known.String()), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clone := filepath.Join(dir, "clone")
	cmd := exec.CommandContext(ctx, "git", "clone", "-q", "ssh://git@127.0.0.1:"+port+"/alice/secret.git", clone)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_TERMINAL_PROMPT=0",
		"GIT_SSH_COMMAND=ssh -F /dev/null -i "+keyFile+" -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes"+
			" -o StrictHostKeyChecking=yes -o UserKnownHostsFile="+knownHosts+" -o GlobalKnownHostsFile=/dev/null -p "+port)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone over SSH with the key added on the page: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(clone, "README.md")); err != nil || string(got) != "from the profile walk\n" {
		t.Fatalf("the clone's README: %v %q", err, got)
	}

	// A personal access token from its page, read from the page, used.
	visit("tokens-empty", "/profile/personal_access_tokens", "#token-name")
	must("create token", chromedp.Do(tab, chromedp.SetValue(chromedp.CSS("#token-name"), "browser"),
		chromedp.Click(chromedp.CSS(`input[name="scopes"][value="api"]`)),
		chromedp.Click(chromedp.CSS(`form[action="/profile/personal_access_tokens"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#created-token"))))
	token, err := chromedp.Run(tab, chromedp.Value(chromedp.CSS("#created-token")))
	must("token", err)
	chrome.Screenshot(t, tab, shots, "token-created.png")
	chrome.CheckAccessibility(t, tab, "token created")
	c := s.NewClient(t, token)
	if u, _, err := c.Users.CurrentUser(); err != nil || u.Username != "alice" {
		t.Fatalf("the page's token reading the user: %v %+v", err, u)
	}
	if _, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("made-with-token")}); err != nil {
		t.Fatalf("the page's api token writing: %v", err)
	}
	must("reload", chromedp.Do(tab, chromedp.Navigate(s.URL+"/profile/personal_access_tokens"), chromedp.WaitVisible(chromedp.CSS("table.list"))))
	again, err := chromedp.Run(tab, chromedp.OuterHTML(chromedp.CSS("main")))
	must("reloaded page", err)
	if strings.Contains(again, token) {
		t.Fatal("the token is shown again after a reload")
	}
	chrome.Screenshot(t, tab, shots, "tokens.png")
	chrome.CheckAccessibility(t, tab, "tokens")

	// On a phone, each page fits its width (the side navigation goes
	// above the page; the lists drop their least needed columns).
	must("phone", chromedp.Do(tab, chromedp.EmulateViewport(360, 740)))
	for _, path := range []string{"/profile", "/profile/emails", "/profile/keys", "/profile/personal_access_tokens",
		"/profile/notifications", "/profile/applications", "/profile/active_sessions"} {
		must(path, chromedp.Do(tab, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1"))))
		width, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		must(path, err)
		if width > 360 {
			chrome.Screenshot(t, tab, shots, "phone-"+strings.ReplaceAll(strings.Trim(path, "/"), "/", "-")+".png")
			t.Errorf("%s is %d px wide on a 360 px phone", path, width)
		}
	}
}
