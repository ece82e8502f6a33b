package identity_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

func TestUserActivities(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t) // root has logged in through POST /session
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob") // never logs in
	before := utcDay(time.Now())
	s.Login(t, "alice", alice.Password)
	after := utcDay(time.Now())
	isToday := func(d any) bool { return d == before || d == after }

	t.Run("signed-in users appear with today's date", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/activities", nil)
		r.expectStatus(t, http.StatusOK)
		list := r.array(t)
		if got := usernames(list); !slices.Equal(got, []string{"root", "alice"}) {
			t.Fatalf("activities of %v, want [root alice]", got)
		}
		for _, a := range list {
			wantExactKeys(t, "activity", a, []string{"username", "last_activity_on", "last_activity_at"})
			if !isToday(a["last_activity_on"]) || a["last_activity_at"] != a["last_activity_on"] {
				t.Fatalf("activity %v, want today (%s)", a, before)
			}
		}
		r.pageHeaders(t, 2, 1, 20, 1, "", "")
		page := call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/activities?per_page=1&page=2", nil)
		if got := usernames(page.array(t)); !slices.Equal(got, []string{"alice"}) {
			t.Fatalf("page 2: %v", got)
		}
	})
	t.Run("the user view shows it too", func(t *testing.T) {
		u := call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/"+store.IDString(alice.ID), nil).object(t)
		if !isToday(u["last_activity_on"]) {
			t.Fatalf("last_activity_on %v", u["last_activity_on"])
		}
		if u := call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/"+store.IDString(bob.ID), nil).object(t); u["last_activity_on"] != nil {
			t.Fatalf("bob never signed in but has last_activity_on %v", u["last_activity_on"])
		}
	})
	t.Run("client-go", func(t *testing.T) {
		list, _, err := s.Client.Users.GetUserActivities(nil)
		if err != nil || len(list) != 2 || list[1].Username != "alice" || list[1].LastActivityOn == nil || !isToday(list[1].LastActivityOn.String()) {
			t.Fatalf("%v %v", err, list)
		}
		today, _ := time.Parse("2006-01-02", after)
		list, _, err = s.Client.Users.GetUserActivities(&gitlab.GetUserActivitiesOptions{From: gitlab.Ptr(gitlab.ISOTime(today))})
		if err != nil || len(list) != 2 {
			t.Fatalf("from=today: %v %v", err, list)
		}
	})
	t.Run("from", func(t *testing.T) {
		tomorrow := utcDay(time.Now().Add(25 * time.Hour))
		r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/activities?from="+tomorrow, nil)
		r.expect(t, http.StatusOK, `[]`)
		if r.Header.Get("X-Total") != "0" {
			t.Fatalf("X-Total %q", r.Header.Get("X-Total"))
		}
		r = call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/activities?from=2000-01-01", nil)
		if got := usernames(r.array(t)); !slices.Equal(got, []string{"root", "alice"}) {
			t.Fatalf("from=2000-01-01: %v", got)
		}
		for _, bad := range []string{"garbage", "2017-13-01", "yesterday"} {
			call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/activities?from="+bad, nil).expect(t, http.StatusBadRequest, `{"error":"from is invalid"}`)
		}
	})
	t.Run("administrators only", func(t *testing.T) {
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/activities", nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodGet, "/api/v4/user/activities", nil).expect(t, http.StatusUnauthorized, unauthorized)
		if _, resp, err := alice.Client.Users.GetUserActivities(nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("client-go as non-admin: %v", err)
		}
	})
	t.Run("a later sign-in keeps one entry", func(t *testing.T) {
		s.Login(t, "bob", bob.Password)
		s.Login(t, "bob", bob.Password)
		r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/activities", nil)
		if got := usernames(r.array(t)); !slices.Equal(got, []string{"root", "alice", "bob"}) {
			t.Fatalf("%v", got)
		}
	})
}

func TestUserEvents(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	for _, token := range []string{"", alice.Token, s.RootToken} {
		r := call(t, s, token, http.MethodGet, "/api/v4/users/"+store.IDString(alice.ID)+"/events", nil)
		r.expect(t, http.StatusOK, `[]`)
		r.pageHeaders(t, 0, 1, 20, 1, "", "")
		call(t, s, token, http.MethodGet, "/api/v4/users/987654/events", nil).expect(t, http.StatusNotFound, notFoundUser)
	}
}
