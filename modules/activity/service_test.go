package activity_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives entry.Service as a page or an embedder
// would, with no request behind it: who sees which entries of a project's
// and a user's feed, the filters, and the tombstone a deleted project
// leaves its author.
func TestServiceWithoutHTTP(t *testing.T) {
	var svc entry.Service
	var users auth.UserLookup
	e := start(t, fennectest.WithExtract(&svc, &users))
	alice, bob, carol := e.CreateUser(t, "alice"), e.CreateUser(t, "bob"), e.CreateUser(t, "carol")
	admin := e.CreateUser(t, "warden", fennectest.Admin())
	asAlice, asBob, asCarol := fennectest.AsUser(t, users, alice.ID), fennectest.AsUser(t, users, bob.ID), fennectest.AsUser(t, users, carol.ID)
	asAdmin := fennectest.AsUser(t, users, admin.ID)

	// A private project with bob as a guest, a push, an issue and a
	// confidential one; and a public project. Entries are recorded as
	// their events are delivered, by subscribers of different topics: a
	// drain after each keeps the feed in the order of the steps.
	secret := stocktest.NewProject(t, alice.Client, "secret", "private")
	e.Drain(t)
	stocktest.AddMember(t, alice.Client, secret.ID, bob.ID, gitlab.GuestPermissions)
	e.Drain(t)
	stocktest.CommitFiles(t, alice.Client, secret.ID, "master", "first", map[string]string{"README.md": "hi"})
	e.Drain(t)
	bug := stocktest.NewIssue(t, alice.Client, secret.ID, "bug")
	hush, _, err := alice.Client.Issues.CreateIssue(secret.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("hush"), Confidential: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	open := stocktest.NewProject(t, alice.Client, "open", "public")
	e.Drain(t)
	sec, pub := strconv.FormatInt(secret.ID, 10), strconv.FormatInt(open.ID, 10)
	at := func(what string, p *gitlab.Project) string { return what + "@" + p.Path }
	all := []string{at("opened hush", secret), at("opened bug", secret), at("pushed new", secret), at("joined", secret), at("created", secret)}
	// feedOf names entries "action [target title]@project path".
	feedOf := func(list []entry.Entry) []string {
		out := make([]string, 0, len(list))
		for _, en := range list {
			s := string(en.Action)
			if en.TargetTitle != "" {
				s += " " + en.TargetTitle
			}
			switch en.ProjectID {
			case secret.ID:
				s += "@" + secret.Path
			case open.ID:
				s += "@" + open.Path
			default:
				s += fmt.Sprintf("@%d", en.ProjectID)
			}
			out = append(out, s)
		}
		return out
	}
	want := func(t *testing.T, what string, list []entry.Entry, total int, err error, wantTotal int, names ...string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := feedOf(list); !slices.Equal(got, names) || total != wantTotal {
			t.Fatalf("%s: %q (total %d), want %q (total %d)", what, got, total, names, wantTotal)
		}
	}

	t.Run("a project's feed is for its readers; targets for who may see them", func(t *testing.T) {
		list, n, err := svc.ProjectEntries(asAlice, sec, entry.Filter{}, 0, 20)
		want(t, "the owner", list, n, err, 5, all...)
		if push := list[2]; push.AuthorID != alice.ID || push.TargetType != "" || push.TargetID != 0 || push.Data == nil || push.Note != nil {
			t.Fatalf("the push entry: %+v", push)
		}
		if opened := list[1]; opened.Action != feed.Opened || opened.TargetType != "Issue" || opened.TargetID != bug.ID || opened.AuthorID != alice.ID || opened.Data != nil {
			t.Fatalf("the issue's entry: %+v", opened)
		}
		if list[0].TargetID != hush.ID || list[0].TargetType != "Issue" {
			t.Fatalf("the confidential issue's entry: %+v", list[0])
		}
		if joined := list[3]; joined.AuthorID != bob.ID || joined.Action != feed.Joined {
			t.Fatalf("the join: %+v", joined)
		}
		// A guest may read the project but not the confidential issue:
		// the check runs on the page, so the total still counts it.
		list, n, err = svc.ProjectEntries(asBob, sec, entry.Filter{}, 0, 20)
		want(t, "a guest", list, n, err, 5, all[1:]...)
		// By full path as well as by id.
		list, n, err = svc.ProjectEntries(asBob, "alice/secret", entry.Filter{}, 0, 1)
		want(t, "a guest, by path, one", list, n, err, 5)
		// A stranger is told the private project does not exist.
		if _, _, err := svc.ProjectEntries(asCarol, sec, entry.Filter{}, 0, 20); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("a stranger reads a private project's feed: %v", err)
		}
		if _, _, err := svc.ProjectEntries(asAlice, "alice/nothing", entry.Filter{}, 0, 20); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("an unknown project: %v", err)
		}
		list, n, err = svc.ProjectEntries(asCarol, pub, entry.Filter{}, 0, 20)
		want(t, "a stranger, public project", list, n, err, 1, at("created", open))
	})

	t.Run("a user's feed keeps the projects the caller may read", func(t *testing.T) {
		mine := append([]string{at("created", open)}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == at("joined", secret) })...)
		list, n, err := svc.UserEntries(asAlice, strconv.FormatInt(alice.ID, 10), entry.Filter{}, 0, 20)
		want(t, "alice's own, by id", list, n, err, 5, mine...)
		list, n, err = svc.OwnEntries(asAlice, entry.Filter{}, 0, 20)
		want(t, "alice's own feed", list, n, err, 5, mine...)
		list, n, err = svc.UserEntries(asBob, "alice", entry.Filter{}, 0, 20)
		want(t, "bob reads alice's, by username", list, n, err, 5, slices.Delete(slices.Clone(mine), 1, 2)...)
		list, n, err = svc.UserEntries(asCarol, "alice", entry.Filter{}, 0, 20)
		want(t, "a stranger reads alice's", list, n, err, 1, at("created", open))
		list, n, err = svc.UserEntries(asCarol, "bob", entry.Filter{}, 0, 20)
		want(t, "a stranger reads bob's", list, n, err, 0)
		list, n, err = svc.OwnEntries(asBob, entry.Filter{}, 0, 20)
		want(t, "bob's own", list, n, err, 1, at("joined", secret))
		for _, who := range []string{"nobody-here", "987654"} {
			if _, _, err := svc.UserEntries(asAlice, who, entry.Filter{}, 0, 20); !errors.Is(err, identity.ErrUserNotFound) {
				t.Fatalf("unknown user %s: %v", who, err)
			}
		}
	})

	t.Run("filters, order and windows", func(t *testing.T) {
		today := time.Now().UTC().Format("2006-01-02")
		for _, c := range []struct {
			f     entry.Filter
			names []string
		}{
			{entry.Filter{Action: "created"}, []string{all[0], all[1], all[4]}}, // an issue's "opened" is created
			{entry.Filter{Action: "pushed"}, []string{at("pushed new", secret)}},
			{entry.Filter{Action: "joined"}, []string{at("joined", secret)}},
			{entry.Filter{Action: "merged"}, []string{}},
			{entry.Filter{Action: "exploded"}, []string{}}, // refused by the HTTP adapter only
			{entry.Filter{TargetType: "issue"}, all[:2]},
			{entry.Filter{TargetType: "merge_request"}, []string{}},
			{entry.Filter{Action: "created", TargetType: "issue"}, all[:2]},
			{entry.Filter{Ascending: true}, []string{all[4], all[3], all[2], all[1], all[0]}},
			{entry.Filter{Before: "2000-01-01"}, []string{}},
			{entry.Filter{Before: "2999-01-01"}, all},
			{entry.Filter{After: "2000-01-01"}, all},
			{entry.Filter{After: today}, []string{}}, // after a day is from its end
		} {
			list, n, err := svc.ProjectEntries(asAlice, sec, c.f, 0, 20)
			want(t, fmt.Sprintf("%+v", c.f), list, n, err, len(c.names), c.names...)
		}
		list, n, err := svc.ProjectEntries(asAlice, sec, entry.Filter{}, 1, 2)
		want(t, "offset 1, limit 2", list, n, err, 5, all[1:3]...)
		list, n, err = svc.ProjectEntries(asAlice, sec, entry.Filter{Ascending: true}, 4, 2)
		want(t, "the last of ascending", list, n, err, 5, all[0])
		list, n, err = svc.UserEntries(asBob, "alice", entry.Filter{Action: "pushed"}, 0, 20)
		want(t, "a user's feed, filtered", list, n, err, 1, at("pushed new", secret))
		for _, c := range []struct {
			f     entry.Filter
			param string
		}{{entry.Filter{Before: "yesterday"}, "before"}, {entry.Filter{After: "2026-13-01"}, "after"}, {entry.Filter{Before: "2026-01-01", After: "1/1/2026"}, "after"}} {
			var de *entry.DateError
			if _, _, err := svc.ProjectEntries(asAlice, sec, c.f, 0, 20); !errors.Is(err, entry.ErrInvalidDate) || !errors.As(err, &de) || de.Param != c.param {
				t.Fatalf("%+v: %v", c.f, err)
			}
			if _, _, err := svc.OwnEntries(asAlice, c.f, 0, 20); !errors.Is(err, entry.ErrInvalidDate) || !errors.As(err, &de) || de.Param != c.param {
				t.Fatalf("own feed, %+v: %v", c.f, err)
			}
		}
	})

	t.Run("a deleted project leaves a tombstone its author and admins see", func(t *testing.T) {
		if _, err := alice.Client.Projects.DeleteProject(open.ID, nil); err != nil {
			t.Fatal(err)
		}
		e.Drain(t)
		list, n, err := svc.OwnEntries(asAlice, entry.Filter{}, 0, 20)
		tomb := fmt.Sprintf("deleted@%d", 0)
		rest := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == at("joined", secret) })
		want(t, "alice's own", list, n, err, 5, append([]string{tomb}, rest...)...)
		if d := list[0]; d.TargetType != "Project" || d.TargetID != open.ID || d.AuthorID != alice.ID || d.Action != feed.Deleted || d.TargetTitle != "" {
			t.Fatalf("tombstone %+v", d)
		}
		list, n, err = svc.UserEntries(asAdmin, "alice", entry.Filter{}, 0, 20)
		want(t, "an admin", list, n, err, 5, append([]string{tomb}, rest...)...)
		list, n, err = svc.UserEntries(asCarol, "alice", entry.Filter{}, 0, 20)
		want(t, "a stranger", list, n, err, 0)
		list, n, err = svc.UserEntries(asBob, "alice", entry.Filter{}, 0, 20)
		want(t, "a member of her other project", list, n, err, 4, rest[1:]...)
		if _, _, err := svc.ProjectEntries(asAlice, pub, entry.Filter{}, 0, 20); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("the deleted project's feed: %v", err)
		}
	})
}
