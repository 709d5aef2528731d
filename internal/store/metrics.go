package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/paygate/paygate/internal/reconcile"
)

// Collectors are the store's metrics: the connection pool's statistics and
// River's jobs by state, read from the database at scrape time
// (docs/operations.md, "Metrics").
func (s *Store) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		collectors.NewDBStatsCollector(s.db, "paygate"),
		&jobStates{s: s, desc: prometheus.NewDesc("paygate_jobs",
			"River jobs by state, read from the database at scrape time.", []string{"state"}, nil)},
		&reconciliationBreaks{s: s, desc: prometheus.NewDesc("paygate_reconciliation_breaks",
			"Breaks of each provider account's latest reconciled day, by kind, read at scrape time.",
			[]string{"provider", "day", "kind"}, nil)},
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

// reconciliationBreaks counts, when scraped, the breaks of each account's
// latest reconciled day by kind, every kind (0
// too): the metrics of docs/design/decisions.md section 18, whichever
// process ran it. Orphans (missing_in_paygate with no operation id: no
// key to show them to) are among them, for operators.
type reconciliationBreaks struct {
	s    *Store
	desc *prometheus.Desc
}

func (r *reconciliationBreaks) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

func (r *reconciliationBreaks) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := r.s.db.QueryContext(ctx, `SELECT l.provider, l.day, b.kind, COUNT(b.kind)
		FROM reconciliation_runs l LEFT JOIN reconciliation_breaks b ON b.provider = l.provider AND b.day = l.day
		WHERE l.status = 'done' AND l.day = (SELECT MAX(r2.day) FROM reconciliation_runs r2
			WHERE r2.provider = l.provider AND r2.status = 'done')
		GROUP BY l.provider, l.day, b.kind`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(r.desc, err)
		return
	}
	defer rows.Close()
	type day struct{ provider, day string }
	counts := map[day]map[string]float64{}
	for rows.Next() {
		var (
			d    day
			kind sql.NullString
			n    float64
		)
		if err := rows.Scan(&d.provider, &d.day, &kind, &n); err != nil {
			ch <- prometheus.NewInvalidMetric(r.desc, err)
			return
		}
		if counts[d] == nil {
			counts[d] = map[string]float64{}
		}
		if kind.Valid {
			counts[d][kind.String] = n
		}
	}
	for d, byKind := range counts {
		for _, k := range reconcile.BreakKinds {
			ch <- prometheus.MustNewConstMetric(r.desc, prometheus.GaugeValue, byKind[k], d.provider, d.day, k)
		}
	}
}
