package issues_test

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

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
