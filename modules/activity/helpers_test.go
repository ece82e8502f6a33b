package activity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// env is a running stock application with its event bus and store, so a
// test can wait for deliveries (drain) and publish events itself.
type env struct {
	*fennectest.Server
	bus *events.Bus
	db  *store.DB
}

func start(t *testing.T, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{}
	e.Server = stocktest.Start(t, append([]fennectest.Option{fennectest.WithExtract(&e.bus, &e.db)}, opts...)...)
	return e
}

// withKinds adds a module that registers target kinds with the collab
// module, as a module owning those targets (issues...) would.
func withKinds(kinds ...target.Kind) fennectest.Option {
	return fennectest.WithOptions(fennec.WithModules(fennec.NewModule("feed-kinds-test",
		collab.ProvideKinds(func(fennec.None) []target.Kind { return kinds }))))
}

// publish commits events as a module would, then waits for their delivery.
func (e *env) publish(t *testing.T, evs ...events.Event) {
	t.Helper()
	err := e.db.Update(context.Background(), func(tx *store.Tx) error {
		for _, ev := range evs {
			if err := e.bus.Publish(tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
}

// project creates a project through client-go as the given user.
func project(t *testing.T, c *gitlab.Client, name, visibility string) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatalf("create project %s: %v", name, err)
	}
	return p
}

// commit adds a file to master through the commits API: a push, so one
// feed entry ("pushed new" the first time, then "pushed to").
func commit(t *testing.T, c *gitlab.Client, id int64, file string) {
	t.Helper()
	_, _, err := c.Commits.CreateCommit(id, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("add " + file),
		Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(file), Content: gitlab.Ptr(file + "\n")}}})
	if err != nil {
		t.Fatalf("commit to project %d: %v", id, err)
	}
}

// resp is a raw answer.
type resp struct {
	Status int
	Body   string
	Header http.Header
	req    string
}

func get(t *testing.T, s *env, token, path string) resp {
	t.Helper()
	var hdr []string
	if token != "" {
		hdr = append(hdr, "PRIVATE-TOKEN", token)
	}
	r, raw := s.JSON(t, http.MethodGet, path, nil, nil, hdr...)
	return resp{Status: r.StatusCode, Body: strings.TrimSuffix(string(raw), "\n"), Header: r.Header, req: "GET " + path}
}

func (r resp) expect(t *testing.T, status int, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %q", want)
	}
	_ = json.Unmarshal([]byte(r.Body), &g)
	if r.Status != status || !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: got %d %s\nwant %d %s", r.req, r.Status, r.Body, status, want)
	}
}

// list decodes a 200 array of events.
func (r resp) list(t *testing.T) []map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: %d %s", r.req, r.Status, r.Body)
	}
	var a []map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(r.Body)))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil || a == nil {
		t.Fatalf("%s: %q is not an array of objects: %v", r.req, r.Body, err)
	}
	return a
}

// pageHeaders checks every pagination header.
func (r resp) pageHeaders(t *testing.T, total, totalPages, perPage, page int, next, prev string) {
	t.Helper()
	fennectest.CheckPages(t, r.req, r.Header, total, totalPages, perPage, page, next, prev)
}

// summary is "action@project" for each event, in order: the shape of a
// feed at a glance ("pushed to@3", "created@3", "deleted@-").
func summary(list []map[string]any) []string {
	out := make([]string, 0, len(list))
	for _, e := range list {
		p := "-"
		if e["project_id"] != nil {
			p = e["project_id"].(json.Number).String()
		}
		out = append(out, e["action_name"].(string)+"@"+p)
	}
	return out
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantFeed(t *testing.T, what string, list []map[string]any, want ...string) {
	t.Helper()
	if got := summary(list); !slices.Equal(got, want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

func at(action string, id int64) string { return action + "@" + strconv.FormatInt(id, 10) }

const (
	notFoundProject = `{"message":"404 Project Not Found"}`
	notFoundUser    = `{"message":"404 User Not Found"}`
)
