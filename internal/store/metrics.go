package store

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Collectors are the store's metrics: the connection pool's statistics and
// River's jobs by state, read from the database at scrape time
// (docs/operations.md, "Metrics").
func (s *Store) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		collectors.NewDBStatsCollector(s.db, "paygate"),
		&jobStates{s: s, desc: prometheus.NewDesc("paygate_jobs",
			"River jobs by state, read from the database at scrape time.", []string{"state"}, nil)},
	}
}

// jobStates counts River jobs by state when scraped.
type jobStates struct {
	s    *Store
	desc *prometheus.Desc
}

func (j *jobStates) Describe(ch chan<- *prometheus.Desc) { ch <- j.desc }

func (j *jobStates) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := j.s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM river_job GROUP BY state`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(j.desc, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var (
			state string
			n     float64
		)
		if err := rows.Scan(&state, &n); err != nil {
			ch <- prometheus.NewInvalidMetric(j.desc, err)
			return
		}
		ch <- prometheus.MustNewConstMetric(j.desc, prometheus.GaugeValue, n, state)
	}
}
