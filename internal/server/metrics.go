package server

import (
	"context"
	"log/slog"
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
	// Payments' attempts by channel and outcome, reroutes by the channel
	// left and why, and each account's circuit (1 open, 0 closed); each
	// channel's circuit is its account's (ChannelCircuits)
	// (docs/design/decisions.md section 17).
	attempts *prometheus.CounterVec
	reroutes *prometheus.CounterVec
	circuits *prometheus.GaugeVec
}

// Attempt counts a payment attempt's end on a channel (its alias) of a
// provider account.
func (m *Metrics) Attempt(channel, provider, outcome string) {
	m.attempts.WithLabelValues(channel, provider, outcome).Inc()
}

// Reroute counts a payment moved from a channel of a provider account to
// its next.
func (m *Metrics) Reroute(channel, provider, reason string) {
	m.reroutes.WithLabelValues(channel, provider, reason).Inc()
}

// Circuit sets a provider account's circuit: open or not.
func (m *Metrics) Circuit(provider string, open bool) {
	v := 0.0
	if open {
		v = 1
	}
	m.circuits.WithLabelValues(provider).Set(v)
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
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_payment_attempts_total", Help: "Ended payment attempts by channel, its provider account, and outcome.",
		}, []string{"channel", "provider", "outcome"}),
		reroutes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_payment_reroutes_total", Help: "Payments moved to their next channel, by the channel left, its provider account, and why.",
		}, []string{"channel", "provider", "reason"}),
		circuits: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "paygate_provider_circuit_open", Help: "1 while a provider account's circuit is open in this process.",
		}, []string{"provider"}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.Jobs, m.attempts, m.reroutes, m.circuits,
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

// ChannelCircuits exports each channel's circuit at every scrape:
// paygate_channel_circuit_open{channel,provider} is 1 while the circuit of
// the channel's account is open in this process (a channel's acquirer is
// its account's, and so is its circuit). channels lists the channels;
// open tells an account's circuit. A scrape whose list fails goes without
// this metric (the failure is logged): the others still answer.
func (m *Metrics) ChannelCircuits(channels func(context.Context) ([]ChannelRef, error), open func(provider string) bool, log *slog.Logger) {
	m.Registry.MustRegister(&channelCircuits{
		desc: prometheus.NewDesc("paygate_channel_circuit_open",
			"1 while the circuit of a channel's provider account is open in this process.", []string{"channel", "provider"}, nil),
		channels: channels, open: open, log: log,
	})
}

// ChannelRef names a channel and its provider account.
type ChannelRef struct{ Alias, Provider string }

type channelCircuits struct {
	desc     *prometheus.Desc
	channels func(context.Context) ([]ChannelRef, error)
	open     func(string) bool
	log      *slog.Logger
}

func (c *channelCircuits) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *channelCircuits) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := c.channels(ctx)
	if err != nil {
		c.log.Warn("metrics: list the channels for their circuits", "error", err)
		return
	}
	for _, r := range list {
		v := 0.0
		if c.open(r.Provider) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, r.Alias, r.Provider)
	}
}

func (m *Metrics) observeRequest(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}
