package stock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// plainUser has the shape of Fennec's GET /user body, so a plain handler can
// encode the same JSON the ordinary way (timestamps as ready strings, which
// is cheaper than what Fennec does).
type plainUser struct {
	ID              int64   `json:"id"`
	Username        string  `json:"username"`
	Name            string  `json:"name"`
	State           string  `json:"state"`
	AvatarURL       *string `json:"avatar_url"`
	WebURL          string  `json:"web_url"`
	CreatedAt       string  `json:"created_at"`
	IsAdmin         bool    `json:"is_admin"`
	Bio             *string `json:"bio"`
	Location        *string `json:"location"`
	Skype           string  `json:"skype"`
	Linkedin        string  `json:"linkedin"`
	Twitter         string  `json:"twitter"`
	WebsiteURL      string  `json:"website_url"`
	Organization    string  `json:"organization"`
	Email           string  `json:"email"`
	LastSignInAt    *string `json:"last_sign_in_at"`
	ConfirmedAt     *string `json:"confirmed_at"`
	CurrentSignInAt *string `json:"current_sign_in_at"`
	LastActivityOn  *string `json:"last_activity_on"`
	ColorSchemeID   int     `json:"color_scheme_id"`
	ProjectsLimit   int     `json:"projects_limit"`
	Identities      []struct {
		Provider  string `json:"provider"`
		ExternUID string `json:"extern_uid"`
	} `json:"identities"`
	CanCreateGroup   bool `json:"can_create_group"`
	CanCreateProject bool `json:"can_create_project"`
	TwoFactorEnabled bool `json:"two_factor_enabled"`
	External         bool `json:"external"`
	PasswordExpired  bool `json:"password_expired"`
}

// BenchmarkGetUserFullStackVsPlain measures token-authenticated GET
// /api/v4/user through the whole Fennec stack (access log as JSON at info,
// metrics, auth, Huma, JSON) against two plain net/http handlers returning the
// same JSON, in the same run, over loopback with 32 keep-alive connections:
// "plain" encodes the same value with encoding/json on every request (how a
// plain handler returns JSON; the baseline of the target), "static" writes
// pre-encoded bytes (the strictest baseline). Rounds alternate so drift hits
// all alike. Run with -benchtime=1x (make bench does).
func BenchmarkGetUserFullStackVsPlain(b *testing.B) {
	logger, err := flog.New(flog.Options{Level: "info", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	var prov auth.Provisioner
	s := stocktest.Start(b, fennectest.WithLogger(logger), fennectest.WithExtract(&prov),
		fennectest.WithConfig(func(c *config.Config) { c.NoSync = true })) // fast seeding; reads are unaffected
	seed(b, prov, 10000, 2) // the identity issue's scale: 10,000 users, 20,000 tokens
	u := s.CreateUser(b, "bench")
	resp, body := s.JSON(b, http.MethodGet, "/api/v4/user", nil, nil, "PRIVATE-TOKEN", u.Token)
	if resp.StatusCode != 200 {
		b.Fatalf("GET /user: %d %s", resp.StatusCode, body)
	}
	var value plainUser
	if err := json.Unmarshal(body, &value); err != nil {
		b.Fatal(err)
	}
	var check bytes.Buffer
	enc := json.NewEncoder(&check)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&value); err != nil || !bytes.Equal(check.Bytes(), body) {
		b.Fatalf("the plain handler would not return the same JSON:\n%s\n%s", check.Bytes(), body)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(&value)
	}))
	defer plain.Close()
	static := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer static.Close()

	const workers = 32
	const rounds = 5
	round := time.Second
	var plainRPS, staticRPS, fullRPS []float64
	var vsPlain, vsStatic []float64
	var fullP99 time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			// Each round measures all three back to back, so a ratio is taken
			// over the same stretch of machine weather.
			p, _ := fennectest.Load(b, plain.URL+"/api/v4/user", "", workers, round)
			f, p99 := fennectest.Load(b, s.URL+"/api/v4/user", u.Token, workers, round)
			st, _ := fennectest.Load(b, static.URL+"/api/v4/user", "", workers, round)
			plainRPS, fullRPS, staticRPS = append(plainRPS, p), append(fullRPS, f), append(staticRPS, st)
			vsPlain, vsStatic = append(vsPlain, f/p), append(vsStatic, f/st)
			fullP99 = max(fullP99, p99)
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(plainRPS), "plain-req/s")
	b.ReportMetric(fennectest.Median(staticRPS), "static-req/s")
	b.ReportMetric(fennectest.Median(fullRPS), "fennec-req/s")
	b.ReportMetric(100*fennectest.Median(vsPlain), "fennec/plain-%")
	b.ReportMetric(100*fennectest.Median(vsStatic), "fennec/static-%")
	b.ReportMetric(float64(fullP99.Microseconds())/1000, "fennec-p99-ms")
}

// seed adds users with tokensEach personal access tokens each, two writers
// at a time.
func seed(b *testing.B, prov auth.Provisioner, users, tokensEach int) {
	b.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < users; i += 2 {
				u, err := prov.CreateUser(ctx, auth.NewUser{
					Username: fmt.Sprintf("seed%05d", i), Email: fmt.Sprintf("seed%05d@example.com", i),
					Name: fmt.Sprintf("Seed %d", i), Password: "seed-password",
				})
				if err != nil {
					errs <- err
					return
				}
				for j := 0; j < tokensEach; j++ {
					if _, err := prov.CreateToken(ctx, u.ID, "seed", []string{auth.ScopeAPI}); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// BenchmarkSessionLogin measures POST /session at the production bcrypt
// cost (10): logins per second are bound by bcrypt, by design.
func BenchmarkSessionLogin(b *testing.B) {
	logger, err := flog.New(flog.Options{Level: "info", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	s := stocktest.Start(b, fennectest.WithLogger(logger), fennectest.WithModuleConfig(identity.SectionName, func(c *identity.Config) { c.PasswordCost = 10 }))
	u := s.CreateUser(b, "login")
	body := []byte(`{"login":"login","password":"` + u.Password + `"}`)
	const workers = 8
	d := 3 * time.Second
	var done atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				resp, err := http.Post(s.URL+"/api/v4/session", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("login: %d", resp.StatusCode)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(done.Load())/d.Seconds(), "logins/s")
}

// BenchmarkGetUserHandler is the server's own cost of GET /api/v4/user, with
// no network and no client: the handler called directly.
func BenchmarkGetUserHandler(b *testing.B) {
	logger, err := flog.New(flog.Options{Level: "info", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	s := stocktest.Start(b, fennectest.WithLogger(logger))
	u := s.CreateUser(b, "bench")
	h := s.App.Handler()
	req := httptest.NewRequest(http.MethodGet, "/api/v4/user", nil)
	req.Header.Set("PRIVATE-TOKEN", u.Token)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
