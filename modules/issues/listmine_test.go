package issues_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// GET /issues walks the byUser keys (ListMine); ListMineScan is the
// decode-everything reference it replaced. On random issues (several
// users, projects public, internal and private with guests and
// reporters, confidential issues, closes and reopens, label and assignee
// changes, backdated and deleted issues), both give the same rows in the
// same order and the same total, for every scope, state, order, page and
// filter. A label's counts, which read the label's confidential issues for
// a caller below Reporter, equal the project list's X-Total for the label.
func TestListMineMatchesScan(t *testing.T) {
	var svc *internal.Service
	var lookup auth.UserLookup
	s := start(t, fennectest.WithExtract(&svc, &lookup))
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	dave := s.CreateUser(t, "dave")
	admin := s.CreateUser(t, "boss", fennectest.Admin())
	users := []*fennectest.User{alice, bob, carol, dave}
	projects := []*gitlab.Project{
		stocktest.NewProject(t, alice.Client, "pub", "public"),
		stocktest.NewProject(t, alice.Client, "int", "internal"),
		stocktest.NewProject(t, alice.Client, "priv", "private"),
		stocktest.NewProject(t, bob.Client, "bobs", "private"),
	}
	stocktest.AddMember(t, alice.Client, projects[2].ID, bob.ID, gitlab.GuestPermissions)
	stocktest.AddMember(t, alice.Client, projects[2].ID, carol.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, alice.Client, projects[0].ID, dave.ID, gitlab.GuestPermissions)
	stocktest.AddMember(t, bob.Client, projects[3].ID, alice.ID, gitlab.DeveloperPermissions)

	rng := rand.New(rand.NewSource(33))
	words := []string{"alpha", "beta", "gamma", "Delta", "épée", "ab"}
	labelSets := [][]string{nil, {"bug"}, {"feat"}, {"bug", "feat"}, {"doc"}}
	type made struct{ project, iid int64 }
	var all []made
	for op := 0; op < 220; op++ {
		u := users[rng.Intn(len(users))]
		p := projects[rng.Intn(len(projects))]
		switch k := rng.Intn(10); {
		case k < 5 || len(all) == 0:
			body := map[string]any{
				"title":        words[rng.Intn(len(words))] + " " + strconv.Itoa(op),
				"description":  words[rng.Intn(len(words))],
				"confidential": rng.Intn(3) == 0,
				"labels":       labelSets[rng.Intn(len(labelSets))],
				"assignee_ids": []int64{users[rng.Intn(len(users))].ID},
			}
			switch rng.Intn(8) {
			case 0:
				body["created_at"] = "1965-03-0" + strconv.Itoa(1+rng.Intn(3)) + "T10:00:00Z"
			case 1:
				body["created_at"] = "2016-01-01T00:00:00Z" // ties, ordered by id
			}
			r := s.Call(t, u.Token, http.MethodPost, projectPath(p.ID, "/issues"), body)
			if r.Status == http.StatusCreated {
				iid, err := strconv.ParseInt(fmt.Sprint(r.Object(t)["iid"]), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, made{p.ID, iid})
			}
		case k < 9:
			m := all[rng.Intn(len(all))]
			body := map[string]any{}
			switch rng.Intn(6) {
			case 0:
				body["state_event"] = []string{"close", "reopen"}[rng.Intn(2)]
			case 1:
				body["labels"] = labelSets[rng.Intn(len(labelSets))]
			case 2:
				body["assignee_ids"] = []int64{users[rng.Intn(len(users))].ID}
			case 3:
				body["confidential"] = rng.Intn(2) == 0
			case 4:
				body["title"] = words[rng.Intn(len(words))] + " again " + strconv.Itoa(op)
			default:
				body["state_event"] = "close"
			}
			s.Call(t, users[rng.Intn(len(users))].Token, http.MethodPut, issuePath(m.project, m.iid), body)
		default:
			n := rng.Intn(len(all))
			m := all[n]
			if r := s.Call(t, u.Token, http.MethodDelete, issuePath(m.project, m.iid), nil); r.Status == http.StatusNoContent {
				all = append(all[:n], all[n+1:]...)
			}
		}
		fennectest.NextMillisecond()
	}
	if len(all) < 50 {
		t.Fatalf("only %d issues made", len(all))
	}

	ctxs := map[string]context.Context{"anonymous": context.Background()}
	for _, u := range append(users, admin) {
		ctxs[u.Username] = fennectest.AsUser(t, lookup, u.ID)
	}
	scopes := []string{"", "created-by-me", "assigned_to_me", "all"}
	filters := []issue.ListQuery{{}, {Labels: []string{"bug"}}, {Labels: []string{"None"}}, {Search: "alp"},
		{Search: "ÉPÉE"}, {Search: "ab"}, {Search: "zzz"}, {Milestone: "None"}, {IIDs: []int64{1, 2, 3}}}
	pages := [][2]int{{0, 100}, {0, 5}, {3, 4}, {40, 20}, {500, 20}, {0, 0}}
	// A random sample of the combinations (all of them take minutes
	// under -race).
	names := make([]string, 0, len(ctxs))
	for who := range ctxs {
		names = append(names, who)
	}
	slices.Sort(names)
	pick := func(list []string) string { return list[rng.Intn(len(list))] }
	checked := 0
	for range 2500 {
		who := pick(names)
		fi := rng.Intn(len(filters))
		pg := pages[rng.Intn(len(pages))]
		q := filters[fi]
		q.Scope, q.State, q.OrderBy, q.Sort = pick(scopes), pick([]string{"", "all", "opened", "closed"}),
			pick([]string{"", "created_at", "updated_at"}), pick([]string{"", "asc", "desc"})
		q.Offset, q.Limit = pg[0], pg[1]
		got, n, err := svc.ListMine(ctxs[who], q)
		want, wn, werr := svc.ListMineScan(ctxs[who], q)
		what := fmt.Sprintf("%s scope=%q state=%q order=%q sort=%q filter %d page %v", who, q.Scope, q.State, q.OrderBy, q.Sort, fi, pg)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s: error %v, scan %v", what, err, werr)
		}
		if n != wn || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: total %d, scan %d\n got %v\nwant %v", what, n, wn, iidsOf(got), iidsOf(want))
		}
		if len(want) > 0 {
			checked++
		}
	}
	if checked < 500 {
		t.Fatalf("only %d non-empty comparisons", checked)
	}

	// Label counts as each caller sees them equal the list's totals.
	for _, u := range append(users, admin) {
		for _, p := range projects {
			r := s.Call(t, u.Token, http.MethodGet, projectPath(p.ID, "/labels?with_counts=true"), nil)
			if r.Status != http.StatusOK {
				continue
			}
			for _, l := range r.List(t) {
				name := l["name"].(string)
				for state, field := range map[string]string{"opened": "open_issues_count", "closed": "closed_issues_count"} {
					lr := s.Call(t, u.Token, http.MethodGet, projectPath(p.ID, "/issues?labels="+q(name)+"&state="+state), nil).Expect(t, http.StatusOK, "")
					if got, want := fmt.Sprint(l[field]), lr.Header.Get("X-Total"); got != want {
						t.Errorf("%s, project %s, label %s: %s %s, list X-Total %s", u.Username, p.Name, name, field, got, want)
					}
				}
			}
		}
	}
}

func iidsOf(list []issue.Issue) []string {
	out := make([]string, len(list))
	for n, i := range list {
		out[n] = fmt.Sprintf("%d#%d", i.ProjectID, i.IID)
	}
	return out
}
