package issues_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// env is a running stock application with its bus and store.
type env struct {
	*fennectest.Server
	bus *events.Bus
	db  *store.DB
}

func start(t testing.TB, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{}
	e.Server = stocktest.Start(t, append([]fennectest.Option{fennectest.WithExtract(&e.bus, &e.db)}, opts...)...)
	return e
}

// drain waits until every event committed so far has been delivered.
func (e *env) drain(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// newProject creates a project as c.
func newProject(t testing.TB, c *gitlab.Client, name, visibility string) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatalf("create project %s: %v", name, err)
	}
	return p
}

func addMember(t testing.TB, c *gitlab.Client, project, user int64, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := c.ProjectMembers.AddProjectMember(project, &gitlab.AddProjectMemberOptions{UserID: user, AccessLevel: &level}); err != nil {
		t.Fatalf("add member %d: %v", user, err)
	}
}

// newIssue creates an issue through client-go.
func newIssue(t testing.TB, c *gitlab.Client, project int64, title string, opt ...func(*gitlab.CreateIssueOptions)) *gitlab.Issue {
	t.Helper()
	o := &gitlab.CreateIssueOptions{Title: gitlab.Ptr(title)}
	for _, f := range opt {
		f(o)
	}
	i, _, err := c.Issues.CreateIssue(project, o)
	if err != nil {
		t.Fatalf("create issue %q: %v", title, err)
	}
	return i
}

// reply is a raw answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// call sends a raw request with a JSON body (nil: none) as token.
func (e *env) call(t testing.TB, token, method, path string, body any) reply {
	t.Helper()
	var r io.Reader
	headers := []string{}
	if body != nil {
		switch b := body.(type) {
		case string:
			r = strings.NewReader(b)
			headers = append(headers, "Content-Type", "application/x-www-form-urlencoded")
		case []byte:
			r = bytes.NewReader(b)
			headers = append(headers, "Content-Type", "application/json")
		default:
			raw, _ := json.Marshal(b)
			r = bytes.NewReader(raw)
			headers = append(headers, "Content-Type", "application/json")
		}
	}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp, raw := e.JSON(t, method, path, r, nil, headers...)
	return reply{resp.StatusCode, resp.Header, raw}
}

func (r reply) expect(t testing.TB, status int, body string) reply {
	t.Helper()
	if r.status != status || (body != "" && strings.TrimSpace(string(r.body)) != body) {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, body)
	}
	return r
}

func (r reply) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

func (r reply) list(t testing.TB) []map[string]any {
	t.Helper()
	var m []map[string]any
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

// iids lists the iids of a list answer, in order.
func (r reply) iids(t testing.TB) []int64 {
	t.Helper()
	out := []int64{}
	for _, m := range r.list(t) {
		n, _ := m["iid"].(json.Number).Int64()
		out = append(out, n)
	}
	return out
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func issuePath(project, iid int64, rest ...string) string {
	return fmt.Sprintf("/api/v4/projects/%d/issues/%d", project, iid) + strings.Join(rest, "")
}

func projectPath(project int64, rest string) string {
	return fmt.Sprintf("/api/v4/projects/%d%s", project, rest)
}

func q(v string) string { return url.QueryEscape(v) }
