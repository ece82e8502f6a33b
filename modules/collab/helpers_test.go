package collab_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The tests drive the collab module's generic mechanics through a
// test-only target kind, "Thing" (/projects/:id/things/:thing_iid/notes),
// kept in memory by a tiny module that registers it with
// collab.ProvideKinds exactly as the issues, snippets and merge requests
// modules do: the collab module knows none of them, so a kind of its own
// tests exercises the same paths. (Until the issues module landed this was
// the only kind there was.)

var errThingNotFound = errors.New("thing not found")

// things is the test kind's store: noteables by project and iid.
type things struct {
	mu     sync.Mutex
	nextID int64
	rows   map[int64]map[int64]target.Noteable // project -> iid -> thing
}

func (ts *things) add(projectID, authorID int64, title string, confidential bool, assignees ...int64) target.Noteable {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.rows == nil {
		ts.rows = map[int64]map[int64]target.Noteable{}
	}
	if ts.rows[projectID] == nil {
		ts.rows[projectID] = map[int64]target.Noteable{}
	}
	ts.nextID += 1000 // global ids far from iids, so a mix-up shows
	n := target.Noteable{Type: "Thing", ID: ts.nextID, IID: int64(len(ts.rows[projectID]) + 1), ProjectID: projectID, Title: title,
		AuthorID: authorID, AssigneeIDs: assignees, Confidential: confidential, WebURL: "http://x/things/" + title}
	ts.rows[projectID][n.IID] = n
	return n
}

func (ts *things) byID(id int64) (target.Noteable, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, m := range ts.rows {
		for _, n := range m {
			if n.ID == id {
				return n, true
			}
		}
	}
	return target.Noteable{}, false
}

// visibleTo is the confidential rule of the Noteable contract.
func visibleTo(n target.Noteable, user int64, level int) bool {
	return !n.Confidential || level >= projects.Reporter || user == n.AuthorID || slices.Contains(n.AssigneeIDs, user)
}

func (ts *things) resolve(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
	ts.mu.Lock()
	n, ok := ts.rows[p.ID][ref]
	ts.mu.Unlock()
	if !ok || !visibleTo(n, auth.FromContext(ctx).UserID(), p.Level) {
		return target.Noteable{}, errThingNotFound
	}
	return n, nil
}

// module is the test kind's module; locked things refuse comments, as
// locked merge requests will.
func (ts *things) module(locked *sync.Map, seen *noteEvents) fennec.Module {
	kind := target.Kind{Type: "Thing", Path: "things", Param: "thing_iid", Resolve: ts.resolve, EmojiNotesAward: true,
		CanComment: func(_ context.Context, _ projects.ProjectInfo, n target.Noteable) error {
			if _, ok := locked.Load(n.ID); ok {
				return projects.ErrForbidden
			}
			return nil
		}}
	// A second kind with the snippet-note GET quirk (NoteView).
	quirky := kind
	quirky.Type, quirky.Path, quirky.Param = "Gadget", "gadgets", "gadget_id"
	quirky.EmojiNotesAward = false // an emoji-only note on a gadget is a note
	quirky.Resolve = func(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		for _, n := range ts.rows[p.ID] {
			if n.ID == ref {
				n.Type, n.IID = "Gadget", 0
				return n, nil
			}
		}
		return target.Noteable{}, errThingNotFound
	}
	quirky.NoteView = func(_ context.Context, n target.Noteable, note any) (any, error) {
		return map[string]any{"id": n.ID, "title": n.Title, "note": note}, nil
	}
	// Things are subscribed to and todo targets too; gadgets are not.
	kind.OpName = "thing"
	kind.View = func(_ context.Context, _ projects.ProjectInfo, n target.Noteable) (any, error) {
		return map[string]any{"id": n.ID, "iid": n.IID, "title": n.Title}, nil
	}
	kind.Render = func(_ context.Context, _ projects.ProjectInfo, id int64) (any, string, error) {
		n, ok := ts.byID(id)
		if !ok {
			return nil, "", errThingNotFound
		}
		return map[string]any{"id": n.ID, "iid": n.IID, "title": n.Title}, n.WebURL, nil
	}
	kind.Visible = func(ctx context.Context, _ projects.ProjectInfo, id int64) (bool, error) {
		n, ok := ts.byID(id)
		// The level is not known here; confidential things are for
		// their author and assignees only in these tests.
		return ok && visibleTo(n, auth.FromContext(ctx).UserID(), 0), nil
	}
	return fennec.NewModule("things-test",
		// The kinds' constructor takes the service built from them, as an
		// owner's kinds built from its own service (itself built from
		// target.Service) do: no cycle for fx.
		collab.ProvideKinds(func(target.Service) []target.Kind { return []target.Kind{kind, quirky} }),
		fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
			if seen == nil {
				return nil // benchmarks: NoteEvents go nowhere, as in the stock bundle today
			}
			return []events.Subscriber{events.Subscribe("notes-test.collect", func(_ context.Context, ev event.NoteEvent) error {
				seen.mu.Lock()
				defer seen.mu.Unlock()
				seen.list = append(seen.list, ev)
				return nil
			})}
		}),
		fennec.ProvideRoutes(func(fennec.None) fennec.Routes {
			return fennec.Routes{Name: "things-test", Register: func(a *api.API) {
				a.MapError(errThingNotFound, func(error) *api.Error { return api.NotFound("Thing") })
			}}
		}),
	)
}

// noteEvents collects the NoteEvents delivered, as the webhooks module
// will receive them.
type noteEvents struct {
	mu   sync.Mutex
	list []event.NoteEvent
}

func (n *noteEvents) all() []event.NoteEvent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.list)
}

// env is a running stock application with the test kind, its bus, store
// and the collab service.
type env struct {
	*fennectest.Server
	things *things
	locked *sync.Map
	events *noteEvents
	bus    *events.Bus
	db     *store.DB
	collab target.Service
}

func start(t testing.TB, opts ...fennectest.Option) *env {
	t.Helper()
	return startWith(t, &noteEvents{}, opts...)
}

// startWith starts the app; with seen nil, NoteEvents have no subscriber.
func startWith(t testing.TB, seen *noteEvents, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{things: &things{}, locked: &sync.Map{}, events: seen}
	opts = append([]fennectest.Option{
		fennectest.WithOptions(fennec.WithModules(e.things.module(e.locked, e.events))),
		fennectest.WithExtract(&e.bus, &e.db, &e.collab),
	}, opts...)
	e.Server = stocktest.Start(t, opts...)
	return e
}

type user = *fennectest.User

func (e *env) user(t testing.TB, name string, opts ...fennectest.UserOption) user {
	t.Helper()
	return e.CreateUser(t, name, opts...)
}

func (e *env) project(t testing.TB, c *gitlab.Client, name, visibility string) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) member(t testing.TB, p *gitlab.Project, u user, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := e.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(u.ID), AccessLevel: &level}); err != nil {
		t.Fatal(err)
	}
}

// call sends a raw request with a token and returns status, body.
func (e *env) call(t testing.TB, token, method, path, body string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	headers := []string{}
	if body != "" {
		r = strings.NewReader(body)
		headers = append(headers, "Content-Type", "application/json")
	}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp := e.Do(t, method, path, r, headers...)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

func notesPath(projectID, iid int64) string {
	return "/api/v4/projects/" + strconv.FormatInt(projectID, 10) + "/things/" + strconv.FormatInt(iid, 10) + "/notes"
}

func jsonBody(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func wantStatus(t testing.TB, got int, body []byte, want int) {
	t.Helper()
	if got != want {
		t.Fatalf("status %d, want %d: %s", got, want, body)
	}
}

func wantBody(t testing.TB, body []byte, want string) {
	t.Helper()
	if strings.TrimSpace(string(body)) != want {
		t.Fatalf("body %s, want %s", body, want)
	}
}

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
