package collab_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The todos tests use a test-only target kind, "Widget", kept in memory by
// a tiny module that registers it with collab.ProvideKinds exactly as the
// issues and merge requests modules do, with todos (Render) and no notes:
// the collab module knows neither, so a kind of its own tests exercises the
// same paths.

type widget struct {
	ID, ProjectID int64
	Title         string
	hiddenFrom    map[int64]bool // users the kind's Visible refuses
	gone          bool
}

type widgets struct {
	mu   sync.Mutex
	next int64
	rows map[int64]*widget
}

func (ws *widgets) add(projectID int64, title string) target.Target {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.rows == nil {
		ws.rows = map[int64]*widget{}
	}
	ws.next += 100
	ws.rows[ws.next] = &widget{ID: ws.next, ProjectID: projectID, Title: title, hiddenFrom: map[int64]bool{}}
	return target.Target{Type: "Widget", ID: ws.next, ProjectID: projectID}
}

func (ws *widgets) hide(id, user int64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.rows[id].hiddenFrom[user] = true
}

var errNoWidget = errors.New("no such widget")

func (ws *widgets) module() fennec.Module {
	kind := target.Kind{Type: "Widget",
		Render: func(_ context.Context, _ projects.ProjectInfo, id int64) (any, string, error) {
			ws.mu.Lock()
			defer ws.mu.Unlock()
			w, ok := ws.rows[id]
			if !ok || w.gone {
				return nil, "", errNoWidget
			}
			return map[string]any{"id": w.ID, "title": w.Title}, "http://x/widgets/" + strconv.FormatInt(w.ID, 10), nil
		},
		Visible: func(ctx context.Context, _ projects.ProjectInfo, id int64) (bool, error) {
			ws.mu.Lock()
			defer ws.mu.Unlock()
			w, ok := ws.rows[id]
			return ok && !w.hiddenFrom[auth.FromContext(ctx).UserID()], nil
		}}
	return fennec.NewModule("widgets-test", collab.ProvideKinds(func(fennec.None) []target.Kind { return []target.Kind{kind} }))
}

type wenv struct {
	*fennectest.Server
	widgets *widgets
	collab  target.Service
	bus     *events.Bus
	db      *store.DB
}

func startWidgets(t testing.TB) *wenv {
	t.Helper()
	e := &wenv{widgets: &widgets{}}
	e.Server = stocktest.Start(t, fennectest.WithOptions(fennec.WithModules(e.widgets.module())),
		fennectest.WithExtract(&e.collab, &e.bus, &e.db))
	return e
}

func (e *wenv) drain(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

func (e *wenv) project(t testing.TB, c *gitlab.Client, name, visibility string) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *wenv) member(t testing.TB, p *gitlab.Project, u *fennectest.User, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := e.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(u.ID), AccessLevel: &level}); err != nil {
		t.Fatal(err)
	}
}

func (e *wenv) call(t testing.TB, token, method, path string) (int, http.Header, string) {
	t.Helper()
	headers := []string{}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp := e.Do(t, method, path, nil, headers...)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, strings.TrimSpace(string(raw))
}
