package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	flog "github.com/fennec-forge/fennec/core/log"
)

// Metrics is one host's Prometheus registry (not the process-global one, so
// several hosts can live in one process, as in tests).
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches the label-bound metrics per (operation, method, code):
	// WithLabelValues hashes its labels on every call.
	series sync.Map
}

type seriesKey struct {
	op, method string
	code       int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fennec_http_requests_total",
			Help: "HTTP requests by operation, method and status code.",
		}, []string{"operation", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fennec_http_request_duration_seconds",
			Help:    "HTTP request latency by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"operation"}),
	}
	reg.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) observe(r *http.Request, info *flog.RequestInfo, took time.Duration) {
	op := info.Operation
	if op == "" {
		op = "unmatched"
	}
	key := seriesKey{op, r.Method, info.Status}
	v, ok := m.series.Load(key)
	if !ok {
		v, _ = m.series.LoadOrStore(key, &series{
			requests: m.requests.WithLabelValues(op, r.Method, strconv.Itoa(info.Status)),
			duration: m.duration.WithLabelValues(op),
		})
	}
	s := v.(*series)
	s.requests.Inc()
	s.duration.Observe(took.Seconds())
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// metricsAccess decides who may read the metrics: they tell how the server
// is used (operations, users' request rates, the process) and are not for
// the public. Every configured check must pass; with none configured only
// loopback may read them, like GitLab's default monitoring whitelist.
type metricsAccess struct {
	token [sha256.Size]byte
	// hasToken: a token is required.
	hasToken bool
	allow    []netip.Prefix
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func newMetricsAccess(token string, allow []netip.Prefix) metricsAccess {
	m := metricsAccess{allow: allow}
	if token != "" {
		m.token, m.hasToken = sha256.Sum256([]byte(token)), true
	}
	if len(allow) == 0 && !m.hasToken {
		m.allow = loopback
	}
	return m
}

// check answers nil when r may read the metrics, else the refusal: an
// address outside the allow-list finds nothing there (404), a missing or
// wrong token is 401. The client address is the connection's, never a
// forwarded header, which anyone can send.
func (m metricsAccess) check(r *http.Request) *Error {
	if len(m.allow) > 0 {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !m.allowed(ap.Addr().Unmap()) {
			return &Error{Status: http.StatusNotFound, Err: "404 Not Found"}
		}
	}
	if m.hasToken {
		given := r.URL.Query().Get("token")
		if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			given = strings.TrimSpace(h[7:])
		}
		// Hashing first makes the comparison constant-time whatever the
		// lengths.
		sum := sha256.Sum256([]byte(given))
		if given == "" || subtle.ConstantTimeCompare(sum[:], m.token[:]) != 1 {
			return Unauthorized()
		}
	}
	return nil
}

func (m metricsAccess) allowed(a netip.Addr) bool {
	for _, p := range m.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// MetricsHandler serves the metrics in the Prometheus text format to the
// callers Options.MetricsToken and Options.MetricsAllow let in (loopback
// only when neither is set).
func (a *API) MetricsHandler() http.Handler {
	h := a.metrics.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := a.metricsAcc.check(r); e != nil {
			if e.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="Fennec metrics"`)
			}
			WriteJSON(w, e.Status, e)
			return
		}
		h.ServeHTTP(w, r)
	})
}
