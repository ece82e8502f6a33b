package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity"
)

// BenchmarkCurrentUserOAuthVsPrivateToken: GET /api/v4/user with an OAuth
// Bearer token and with a personal access token, on the same server, in
// alternating rounds so both see the same machine; medians of the rounds.
func BenchmarkCurrentUserOAuthVsPrivateToken(b *testing.B) {
	const workers, rounds, round = 8, 3, time.Second
	e := start(b, fennectest.WithLogger(zap.NewNop()))
	u := e.CreateUser(b, "")
	bearer := e.passwordToken(b, u.Username, u.Password, nil)["access_token"].(string)
	target := e.URL + "/api/v4/user"
	request := func(header, value string) func(int, int) *http.Request {
		reqs := make([]*http.Request, workers)
		for w := range reqs {
			reqs[w], _ = http.NewRequest(http.MethodGet, target, nil)
			reqs[w].Header.Set(header, value)
		}
		return func(w, _ int) *http.Request { return reqs[w] }
	}
	oauthReq, patReq := request("Authorization", "Bearer "+bearer), request("PRIVATE-TOKEN", u.Token)
	var oauthRPS, patRPS []float64
	var oauthP99, patP99 time.Duration
	b.ResetTimer()
	for range b.N {
		for range rounds {
			r, p := fennectest.LoadRequests(b, workers, round, http.StatusOK, oauthReq)
			oauthRPS, oauthP99 = append(oauthRPS, r), max(oauthP99, p)
			r, p = fennectest.LoadRequests(b, workers, round, http.StatusOK, patReq)
			patRPS, patP99 = append(patRPS, r), max(patP99, p)
		}
	}
	o, p := fennectest.Median(oauthRPS), fennectest.Median(patRPS)
	b.ReportMetric(o, "oauth-req/s")
	b.ReportMetric(p, "pat-req/s")
	b.ReportMetric(o/p, "oauth/pat")
	b.ReportMetric(float64(oauthP99.Microseconds()), "oauth-p99-µs")
	b.ReportMetric(float64(patP99.Microseconds()), "pat-p99-µs")
}

// BenchmarkPasswordGrant: tokens issued per second by the password grant
// with identity's default bcrypt cost (10), the figure that bounds it, from
// several clients at once. Each attempt succeeds, so the sign-in throttle
// never steps in.
func BenchmarkPasswordGrant(b *testing.B) {
	const workers, d = 4, 2 * time.Second
	e := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithModuleConfig(identity.SectionName, func(c *identity.Config) {
		c.PasswordCost = 10 // identity's default (fennectest lowers it to 4)
	}))
	u := e.CreateUser(b, "")
	form := url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password}}.Encode()
	var rps []float64
	var p99 time.Duration
	b.ResetTimer()
	for range b.N {
		r, p := fennectest.LoadRequests(b, workers, d, http.StatusOK, func(int, int) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, e.URL+"/oauth/token", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return req
		})
		rps, p99 = append(rps, r), max(p99, p)
	}
	b.ReportMetric(fennectest.Median(rps), "tokens/s")
	b.ReportMetric(float64(p99.Milliseconds()), "p99-ms")
}
