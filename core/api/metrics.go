package api

import (
	"net/http"
	"strconv"
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
