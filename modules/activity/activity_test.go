package activity_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/activity"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

var eventKeys = []string{"title", "project_id", "action_name", "target_id", "target_type", "target_title",
	"author_id", "author", "author_username", "data", "created_at"}

var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestProjectEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	pub := project(t, alice.Client, "Open Thing", "public")
	commit(t, alice.Client, pub.ID, "one")
	priv := project(t, alice.Client, "secret", "private")
	s.Drain(t)

	t.Run("the spec's shape, newest first", func(t *testing.T) {
		list := get(t, s, "", "/api/v4/projects/"+store.IDString(pub.ID)+"/events").list(t)
		wantFeed(t, "anonymous, public project", list, at("pushed new", pub.ID), at("created", pub.ID))
		for _, e := range list {
			want := eventKeys
			if e["action_name"] == "pushed new" {
				want = append(slices.Clone(eventKeys), "push_data")
			}
			if got := keys(e); !slices.Equal(got, sortedCopy(want)) {
				t.Fatalf("event keys %v, want exactly %v", got, sortedCopy(want))
			}
			for _, k := range []string{"title", "target_id", "target_type", "target_title", "data"} {
				if k == "data" && e["action_name"] == "pushed new" {
					if d, _ := e["data"].(map[string]any); d["ref"] != "refs/heads/master" || d["before"] != zeros {
						t.Fatalf("push data %v", e["data"])
					}
					continue
				}
				if e[k] != nil {
					t.Fatalf("%s = %v, want null", k, e[k])
				}
			}
			if e["author_id"].(json.Number).String() != store.IDString(alice.ID) || e["author_username"] != "alice" {
				t.Fatalf("author %v / %v", e["author_id"], e["author_username"])
			}
			author := e["author"].(map[string]any)
			if got := keys(author); !slices.Equal(got, []string{"avatar_url", "id", "name", "state", "username", "web_url"}) {
				t.Fatalf("author keys %v", got)
			}
			if author["username"] != "alice" || author["name"] != "User alice" || author["state"] != "active" ||
				author["web_url"] != s.URL+"/alice" || author["id"].(json.Number).String() != store.IDString(alice.ID) {
				t.Fatalf("author %v", author)
			}
			if av, _ := author["avatar_url"].(string); av == "" {
				t.Fatalf("avatar_url %v", author["avatar_url"])
			}
			if ts, _ := e["created_at"].(string); !timestamp.MatchString(ts) {
				t.Fatalf("created_at %v", e["created_at"])
			}
		}
		if list[0]["created_at"].(string) < list[1]["created_at"].(string) {
			t.Fatalf("not newest first: %v then %v", list[0]["created_at"], list[1]["created_at"])
		}
	})
	t.Run("by URL-encoded path", func(t *testing.T) {
		list := get(t, s, bob.Token, "/api/v4/projects/"+url.PathEscape("alice/"+pub.Path)+"/events").list(t)
		wantFeed(t, "by path", list, at("pushed new", pub.ID), at("created", pub.ID))
	})
	t.Run("a private project is 404 to those who cannot see it", func(t *testing.T) {
		path := "/api/v4/projects/" + store.IDString(priv.ID) + "/events"
		get(t, s, "", path).expect(t, http.StatusNotFound, notFoundProject)
		get(t, s, bob.Token, path).expect(t, http.StatusNotFound, notFoundProject)
		get(t, s, bob.Token, "/api/v4/projects/"+url.PathEscape("alice/secret")+"/events").expect(t, http.StatusNotFound, notFoundProject)
		get(t, s, "", "/api/v4/projects/999999/events").expect(t, http.StatusNotFound, notFoundProject)
		wantFeed(t, "owner", get(t, s, alice.Token, path).list(t), at("created", priv.ID))
		wantFeed(t, "admin", get(t, s, s.RootToken, path).list(t), at("created", priv.ID))
	})
	t.Run("pagination", func(t *testing.T) {
		for i := 3; i <= 5; i++ {
			commit(t, alice.Client, pub.ID, "file"+store.IDString(int64(i)))
		}
		s.Drain(t)
		base := "/api/v4/projects/" + store.IDString(pub.ID) + "/events"
		r := get(t, s, "", base)
		r.pageHeaders(t, 5, 1, 20, 1, "", "")
		r = get(t, s, "", base+"?per_page=2")
		r.pageHeaders(t, 5, 3, 2, 1, "2", "")
		wantFeed(t, "page 1", r.list(t), at("pushed to", pub.ID), at("pushed to", pub.ID))
		r = get(t, s, "", base+"?per_page=2&page=3")
		r.pageHeaders(t, 5, 3, 2, 3, "", "2")
		wantFeed(t, "page 3", r.list(t), at("created", pub.ID))
		r = get(t, s, "", base+"?per_page=2&page=9")
		r.expect(t, http.StatusOK, `[]`)
	})
	t.Run("client-go", func(t *testing.T) {
		list, resp, err := bob.Client.Events.ListProjectVisibleEvents(pub.ID, &gitlab.ListProjectVisibleEventsOptions{ListOptions: gitlab.ListOptions{PerPage: 2}})
		if err != nil || len(list) != 2 || resp.TotalItems != 5 || resp.NextPage != 2 {
			t.Fatalf("%v %v %+v", err, list, resp)
		}
		if e := list[0]; e.ActionName != "pushed to" || e.ProjectID != pub.ID || e.AuthorID != alice.ID ||
			e.Author.Username != "alice" || e.AuthorUsername != "alice" || e.CreatedAt == "" {
			t.Fatalf("%+v", e)
		}
		if _, resp, err := bob.Client.Events.ListProjectVisibleEvents(priv.ID, nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("private project through client-go: %v", err)
		}
	})
}

func TestUserEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	outsider := s.CreateUser(t, "outsider", fennectest.External())
	pub := project(t, alice.Client, "public-one", "public")
	priv := project(t, alice.Client, "private-one", "private")
	inner := project(t, alice.Client, "internal-one", "internal")
	commit(t, alice.Client, pub.ID, "one")
	own := project(t, bob.Client, "bobs", "public") // not alice's: never in her feed
	s.Drain(t)
	feed := "/api/v4/users/" + store.IDString(alice.ID) + "/events"

	t.Run("each caller sees the events of the projects they may see, newest first", func(t *testing.T) {
		everything := []string{at("pushed new", pub.ID), at("created", inner.ID), at("created", priv.ID), at("created", pub.ID)}
		wantFeed(t, "alice herself", get(t, s, alice.Token, feed).list(t), everything...)
		wantFeed(t, "admin", get(t, s, s.RootToken, feed).list(t), everything...)
		wantFeed(t, "bob", get(t, s, bob.Token, feed).list(t), at("pushed new", pub.ID), at("created", inner.ID), at("created", pub.ID))
		wantFeed(t, "external user", get(t, s, outsider.Token, feed).list(t), at("pushed new", pub.ID), at("created", pub.ID))
		wantFeed(t, "anonymous", get(t, s, "", feed).list(t), at("pushed new", pub.ID), at("created", pub.ID))
		wantFeed(t, "bob's own", get(t, s, "", "/api/v4/users/"+store.IDString(bob.ID)+"/events").list(t), at("created", own.ID))
	})
	t.Run("pagination counts only what the caller sees", func(t *testing.T) {
		r := get(t, s, bob.Token, feed+"?per_page=2")
		r.pageHeaders(t, 3, 2, 2, 1, "2", "")
		r = get(t, s, bob.Token, feed+"?per_page=2&page=2")
		r.pageHeaders(t, 3, 2, 2, 2, "", "1")
		wantFeed(t, "bob page 2", r.list(t), at("created", pub.ID))
		get(t, s, alice.Token, feed).pageHeaders(t, 4, 1, 20, 1, "", "")
		get(t, s, "", feed+"?per_page=1&page=2").pageHeaders(t, 2, 2, 1, 2, "", "1")
	})
	t.Run("by username; unknown users are 404", func(t *testing.T) {
		wantFeed(t, "by username", get(t, s, "", "/api/v4/users/alice/events").list(t), at("pushed new", pub.ID), at("created", pub.ID))
		for _, token := range []string{"", bob.Token, s.RootToken} {
			get(t, s, token, "/api/v4/users/987654/events").expect(t, http.StatusNotFound, notFoundUser)
			get(t, s, token, "/api/v4/users/nobody-here/events").expect(t, http.StatusNotFound, notFoundUser)
		}
	})
	t.Run("a read_user token may read it", func(t *testing.T) {
		reader := s.CreateUser(t, "reader", fennectest.Scopes("read_user"))
		wantFeed(t, "read_user", get(t, s, reader.Token, feed).list(t), at("pushed new", pub.ID), at("created", inner.ID), at("created", pub.ID))
	})
	t.Run("client-go", func(t *testing.T) {
		list, resp, err := bob.Client.Users.ListUserContributionEvents(alice.ID, &gitlab.ListContributionEventsOptions{ListOptions: gitlab.ListOptions{PerPage: 2}})
		if err != nil || len(list) != 2 || resp.TotalItems != 3 || resp.TotalPages != 2 {
			t.Fatalf("%v %v %+v", err, list, resp)
		}
		if e := list[0]; e.ActionName != "pushed new" || e.ProjectID != pub.ID || e.Author.Username != "alice" || e.CreatedAt == nil ||
			time.Since(*e.CreatedAt) > time.Minute {
			t.Fatalf("%+v", e)
		}
		if _, resp, err := bob.Client.Users.ListUserContributionEvents(987654, nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("unknown user: %v", err)
		}
	})
	t.Run("GET /events is the caller's own feed, and the lists filter", func(t *testing.T) {
		// GET /events was missing (a 404); the filters were not read.
		everything := []string{at("pushed new", pub.ID), at("created", inner.ID), at("created", priv.ID), at("created", pub.ID)}
		wantFeed(t, "GET /events", get(t, s, alice.Token, "/api/v4/events").list(t), everything...)
		wantFeed(t, "bob's GET /events", get(t, s, bob.Token, "/api/v4/events").list(t), at("created", own.ID))
		get(t, s, "", "/api/v4/events").expect(t, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)
		today := time.Now().UTC().Format("2006-01-02")
		for query, want := range map[string][]string{
			"action=pushed":                    {at("pushed new", pub.ID)},
			"action=created":                   {at("created", inner.ID), at("created", priv.ID), at("created", pub.ID)},
			"action=merged":                    nil,
			"target_type=project":              nil, // a project's creation has no target
			"sort=asc":                         {at("created", pub.ID), at("created", priv.ID), at("created", inner.ID), at("pushed new", pub.ID)},
			"before=2000-01-01":                nil,
			"after=2000-01-01":                 everything,
			"after=" + today:                   nil, // after a day is from its end
			"before=2999-01-01&action=created": {at("created", inner.ID), at("created", priv.ID), at("created", pub.ID)},
		} {
			wantFeed(t, "GET /events?"+query, get(t, s, alice.Token, "/api/v4/events?"+query).list(t), want...)
		}
		wantFeed(t, "user events, filtered", get(t, s, bob.Token, feed+"?action=pushed").list(t), at("pushed new", pub.ID))
		wantFeed(t, "project events, filtered", get(t, s, alice.Token, "/api/v4/projects/"+store.IDString(pub.ID)+"/events?action=created").list(t),
			at("created", pub.ID))
		get(t, s, alice.Token, "/api/v4/events?before=yesterday").expect(t, http.StatusBadRequest, `{"error":"before is invalid"}`)
		get(t, s, alice.Token, "/api/v4/events?action=exploded").expect(t, http.StatusBadRequest, `{"error":"action does not have a valid value"}`)
		get(t, s, alice.Token, "/api/v4/events?per_page=1&action=created").pageHeaders(t, 3, 3, 1, 1, "2", "")
	})
	t.Run("a deleted project's events are gone; its owner keeps a tombstone", func(t *testing.T) {
		if _, err := alice.Client.Projects.DeleteProject(pub.ID, nil); err != nil {
			t.Fatal(err)
		}
		s.Drain(t)
		wantFeed(t, "bob", get(t, s, bob.Token, feed).list(t), at("created", inner.ID))
		wantFeed(t, "anonymous", get(t, s, "", feed).list(t))
		get(t, s, "", feed).pageHeaders(t, 0, 1, 20, 1, "", "")
		list := get(t, s, alice.Token, feed).list(t)
		wantFeed(t, "alice", list, "deleted@-", at("created", inner.ID), at("created", priv.ID))
		if e := list[0]; e["target_type"] != "Project" || e["target_id"].(json.Number).String() != store.IDString(pub.ID) || e["target_title"] != nil {
			t.Fatalf("tombstone %v", e)
		}
		wantFeed(t, "admin", get(t, s, s.RootToken, feed).list(t), "deleted@-", at("created", inner.ID), at("created", priv.ID))
		get(t, s, alice.Token, "/api/v4/projects/"+store.IDString(pub.ID)+"/events").expect(t, http.StatusNotFound, notFoundProject)
	})
	t.Run("a deleted user's events go with them", func(t *testing.T) {
		if _, err := s.Client.Users.DeleteUser(alice.ID); err != nil {
			t.Fatal(err)
		}
		s.Drain(t)
		get(t, s, s.RootToken, feed).expect(t, http.StatusNotFound, notFoundUser)
		if _, resp, err := s.Client.Events.ListProjectVisibleEvents(priv.ID, nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("the deleted user's personal project still answers: %v", err)
		}
		wantFeed(t, "bob untouched", get(t, s, "", "/api/v4/users/"+store.IDString(bob.ID)+"/events").list(t), at("created", own.ID))
	})
}

// Delivery is at least once: every handler must survive an event twice.
func TestRedeliveryAndMembership(t *testing.T) {
	t.Parallel()
	// A test-only target type: "Note" belongs to the collab module,
	// which hides entries of notes that do not exist.
	s := start(t, withKinds(target.Kind{Type: "Remark"}))
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	p := project(t, alice.Client, "team", "private")
	s.Drain(t)
	events := "/api/v4/projects/" + store.IDString(p.ID) + "/events"

	t.Run("created twice is one entry", func(t *testing.T) {
		s.publish(t, projects.ProjectEvent{Action: "created", ProjectID: p.ID, UserID: alice.ID})
		wantFeed(t, "after a redelivery", get(t, s, alice.Token, events).list(t), at("created", p.ID))
	})
	t.Run("joined and left, each once", func(t *testing.T) {
		joined := projects.MemberEvent{Action: "joined", ProjectID: p.ID, UserID: bob.ID, AuthorID: alice.ID}
		left := projects.MemberEvent{Action: "left", ProjectID: p.ID, UserID: bob.ID, AuthorID: alice.ID}
		s.publish(t, joined, joined)
		s.publish(t, joined)
		list := get(t, s, alice.Token, events).list(t)
		wantFeed(t, "joined", list, at("joined", p.ID), at("created", p.ID))
		if list[0]["author_username"] != "bob" {
			t.Fatalf("the member is the author of joined: %v", list[0]["author_username"])
		}
		s.publish(t, left, left)
		s.publish(t, joined)
		wantFeed(t, "left, then joined again", get(t, s, alice.Token, events).list(t),
			at("joined", p.ID), at("left", p.ID), at("joined", p.ID), at("created", p.ID))
		// Group memberships have no project feed.
		s.publish(t, projects.MemberEvent{Action: "joined", GroupID: 5, UserID: carol.ID, AuthorID: alice.ID})
		wantFeed(t, "carol", get(t, s, s.RootToken, "/api/v4/users/"+store.IDString(carol.ID)+"/events").list(t))
	})
	t.Run("bob's feed shows the private project to those who see it", func(t *testing.T) {
		feed := "/api/v4/users/" + store.IDString(bob.ID) + "/events"
		wantFeed(t, "carol", get(t, s, carol.Token, feed).list(t))
		wantFeed(t, "admin", get(t, s, s.RootToken, feed).list(t), at("joined", p.ID), at("left", p.ID), at("joined", p.ID))
	})
	t.Run("records from other modules, with push data and keys", func(t *testing.T) {
		data := json.RawMessage(`{"before":"` + zeros + `","after":"abc","ref":"refs/heads/master","total_commits_count":1}`)
		push := activity.Event{ProjectID: p.ID, AuthorID: alice.ID, ActionName: "pushed to", Data: data, Key: "repository.push:1"}
		note := activity.Event{ProjectID: p.ID, AuthorID: alice.ID, ActionName: "commented on", TargetID: 9, TargetType: "Remark",
			TargetTitle: "Fix it", Note: json.RawMessage(`{"id":9,"body":"hi"}`), Key: "notes.note:9"}
		s.publish(t, push, push, note)
		s.publish(t, note)
		list := get(t, s, alice.Token, events).list(t)
		wantFeed(t, "records", list[:2], at("commented on", p.ID), at("pushed to", p.ID))
		if list[0]["target_type"] != "Remark" || list[0]["target_title"] != "Fix it" || list[0]["target_id"].(json.Number).String() != "9" ||
			list[0]["data"] != nil || list[0]["note"] == nil {
			t.Fatalf("note event %v", list[0])
		}
		if d, _ := list[1]["data"].(map[string]any); d["ref"] != "refs/heads/master" || d["after"] != "abc" {
			t.Fatalf("push data %v", list[1]["data"])
		}
		if _, ok := list[1]["note"]; ok {
			t.Fatalf("note key on a push event: %v", list[1])
		}
	})
	t.Run("a late event of a deleted project adds nothing", func(t *testing.T) {
		if _, err := alice.Client.Projects.DeleteProject(p.ID, nil); err != nil {
			t.Fatal(err)
		}
		s.Drain(t)
		s.publish(t, projects.ProjectEvent{Action: "updated", ProjectID: p.ID, UserID: alice.ID},
			projects.MemberEvent{Action: "left", ProjectID: p.ID, UserID: bob.ID, AuthorID: alice.ID},
			projects.ProjectEvent{Action: "deleted", ProjectID: p.ID, UserID: alice.ID})
		wantFeed(t, "bob", get(t, s, s.RootToken, "/api/v4/users/"+store.IDString(bob.ID)+"/events").list(t))
		wantFeed(t, "alice", get(t, s, alice.Token, "/api/v4/users/"+store.IDString(alice.ID)+"/events").list(t), "deleted@-")
		s.publish(t, identity.UserDeleted{UserID: alice.ID, Username: "alice"})
		wantFeed(t, "alice's entries go with her", get(t, s, s.RootToken, "/api/v4/users/"+store.IDString(alice.ID)+"/events").list(t))
	})
}

const zeros = "0000000000000000000000000000000000000000"

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// The members API publishes joins and leaves; they reach both feeds.
func TestMembershipThroughTheMembersAPI(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	p := project(t, alice.Client, "team", "private")
	if _, resp, err := alice.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{
		UserID: bob.ID, AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			t.Skip("needs members API")
		}
		t.Fatal(err)
	}
	s.Drain(t)
	feed := "/api/v4/users/" + store.IDString(bob.ID) + "/events"
	wantFeed(t, "bob, by himself", get(t, s, bob.Token, feed).list(t), at("joined", p.ID))
	wantFeed(t, "bob, seen by carol", get(t, s, carol.Token, feed).list(t))
	wantFeed(t, "the project", get(t, s, bob.Token, "/api/v4/projects/"+store.IDString(p.ID)+"/events").list(t), at("joined", p.ID), at("created", p.ID))
	if _, err := alice.Client.ProjectMembers.DeleteProjectMember(p.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	wantFeed(t, "after leaving, seen by alice", get(t, s, alice.Token, feed).list(t), at("left", p.ID), at("joined", p.ID))
	wantFeed(t, "after leaving, bob no longer sees the project", get(t, s, bob.Token, feed).list(t))
}
