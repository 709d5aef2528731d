package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are Paygate's Prometheus metrics, on a registry of their own (no
// globals: several servers can run in one test binary).
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// Jobs counts finished River jobs by kind and outcome; cmd feeds it from
	// River's event subscription.
	Jobs *prometheus.CounterVec
}

// NewMetrics registers the metrics, with the collectors of other parts
// (the store's pool and job counts: store.Collectors).
func NewMetrics(more ...prometheus.Collector) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_http_requests_total", Help: "HTTP requests by route pattern and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "paygate_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		Jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_jobs_total", Help: "Finished background jobs by kind and outcome.",
		}, []string{"kind", "outcome"}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.Jobs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Registry.MustRegister(more...)
	return m
}

// ObserveBatches exports SQLite's group commit: shared transactions and the
// writers they carried (store.BatchStats).
func (m *Metrics) ObserveBatches(stats func() (commits, members uint64)) {
	m.Registry.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "paygate_store_batch_commits_total",
			Help: "SQLite group commit: shared transactions run."}, func() float64 { c, _ := stats(); return float64(c) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "paygate_store_batch_writers_total",
			Help: "SQLite group commit: writers (requests, job steps) those transactions carried."}, func() float64 { _, n := stats(); return float64(n) }))
}

func (m *Metrics) observeRequest(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}
