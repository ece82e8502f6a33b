package mergerequests_test

import (
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestPermissions drives every role against a private and a public
// project: list, create, update, merge (into a branch and into a protected
// one), cancel, delete.
func TestPermissions(t *testing.T) {
	t.Parallel()
	s := start(t)
	owner := s.CreateUser(t, "owner")
	tokens := map[string]string{"anonymous": "", "admin": s.RootToken, "owner": owner.Token}
	ids := map[string]int64{}
	levels := map[string]gitlab.AccessLevelValue{"guest": gitlab.GuestPermissions, "reporter": gitlab.ReporterPermissions,
		"developer": gitlab.DeveloperPermissions, "master": gitlab.MaintainerPermissions}
	for _, role := range []string{"nonmember", "guest", "reporter", "developer", "master"} {
		u := s.CreateUser(t, role)
		tokens[role], ids[role] = u.Token, u.ID
	}
	roles := []string{"anonymous", "nonmember", "guest", "reporter", "developer", "master", "owner", "admin"}
	for _, vis := range []string{"private", "public"} {
		p := stocktest.NewProject(t, owner.Client, "perm-"+vis, vis)
		for role, lvl := range levels {
			stocktest.AddMember(t, owner.Client, p.ID, ids[role], lvl)
		}
		w := s.clone(t, "owner", owner.Token, "owner/perm-"+vis)
		w.commit("base", map[string]string{"a": "a\n"})
		w.git("push", "-q", "origin", "HEAD:master")
		w.git("push", "-q", "origin", "HEAD:stable")
		s.Call(t, owner.Token, http.MethodPut, projectPath(p.ID, "/repository/branches/stable/protect"), nil).Expect(t, 200, "")
		for _, role := range roles {
			w.git("checkout", "-q", "-B", "b-"+role, "master")
			w.commit(role, map[string]string{role: role})
			w.git("push", "-q", "origin", "b-"+role)
		}
		s.Drain(t)
		readable := map[string]bool{"reporter": true, "developer": true, "master": true, "owner": true, "admin": true}
		writer := map[string]bool{"developer": true, "master": true, "owner": true, "admin": true}
		for _, role := range roles {
			t.Run(vis+"/"+role, func(t *testing.T) {
				tok := tokens[role]
				list := s.Call(t, tok, http.MethodGet, projectPath(p.ID, "/merge_requests"), nil)
				switch {
				case readable[role] || vis == "public":
					list.Expect(t, 200, "")
				case role == "guest":
					list.Expect(t, 403, "")
				default:
					list.Expect(t, 404, `{"message":"404 Project Not Found"}`)
				}
				body := map[string]any{"title": role, "source_branch": "b-" + role, "target_branch": "master"}
				r := s.Call(t, tok, http.MethodPost, projectPath(p.ID, "/merge_requests"), body)
				switch {
				case role == "anonymous":
					r.Expect(t, 401, "")
					return
				case writer[role]:
					r.Expect(t, 201, "")
				case readable[role] || vis == "public" || role == "guest":
					r.Expect(t, 403, "")
				default:
					r.Expect(t, 404, "")
				}
				// The owner opens one for every role to try to merge.
				var mr *gitlab.MergeRequest
				if !writer[role] {
					mr = openMR(t, owner.Client, p.ID, "b-"+role, "master", role)
				} else {
					mr = &gitlab.MergeRequest{}
					mr.IID = mustInt(t, r.Object(t)["iid"])
				}
				// Into a protected branch: developers may not merge.
				s.Call(t, owner.Token, http.MethodPut, mrPath(p.ID, mr.IID), map[string]any{"target_branch": "stable"}).Expect(t, 200, "")
				m := s.Call(t, tok, http.MethodPut, mrPath(p.ID, mr.IID, "/merge"), nil)
				switch {
				case role == "master" || role == "owner" || role == "admin":
					m.Expect(t, 200, "")
				case role == "guest" && vis == "private":
					m.Expect(t, 403, "") // may not even read them
				case readable[role] || vis == "public" || role == "guest":
					m.Expect(t, 401, `{"message":"401 Unauthorized"}`)
				default:
					m.Expect(t, 404, "")
				}
				if role == "developer" {
					// Into master, unprotected: a developer merges.
					s.Call(t, owner.Token, http.MethodPut, mrPath(p.ID, mr.IID), map[string]any{"target_branch": "master"}).Expect(t, 200, "")
					s.Call(t, tok, http.MethodPut, mrPath(p.ID, mr.IID, "/merge"), nil).Expect(t, 200, "")
				}
				d := s.Call(t, tok, http.MethodDelete, mrPath(p.ID, mr.IID), nil)
				switch {
				case role == "owner" || role == "admin":
					d.Expect(t, 204, "")
				case readable[role] || vis == "public" || role == "guest":
					d.Expect(t, 403, "")
				default:
					d.Expect(t, 404, "")
				}
			})
		}
	}
}

func mustInt(t testing.TB, v any) int64 {
	t.Helper()
	n, err := v.(interface{ Int64() (int64, error) }).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
