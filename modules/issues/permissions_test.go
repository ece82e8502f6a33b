package issues_test

import (
	"fmt"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestPermissionMatrix drives every role against public, internal and
// private projects with issues on and off: list, get, create, edit someone
// else's issue, read a confidential one, delete.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	s := start(t)
	owner := s.CreateUser(t, "owner")
	tokens := map[string]string{"anonymous": "", "admin": s.RootToken, "owner": owner.Token}
	ids := map[string]int64{}
	for _, role := range []string{"nonmember", "guest", "reporter", "developer", "master"} {
		u := s.CreateUser(t, role)
		tokens[role], ids[role] = u.Token, u.ID
	}
	external := s.CreateUser(t, "ext", fennectest.External())
	tokens["external"] = external.Token
	levels := map[string]gitlab.AccessLevelValue{"guest": gitlab.GuestPermissions, "reporter": gitlab.ReporterPermissions,
		"developer": gitlab.DeveloperPermissions, "master": gitlab.MaintainerPermissions}
	roles := []string{"anonymous", "nonmember", "external", "guest", "reporter", "developer", "master", "owner", "admin"}
	member := map[string]bool{"guest": true, "reporter": true, "developer": true, "master": true, "owner": true, "admin": true}
	reporterUp := map[string]bool{"reporter": true, "developer": true, "master": true, "owner": true, "admin": true}

	for _, vis := range []string{"public", "internal", "private"} {
		for _, on := range []bool{true, false} {
			name := fmt.Sprintf("%s issues=%v", vis, on)
			p := stocktest.NewProject(t, owner.Client, "m-"+vis+fmt.Sprint(on), vis)
			for role, lvl := range levels {
				stocktest.AddMember(t, owner.Client, p.ID, ids[role], lvl)
			}
			newIssue(t, owner.Client, p.ID, "plain")
			newIssue(t, owner.Client, p.ID, "secret", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
			for range roles {
				newIssue(t, owner.Client, p.ID, "to delete")
			}
			if !on {
				if _, _, err := owner.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{Name: gitlab.Ptr(p.Name), IssuesEnabled: gitlab.Ptr(false)}); err != nil {
					t.Fatal(err)
				}
			}
			for n, role := range roles {
				tok := tokens[role]
				sees := member[role] || vis == "public" || (vis == "internal" && role != "anonymous" && role != "external")
				what := name + " " + role
				// The answer of an action the role may do when the project
				// is visible and issues are on.
				answer := func(allowed bool, ok int) int {
					switch {
					case !sees:
						return 404
					case !on:
						return 403
					case !allowed:
						return 403
					}
					return ok
				}
				check := func(action string, got fennectest.Reply, want int) {
					t.Helper()
					if got.Status != want {
						t.Errorf("%s %s: %d %s, want %d", what, action, got.Status, got.Body, want)
					}
				}
				check("list", s.Call(t, tok, http.MethodGet, projectPath(p.ID, "/issues"), nil), answer(true, 200))
				check("get", s.Call(t, tok, http.MethodGet, issuePath(p.ID, 1), nil), answer(true, 200))
				conf := answer(true, 200)
				if conf == 200 && !reporterUp[role] {
					conf = 404 // a confidential issue is hidden, not forbidden
				}
				check("get confidential", s.Call(t, tok, http.MethodGet, issuePath(p.ID, 2), nil), conf)
				create := answer(true, 201)
				if role == "anonymous" {
					create = 401
				}
				check("create", s.Call(t, tok, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "by " + role}), create)
				edit := answer(reporterUp[role], 200)
				if role == "anonymous" {
					edit = 401
				}
				check("edit", s.Call(t, tok, http.MethodPut, issuePath(p.ID, 1), map[string]any{"description": "by " + role}), edit)
				del := answer(role == "owner" || role == "admin", 204)
				if role == "anonymous" {
					del = 401
				}
				check("delete", s.Call(t, tok, http.MethodDelete, issuePath(p.ID, int64(3+n)), nil), del)
				if on && sees && role != "anonymous" {
					// Visible in lists only to those who may see it.
					got := s.Call(t, tok, http.MethodGet, projectPath(p.ID, "/issues?iids[]=2"), nil).IIDs(t)
					if (len(got) == 1) != reporterUp[role] {
						t.Errorf("%s: confidential in list %v", what, got)
					}
				}
			}
		}
	}
}
