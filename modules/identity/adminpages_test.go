package identity_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Tests of the admin area's pages (issue 30), over the whole stock app:
// what administrators see and do, that nobody else gets anything (404,
// sign-in, 403 on a forged form, nothing changed), blocking ending a
// user's session and tokens, and impersonation with its audit lines.
// One app serves every subtest; each subtest makes its own users.

// signInRedirect is where an anonymous visit of path is sent.
func signInRedirect(path string) string {
	return "/users/sign_in?return_to=" + url.QueryEscape(path)
}

// adminForm is a form posted with the page's CSRF token.
func adminForm(csrf string, kv ...string) url.Values {
	v := url.Values{"authenticity_token": {csrf}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// userState is the account's state through the API, as root.
func userState(t *testing.T, s *fennectest.Server, username string) map[string]any {
	t.Helper()
	list := s.Call(t, s.RootToken, http.MethodGet, "/api/v4/users?username="+username, nil).Expect(t, http.StatusOK, "").List(t)
	if len(list) != 1 {
		t.Fatalf("the API lists %d users named %s", len(list), username)
	}
	return list[0]
}

func TestAdminArea(t *testing.T) {
	t.Parallel()
	logs, audit := observer.New(zapcore.InfoLevel)
	s := stocktest.Start(t, fennectest.WithLogger(zap.New(logs)))
	root := s.SignedIn(t, "root", s.RootPassword)

	// pages are every admin page's GET (projects and groups are the
	// projects module's, the overview the core's).
	pages := []string{"/admin", "/admin/users", "/admin/users/new", "/admin/users/root", "/admin/users/root/edit",
		"/admin/projects", "/admin/groups"}

	t.Run("administrators see each page", func(t *testing.T) {
		want := map[string][]string{
			"/admin":                 {"<h1>Admin area</h1>", "Users", "Projects", "Groups", "Runners online", "Version", "Store", "Outbox backlog", `aria-label="Admin area"`},
			"/admin/users":           {"<h1>Users</h1>", "@root", `id="users-total"`},
			"/admin/users/new":       {"New user", `name="reset_password"`},
			"/admin/users/root":      {"@root", `id="user-admin">yes`},
			"/admin/users/root/edit": {"Edit root", `value="root"`},
			"/admin/projects":        {"<h1>Projects</h1>"},
			"/admin/groups":          {"<h1>Groups</h1>", "New group"},
		}
		for _, p := range pages {
			root.Get(t, p).Want(t, p, http.StatusOK, want[p]...)
		}
		root.Get(t, "/").Want(t, "the menu", http.StatusOK, `href="/admin">Admin</a>`)
	})

	t.Run("nobody else sees or changes anything", func(t *testing.T) {
		eve := s.CreateUser(t, "eve")
		s.CreateUser(t, "victim")
		b := s.SignedIn(t, "eve", eve.Password)
		csrf := b.Get(t, "/").CSRF()
		b.Get(t, "/").WantNot(t, "a user's menu", `href="/admin"`)
		for _, p := range append(pages, "/admin/users/victim") {
			b.Get(t, p).Want(t, "a user's "+p, http.StatusNotFound, "Page not found")
			s.NewBrowser(t).Get(t, p).WantRedirect(t, "anonymous "+p, http.StatusFound, signInRedirect(p))
		}
		for _, p := range []string{"/admin/users", "/admin/users/victim", "/admin/users/victim/block", "/admin/users/victim/admin",
			"/admin/users/victim/delete", "/admin/users/victim/impersonate", "/admin/groups", "/admin/groups/1/delete"} {
			b.Post(t, p, adminForm(csrf, "username", "eve2", "name", "Eve", "email", "eve2@example.com", "password", "password123",
				"admin", "1", "confirm_username", "victim", "name", "g", "path", "g")).Want(t, "a user's POST "+p, http.StatusNotFound)
		}
		// A stop while impersonating nobody is missing too.
		b.Post(t, "/admin/impersonation/stop", adminForm(csrf)).Want(t, "stop without impersonating", http.StatusNotFound)
		if st := userState(t, s, "victim"); st["state"] != "active" || st["is_admin"] != false {
			t.Errorf("the victim changed: %v", st)
		}
		s.Call(t, s.RootToken, http.MethodGet, "/api/v4/users?username=eve2", nil).Expect(t, http.StatusOK, "[]")
		// The administrator's own forms need their token.
		root.Post(t, "/admin/users/victim/block", adminForm("forged")).Want(t, "a forged block", http.StatusForbidden, "Form expired")
		root.Post(t, "/admin/users/victim/block", url.Values{}).Want(t, "a block without a token", http.StatusForbidden)
		root.Post(t, "/admin/users", adminForm("0123abcd", "username", "forged", "name", "F", "email", "f@example.com",
			"password", "password123")).Want(t, "a forged create", http.StatusForbidden)
		if st := userState(t, s, "victim"); st["state"] != "active" {
			t.Errorf("a forged form blocked the victim: %v", st)
		}
		s.Call(t, s.RootToken, http.MethodGet, "/api/v4/users?username=forged", nil).Expect(t, http.StatusOK, "[]")
		// Nonsense in the path and the query.
		root.Get(t, "/admin/users/..%2F..%2Fetc").Want(t, "a traversal", http.StatusNotFound)
		root.Get(t, "/admin/users/"+strings.Repeat("x", 300)).Want(t, "a long name", http.StatusNotFound)
		root.Get(t, "/admin/users?filter=nope").Want(t, "an unknown filter", http.StatusBadRequest)
		root.Get(t, "/admin/users?search="+strings.Repeat("a", 300)).Want(t, "a long search", http.StatusBadRequest)
		root.Get(t, "/admin/projects?visibility=secret").Want(t, "an unknown visibility", http.StatusBadRequest)
	})

	t.Run("create, search, edit and delete a user", func(t *testing.T) {
		csrf := root.Get(t, "/admin/users/new").CSRF()
		root.Post(t, "/admin/users", adminForm(csrf, "username", "carol", "name", "Carol <b>C</b>", "email", "not-an-address",
			"password", "password123")).Want(t, "a refused create", http.StatusBadRequest, "email is invalid", `value="carol"`, "Carol &lt;b&gt;C&lt;/b&gt;")
		root.Post(t, "/admin/users", adminForm(csrf, "username", "carol", "name", "Carol", "email", "carol@example.com",
			"password", "password123", "external", "1", "projects_limit", "7", "can_create_group", "1")).
			WantRedirect(t, "create", http.StatusSeeOther, "/admin/users/carol")
		st := userState(t, s, "carol")
		if st["name"] != "Carol" || st["external"] != true || st["is_admin"] != false || st["email"] != "carol@example.com" {
			t.Errorf("the API's carol: %v", st)
		}
		root.Post(t, "/admin/users", adminForm(csrf, "username", "carol", "name", "Carol", "email", "carol2@example.com",
			"password", "password123")).Want(t, "a taken username", http.StatusBadRequest, "username has already been taken")
		root.Get(t, "/admin/users?search=caro").Want(t, "search", http.StatusOK, "@carol", "1 user")
		root.Get(t, "/admin/users?search=caro").WantNot(t, "search", "@root")
		root.Get(t, "/admin/users?filter=admins").Want(t, "admins", http.StatusOK, "@root")
		root.Get(t, "/admin/users?filter=admins").WantNot(t, "admins", "@carol")
		root.Get(t, "/admin/users?filter=external").Want(t, "external", http.StatusOK, "@carol")
		root.Post(t, "/admin/users/carol", adminForm(csrf, "username", "carol", "name", "Carol Two", "email", "carol@example.com",
			"projects_limit", "9", "can_create_group", "1")).WantRedirect(t, "edit", http.StatusSeeOther, "/admin/users/carol?done=updated")
		if st := userState(t, s, "carol"); st["name"] != "Carol Two" || st["external"] != false || st["projects_limit"].(interface{ String() string }).String() != "9" {
			t.Errorf("the API's carol after the edit: %v", st)
		}
		root.Post(t, "/admin/users/carol/admin", adminForm(csrf, "admin", "1")).WantRedirect(t, "make admin", http.StatusSeeOther, "/admin/users/carol?done=admin")
		if st := userState(t, s, "carol"); st["is_admin"] != true {
			t.Errorf("carol is not an administrator: %v", st)
		}
		root.Post(t, "/admin/users/carol/admin", adminForm(csrf, "admin", "0")).WantRedirect(t, "revoke admin", http.StatusSeeOther, "/admin/users/carol?done=not-admin")
		root.Get(t, "/admin/users/carol?done=not-admin").Want(t, "carol's page", http.StatusOK, "no longer an administrator", `id="user-admin">no`)
		root.Post(t, "/admin/users/carol/delete", adminForm(csrf, "confirm_username", "Carol")).Want(t, "a wrong confirmation", http.StatusBadRequest, "Not deleted")
		userState(t, s, "carol")
		root.Post(t, "/admin/users/root/delete", adminForm(csrf, "confirm_username", "root")).Want(t, "deleting oneself", http.StatusForbidden)
		root.Post(t, "/admin/users/carol/delete", adminForm(csrf, "confirm_username", "carol")).WantRedirect(t, "delete", http.StatusSeeOther, "/admin/users")
		s.Drain(t)
		s.Call(t, s.RootToken, http.MethodGet, "/api/v4/users?username=carol", nil).Expect(t, http.StatusOK, "[]")
		root.Get(t, "/admin/users/carol").Want(t, "a deleted user", http.StatusNotFound)
	})

	t.Run("blocking ends the user's session and tokens", func(t *testing.T) {
		dave := s.CreateUser(t, "dave")
		db := s.SignedIn(t, "dave", dave.Password)
		db.Get(t, "/dashboard/projects").Want(t, "dave's dashboard", http.StatusOK)
		csrf := root.Get(t, "/admin/users/dave").CSRF()
		root.Post(t, "/admin/users/dave/block", adminForm(csrf)).WantRedirect(t, "block", http.StatusSeeOther, "/admin/users/dave?done=blocked")
		db.Get(t, "/dashboard/projects").WantRedirect(t, "dave's next page", http.StatusFound, signInRedirect("/dashboard/projects"))
		s.Call(t, dave.Token, http.MethodGet, "/api/v4/user", nil).Expect(t, http.StatusUnauthorized, "")
		root.Get(t, "/admin/users/dave").Want(t, "dave blocked", http.StatusOK, `id="user-state">blocked`, `id="unblock-user"`)
		root.Get(t, "/admin/users?filter=blocked").Want(t, "blocked filter", http.StatusOK, "@dave")
		root.Post(t, "/admin/users/dave/impersonate", adminForm(csrf)).Want(t, "impersonating a blocked user", http.StatusForbidden,
			"You cannot impersonate a blocked user")
		root.Post(t, "/admin/users/dave/unblock", adminForm(csrf)).WantRedirect(t, "unblock", http.StatusSeeOther, "/admin/users/dave?done=unblocked")
		if got := s.Call(t, dave.Token, http.MethodGet, "/api/v4/user", nil).Expect(t, http.StatusOK, "").Object(t); got["username"] != "dave" {
			t.Errorf("dave's token after the unblock answers for %v", got["username"])
		}
		s.SignedIn(t, "dave", dave.Password).Get(t, "/dashboard/projects").Want(t, "dave signed in again", http.StatusOK)
	})

	t.Run("impersonation", func(t *testing.T) {
		frank := s.CreateUser(t, "frank")
		admin2 := s.CreateUser(t, "admin2", fennectest.Admin())
		a := s.SignedIn(t, "admin2", admin2.Password)
		fp := a.Get(t, "/admin/users/frank")
		fp.Want(t, "frank's page", http.StatusOK, `id="impersonate"`)
		csrf := fp.CSRF()
		a.Post(t, "/admin/users/admin2/impersonate", adminForm(csrf)).Want(t, "impersonating oneself", http.StatusForbidden, "You cannot impersonate yourself")
		a.Post(t, "/admin/users/nobody/impersonate", adminForm(csrf)).Want(t, "an unknown user", http.StatusNotFound)
		a.Post(t, "/admin/users/frank/impersonate", adminForm("forged")).Want(t, "a forged start", http.StatusForbidden)
		a.Get(t, "/").WantNot(t, "after a forged start", "You are impersonating")
		a.Post(t, "/admin/users/frank/impersonate", adminForm(csrf)).WantRedirect(t, "start", http.StatusSeeOther, "/")
		home := a.Get(t, "/")
		home.Want(t, "the banner", http.StatusOK, "You are impersonating <strong>frank</strong> (signed in as admin2)", `id="stop-impersonating"`)
		home.WantNot(t, "frank's menu", `href="/admin"`)
		// The administrator's session is not frank's: frank's own list
		// shows only his, and he cannot end the administrator's.
		fb := s.SignedIn(t, "frank", frank.Password)
		if n := strings.Count(fb.Get(t, "/profile/active_sessions").Body, "/revoke\""); n != 1 {
			t.Errorf("frank's sessions list shows %d sessions, want his own only", n)
		}
		a.Get(t, "/admin").Want(t, "the admin area as frank", http.StatusNotFound)
		a.Post(t, "/admin/impersonation/stop", adminForm("forged")).Want(t, "a forged stop", http.StatusForbidden)
		a.Get(t, "/").Want(t, "still frank", http.StatusOK, "You are impersonating")
		a.Post(t, "/admin/impersonation/stop", adminForm(home.CSRF())).WantRedirect(t, "stop", http.StatusSeeOther, "/admin/users/frank")
		a.Get(t, "/admin").Want(t, "admin2 again", http.StatusOK, "<h1>Admin area</h1>")
		a.Get(t, "/").WantNot(t, "after the stop", "You are impersonating")
		started := audit.FilterMessage("audit: impersonation started").FilterField(zap.String("user", "frank")).All()
		stopped := audit.FilterMessage("audit: impersonation stopped").FilterField(zap.String("user", "frank")).All()
		if len(started) != 1 || len(stopped) != 1 || started[0].ContextMap()["admin"] != "admin2" || stopped[0].ContextMap()["admin"] != "admin2" {
			t.Errorf("the audit lines: started %v, stopped %v", started, stopped)
		}

		// Blocking the administrator while they impersonate ends the
		// session; so does blocking the user impersonated.
		a.Post(t, "/admin/users/frank/impersonate", adminForm(csrf)).WantRedirect(t, "start again", http.StatusSeeOther, "/")
		rc := root.Get(t, "/admin/users/admin2").CSRF()
		root.Post(t, "/admin/users/admin2/block", adminForm(rc)).WantRedirect(t, "block admin2", http.StatusSeeOther, "/admin/users/admin2?done=blocked")
		s.Drain(t) // the block's event ends the sessions
		root.Post(t, "/admin/users/admin2/unblock", adminForm(rc)).WantRedirect(t, "unblock admin2", http.StatusSeeOther, "/admin/users/admin2?done=unblocked")
		a.Get(t, "/dashboard/projects").WantRedirect(t, "the impersonating session after its administrator's block", http.StatusFound, signInRedirect("/dashboard/projects"))
		a = s.SignedIn(t, "admin2", admin2.Password)
		csrf = a.Get(t, "/admin/users/frank").CSRF()
		a.Post(t, "/admin/users/frank/impersonate", adminForm(csrf)).WantRedirect(t, "start a third time", http.StatusSeeOther, "/")
		root.Post(t, "/admin/users/frank/block", adminForm(rc)).WantRedirect(t, "block frank", http.StatusSeeOther, "/admin/users/frank?done=blocked")
		a.Get(t, "/dashboard/projects").WantRedirect(t, "impersonating a user who got blocked", http.StatusFound, signInRedirect("/dashboard/projects"))
	})
}
