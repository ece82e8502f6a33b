package internal

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// The permission table of API-CONVENTIONS.md, checked against levelsOf,
// canSee and allowed on a real store.

var accAll = []project.Action{project.ReadProject, project.ReadCode, project.CreateIssue, project.CreateSnippet, project.PushCode, project.PushProtected, project.AdminProject, project.ChangeVisibility, project.RemoveProject}

var accActionNames = map[project.Action]string{
	project.ReadProject: "ReadProject", project.ReadCode: "ReadCode", project.CreateIssue: "CreateIssue", project.CreateSnippet: "CreateSnippet",
	project.PushCode: "PushCode", project.PushProtected: "PushProtected", project.AdminProject: "AdminProject",
	project.ChangeVisibility: "ChangeVisibility", project.RemoveProject: "RemoveProject",
}

// Sets of actions, cumulative as the table is.
var (
	accNone       = []project.Action{}
	accReadPublic = []project.Action{project.ReadProject, project.ReadCode}                      // anonymous on a public project
	accReader     = []project.Action{project.ReadProject, project.ReadCode, project.CreateIssue} // signed-in reader of public/internal
	accGuest      = []project.Action{project.ReadProject, project.CreateIssue}                   // Guest of a private project
	accReporter   = []project.Action{project.ReadProject, project.ReadCode, project.CreateIssue, project.CreateSnippet}
	accDeveloper  = append(append([]project.Action{}, accReporter...), project.PushCode)
	accMaster     = append(append([]project.Action{}, accDeveloper...), project.PushProtected, project.AdminProject)
	accEverything = accAll
)

// accWorld is a store with users (only ids: principals are built here),
// a personal namespace, a group and projects in them.
type accWorld struct {
	t   *testing.T
	db  *store.DB
	now time.Time
}

// User ids of the callers.
const (
	uOwner = iota + 1
	uGuest
	uReporter
	uDeveloper
	uMaster
	uGroupOwner
	uAdmin
	uStranger
	uExternal
	uExternalGuest
	uOther
)

func newAccWorld(t *testing.T) *accWorld {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "fennec.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var buckets []string
	for _, tb := range Tables() {
		buckets = append(buckets, tb.Buckets()...)
	}
	if err := db.EnsureBuckets(buckets); err != nil {
		t.Fatal(err)
	}
	return &accWorld{t: t, db: db, now: time.Date(2017, 5, 24, 10, 0, 0, 0, time.UTC)}
}

func (w *accWorld) update(fn func(tx *store.Tx) error) {
	w.t.Helper()
	if err := w.db.Update(context.Background(), fn); err != nil {
		w.t.Fatal(err)
	}
}

func (w *accWorld) namespace(ns *Namespace) *Namespace {
	w.t.Helper()
	w.update(func(tx *store.Tx) error { return namespaces.Insert(tx, ns) })
	return ns
}

func (w *accWorld) project(ns *Namespace, path, vis string, edit ...func(*Project)) *Project {
	w.t.Helper()
	// Features as a new project has them (create() switches these on).
	p := &Project{NamespaceID: ns.ID, Name: path, Path: path, Visibility: vis, SharedWith: []Share{}, CreatedAt: w.now,
		Features: project.Features{IssuesEnabled: true, MergeRequestsEnabled: true, JobsEnabled: true, WikiEnabled: true, SnippetsEnabled: true}}
	for _, e := range edit {
		e(p)
	}
	w.update(func(tx *store.Tx) error { return projects.Insert(tx, p) })
	return p
}

func (w *accWorld) member(kind string, source int64, uid int64, level int, expires *time.Time) {
	w.t.Helper()
	w.update(func(tx *store.Tx) error {
		return members.Insert(tx, &Member{SourceKind: kind, SourceID: source, UserID: uid, AccessLevel: level, ExpiresAt: expires, CreatedAt: w.now})
	})
}

func (w *accWorld) levels(p *auth.Principal, proj *Project) levels {
	w.t.Helper()
	var l levels
	if err := w.db.View(context.Background(), func(tx *store.Tx) error {
		fresh, err := projects.Get(tx, proj.ID)
		if err != nil {
			return err
		}
		l = levelsOf(tx, p, fresh, w.now)
		*proj = *fresh
		return nil
	}); err != nil {
		w.t.Fatal(err)
	}
	return l
}

// allowedSet is every action allowed; it also checks that canSee and
// ReadProject agree.
func (w *accWorld) allowedSet(t *testing.T, p *auth.Principal, proj *Project) []project.Action {
	t.Helper()
	l := w.levels(p, proj)
	var out []project.Action
	for _, a := range accAll {
		if allowed(p, proj, l, a) {
			out = append(out, a)
		}
	}
	if see := canSee(p, proj, l); see != allowed(p, proj, l, project.ReadProject) {
		t.Errorf("canSee = %v but allowed(ReadProject) = %v", see, !see)
	}
	return out
}

func accUser(id int64) *auth.Principal {
	return &auth.Principal{User: &auth.User{ID: id, Username: fmt.Sprintf("u%d", id)}}
}

func accAdmin(id int64) *auth.Principal {
	p := accUser(id)
	p.User.Admin = true
	return p
}

func accExternal(id int64) *auth.Principal {
	p := accUser(id)
	p.User.External = true
	return p
}

func accNames(actions []project.Action) string {
	s := make([]string, 0, len(actions))
	for _, a := range actions {
		s = append(s, accActionNames[a])
	}
	sort.Strings(s)
	return "[" + strings.Join(s, " ") + "]"
}

func accExpect(t *testing.T, got, want []project.Action) {
	t.Helper()
	if accNames(got) != accNames(want) {
		t.Errorf("allowed %s, want %s", accNames(got), accNames(want))
	}
}

type accCaller struct {
	name string
	p    *auth.Principal
}

// TestPermissionTable runs every caller on every visibility and action,
// once on a personal project (members are project members, the owner is
// the namespace's owner) and once on a group project (members are group
// members, the owner is the group's Owner).
func TestPermissionTable(t *testing.T) {
	w := newAccWorld(t)
	personal := w.namespace(&Namespace{Kind: KindUser, OwnerID: uOwner, CreatedAt: w.now})
	group := w.namespace(&Namespace{Kind: KindGroup, Path: "g", Name: "G", Visibility: project.Public, CreatedAt: w.now})
	w.member(KindGroup, group.ID, uGroupOwner, project.Owner, nil)

	callers := []accCaller{
		{"anonymous", auth.Anonymous()},
		{"external", accExternal(uExternal)},
		{"external guest member", accExternal(uExternalGuest)},
		{"signed-in non-member", accUser(uStranger)},
		{"guest", accUser(uGuest)},
		{"reporter", accUser(uReporter)},
		{"developer", accUser(uDeveloper)},
		{"master", accUser(uMaster)},
		{"owner", nil}, // the namespace owner or the group Owner, per setting
		{"admin", accAdmin(uAdmin)},
	}
	want := map[string]map[string][]project.Action{
		"anonymous":             {project.Private: accNone, project.Internal: accNone, project.Public: accReadPublic},
		"external":              {project.Private: accNone, project.Internal: accNone, project.Public: accReader},
		"external guest member": {project.Private: accGuest, project.Internal: accGuest, project.Public: accReader},
		"signed-in non-member":  {project.Private: accNone, project.Internal: accReader, project.Public: accReader},
		"guest":                 {project.Private: accGuest, project.Internal: accReader, project.Public: accReader},
		"reporter":              {project.Private: accReporter, project.Internal: accReporter, project.Public: accReporter},
		"developer":             {project.Private: accDeveloper, project.Internal: accDeveloper, project.Public: accDeveloper},
		"master":                {project.Private: accMaster, project.Internal: accMaster, project.Public: accMaster},
		"owner":                 {project.Private: accEverything, project.Internal: accEverything, project.Public: accEverything},
		"admin":                 {project.Private: accEverything, project.Internal: accEverything, project.Public: accEverything},
	}
	roles := map[int64]int{uGuest: project.Guest, uExternalGuest: project.Guest, uReporter: project.Reporter, uDeveloper: project.Developer, uMaster: project.Master}

	for _, setting := range []struct {
		name  string
		ns    *Namespace
		kind  string // where the members are
		owner *auth.Principal
	}{
		{"personal", personal, "project", accUser(uOwner)},
		{"group", group, KindGroup, accUser(uGroupOwner)},
	} {
		for _, vis := range []string{project.Private, project.Internal, project.Public} {
			proj := w.project(setting.ns, "p-"+vis, vis)
			for uid, lvl := range roles {
				source := proj.ID
				if setting.kind == KindGroup {
					source = group.ID
				}
				if setting.kind == KindGroup && vis != project.Private {
					continue // group members were added with the private project
				}
				w.member(setting.kind, source, uid, lvl, nil)
			}
			for _, c := range callers {
				p := c.p
				if c.name == "owner" {
					p = setting.owner
				}
				t.Run(setting.name+"/"+vis+"/"+c.name, func(t *testing.T) {
					accExpect(t, w.allowedSet(t, p, proj), want[c.name][vis])
				})
			}
		}
	}
}

// TestLevelsOf checks where the levels come from, as "permissions" shows
// them: project_access for the namespace owner and project members,
// group_access for group members and shares.
func TestLevelsOf(t *testing.T) {
	w := newAccWorld(t)
	personal := w.namespace(&Namespace{Kind: KindUser, OwnerID: uOwner, CreatedAt: w.now})
	group := w.namespace(&Namespace{Kind: KindGroup, Path: "g", Name: "G", Visibility: project.Private, CreatedAt: w.now})
	inGroup := w.project(group, "in-group", project.Private)
	mine := w.project(personal, "mine", project.Private)
	w.member(KindGroup, group.ID, uDeveloper, project.Developer, nil)
	w.member("project", inGroup.ID, uReporter, project.Reporter, nil)
	w.member(KindGroup, group.ID, uReporter, project.Master, nil)
	w.member("project", mine.ID, uGuest, project.Guest, nil)

	for _, tc := range []struct {
		name           string
		p              *auth.Principal
		proj           *Project
		project, group int
	}{
		{"namespace owner", accUser(uOwner), mine, project.Owner, 0},
		{"project member", accUser(uGuest), mine, project.Guest, 0},
		{"group member", accUser(uDeveloper), inGroup, 0, project.Developer},
		{"both: each side kept, max wins", accUser(uReporter), inGroup, project.Reporter, project.Master},
		{"anonymous", auth.Anonymous(), inGroup, 0, 0},
		{"admin is no member", accAdmin(uAdmin), inGroup, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := w.levels(tc.p, tc.proj)
			if l.project != tc.project || l.group != tc.group {
				t.Errorf("levels = %+v, want project %d group %d", l, tc.project, tc.group)
			}
		})
	}
	// The member with both levels gets the higher one's rights.
	accExpect(t, w.allowedSet(t, accUser(uReporter), inGroup), accMaster)
}

// TestGroupShare: a project shared with a group gives its members the lower
// of the share's level and their level in the group; expired shares give
// nothing.
func TestGroupShare(t *testing.T) {
	w := newAccWorld(t)
	personal := w.namespace(&Namespace{Kind: KindUser, OwnerID: uOwner, CreatedAt: w.now})
	shared := w.namespace(&Namespace{Kind: KindGroup, Path: "s", Name: "S", Visibility: project.Private, CreatedAt: w.now})
	high := w.namespace(&Namespace{Kind: KindGroup, Path: "h", Name: "H", Visibility: project.Private, CreatedAt: w.now})
	old := w.namespace(&Namespace{Kind: KindGroup, Path: "o", Name: "O", Visibility: project.Private, CreatedAt: w.now})
	past := w.now.Add(-24 * time.Hour)
	future := w.now.Add(24 * time.Hour)
	proj := w.project(personal, "shared", project.Private, func(p *Project) {
		p.SharedWith = []Share{
			{GroupID: shared.ID, Access: project.Reporter},
			{GroupID: high.ID, Access: project.Master, ExpiresAt: &future},
			{GroupID: old.ID, Access: project.Master, ExpiresAt: &past},
		}
	})
	w.member(KindGroup, shared.ID, uDeveloper, project.Developer, nil)
	w.member(KindGroup, shared.ID, uGuest, project.Guest, nil)
	w.member(KindGroup, high.ID, uGroupOwner, project.Owner, nil)
	w.member(KindGroup, old.ID, uMaster, project.Owner, nil)
	w.member(KindGroup, shared.ID, uOther, project.Owner, &past) // expired membership in the shared group

	for _, tc := range []struct {
		name  string
		uid   int64
		group int
		want  []project.Action
	}{
		{"developer in a Reporter share is Reporter", uDeveloper, project.Reporter, accReporter},
		{"guest in a Reporter share is Guest", uGuest, project.Guest, accGuest},
		{"owner in a Master share is Master, not Owner", uGroupOwner, project.Master, accMaster},
		{"expired share gives nothing", uMaster, 0, accNone},
		{"expired membership of the shared group gives nothing", uOther, 0, accNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := accUser(tc.uid)
			if l := w.levels(p, proj); l.group != tc.group || l.project != 0 {
				t.Errorf("levels = %+v, want group %d", l, tc.group)
			}
			accExpect(t, w.allowedSet(t, p, proj), tc.want)
		})
	}
}

// TestExpiredMembership: an expired membership is no membership; one that
// expires later still counts.
func TestExpiredMembership(t *testing.T) {
	w := newAccWorld(t)
	personal := w.namespace(&Namespace{Kind: KindUser, OwnerID: uOwner, CreatedAt: w.now})
	group := w.namespace(&Namespace{Kind: KindGroup, Path: "g", Name: "G", Visibility: project.Private, CreatedAt: w.now})
	past := w.now.Add(-time.Minute)
	future := w.now.Add(time.Minute)
	for _, vis := range []string{project.Private, project.Public} {
		pp := w.project(personal, "p-"+vis, vis)
		gp := w.project(group, "g-"+vis, vis)
		w.member("project", pp.ID, uDeveloper, project.Developer, &past)
		w.member("project", pp.ID, uMaster, project.Master, &future)
		if vis == project.Private {
			w.member(KindGroup, group.ID, uDeveloper, project.Developer, &past)
			w.member(KindGroup, group.ID, uMaster, project.Master, &future)
		}
		stranger := accNone
		if vis == project.Public {
			stranger = accReader
		}
		for _, proj := range []*Project{pp, gp} {
			t.Run(proj.Path, func(t *testing.T) {
				accExpect(t, w.allowedSet(t, accUser(uDeveloper), proj), stranger)
				accExpect(t, w.allowedSet(t, accUser(uMaster), proj), accMaster)
			})
		}
	}
}

// TestArchived: an archived project refuses pushes, issues and snippets to
// everyone, administrators included, and still allows reading and
// administration (unarchiving is RemoveProject's level).
func TestArchived(t *testing.T) {
	w := newAccWorld(t)
	personal := w.namespace(&Namespace{Kind: KindUser, OwnerID: uOwner, CreatedAt: w.now})
	for _, vis := range []string{project.Private, project.Public} {
		proj := w.project(personal, "archived-"+vis, vis, func(p *Project) { p.Archived = true })
		w.member("project", proj.ID, uDeveloper, project.Developer, nil)
		w.member("project", proj.ID, uMaster, project.Master, nil)
		readOnly := []project.Action{project.ReadProject, project.ReadCode, project.AdminProject, project.ChangeVisibility, project.RemoveProject}
		t.Run(vis, func(t *testing.T) {
			accExpect(t, w.allowedSet(t, accUser(uOwner), proj), readOnly)
			accExpect(t, w.allowedSet(t, accAdmin(uAdmin), proj), readOnly)
			accExpect(t, w.allowedSet(t, accUser(uMaster), proj), []project.Action{project.ReadProject, project.ReadCode, project.AdminProject})
			accExpect(t, w.allowedSet(t, accUser(uDeveloper), proj), []project.Action{project.ReadProject, project.ReadCode})
			if vis == project.Public {
				accExpect(t, w.allowedSet(t, accUser(uStranger), proj), []project.Action{project.ReadProject, project.ReadCode})
			} else {
				accExpect(t, w.allowedSet(t, accUser(uStranger), proj), accNone)
			}
		})
	}
}

// TestListingHonoursExpiry: GET /projects gathers ids through memberships
// (visibleIDs/memberIDs in list.go) and renders them without a canSee check,
// so an expired membership or share must not bring a private project in.
func TestListingHonoursExpiry(t *testing.T) {
	w := newAccWorld(t)
	personal := w.namespace(&Namespace{Kind: KindUser, OwnerID: uOwner, CreatedAt: w.now})
	group := w.namespace(&Namespace{Kind: KindGroup, Path: "g", Name: "G", Visibility: project.Private, CreatedAt: w.now})
	past := w.now.Add(-time.Hour)
	direct := w.project(personal, "direct", project.Private)
	inGroup := w.project(group, "in-group", project.Private)
	shared := w.project(personal, "shared", project.Private, func(p *Project) {
		p.SharedWith = []Share{{GroupID: group.ID, Access: project.Developer, ExpiresAt: &past}}
	})
	w.member("project", direct.ID, uGuest, project.Guest, &past)
	w.member(KindGroup, group.ID, uReporter, project.Reporter, &past)
	w.member(KindGroup, group.ID, uDeveloper, project.Developer, nil) // current member: the share itself expired

	for _, tc := range []struct {
		name string
		uid  int64
		proj *Project
	}{
		{"expired project membership", uGuest, direct},
		{"expired group membership", uReporter, inGroup},
		{"expired share", uDeveloper, shared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := accUser(tc.uid)
			if l := w.levels(p, tc.proj); canSee(p, tc.proj, l) {
				t.Fatalf("canSee is true: the fixture is wrong")
			}
			for _, in := range []*listFilter{{}, {Membership: true}} {
				var ids map[int64]bool
				if err := w.db.View(context.Background(), func(tx *store.Tx) error {
					var err error
					ids, err = visibleIDs(tx, p, in)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if ids[tc.proj.ID] {
					t.Fatalf("visibleIDs(%+v) holds project %s", *in, tc.proj.Path)
				}
			}
		})
	}
}
