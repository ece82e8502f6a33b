package projects_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The module's domain errors are package-level sentinels answered to every
// request that meets them. Many callers at once get 404s and 403s through
// the real server, from this module's handlers and from the repository
// module's (which return projects.ErrNotFound and ErrForbidden as Access
// gives them): under -race nothing may write to a shared value, and every
// answer must still be the exact body of API-CONVENTIONS.md.
func TestSharedErrorsUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	private := crudItoa(crudNum(crudCreate(t, s, alice.Token, map[string]any{"name": "hidden", "visibility": "private"})["id"]))
	public := crudItoa(crudNum(crudCreate(t, s, alice.Token, map[string]any{"name": "open", "visibility": "public"})["id"]))

	type call struct {
		token, method, path string
		status              int
		body                string
	}
	calls := []call{
		{bob.Token, http.MethodGet, "/api/v4/projects/" + private, 404, crudNotFound},
		{"", http.MethodGet, "/api/v4/projects/" + private, 404, crudNotFound},
		{bob.Token, http.MethodPut, "/api/v4/projects/" + public + "?name=mine", 403, crudForbidden},
		{bob.Token, http.MethodDelete, "/api/v4/projects/" + public, 403, crudForbidden},
		{alice.Token, http.MethodGet, "/api/v4/projects/" + public + "/hooks/999", 404, `{"message":"404 Not found"}`},
		{bob.Token, http.MethodGet, "/api/v4/groups/999999", 404, `{"message":"404 Group Not Found"}`},
		{bob.Token, http.MethodGet, "/api/v4/projects/" + private + "/repository/branches", 404, crudNotFound},
		{bob.Token, http.MethodGet, "/api/v4/projects/" + public + "/repository/branches/nope", 404, `{"message":"404 Branch Not Found"}`},
		{bob.Token, http.MethodGet, "/api/v4/projects/" + public + "/repository/commits/nope", 404, `{"message":"404 Commit Not Found"}`},
	}
	// Each call once first, so a wrong answer reads plainly before the storm.
	for _, c := range calls {
		req, _ := http.NewRequest(c.method, s.URL+c.path, nil)
		if c.token != "" {
			req.Header.Set("PRIVATE-TOKEN", c.token)
		}
		status, body, err := rawSend(req)
		if err != nil || status != c.status || body != c.body {
			t.Fatalf("%s %s: %d %s (%v), want %d %s", c.method, c.path, status, body, err, c.status, c.body)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 12; g++ {
		wg.Go(func() {
			for i := 0; i < 10; i++ {
				c := calls[(g+i)%len(calls)]
				req, _ := http.NewRequest(c.method, s.URL+c.path, nil)
				if c.token != "" {
					req.Header.Set("PRIVATE-TOKEN", c.token)
				}
				status, body, err := rawSend(req)
				if err != nil || status != c.status || body != c.body {
					t.Errorf("%s %s under load: %d %s (%v), want %d %s", c.method, c.path, status, body, err, c.status, c.body)
					return
				}
			}
		})
	}
	wg.Wait()
}

func rawSend(req *http.Request) (int, string, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSuffix(string(raw), "\n"), err
}
