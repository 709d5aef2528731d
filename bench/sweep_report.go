package main

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The report of a run, in lines that can be pasted into docs/benchmarks.md.

func dbLabel(db string) string {
	if db == "postgres" {
		return "PostgreSQL"
	}
	return "SQLite"
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// roundMs rounds for reading: 2 significant figures under 10 ms.
func roundMs(d time.Duration) string {
	if d < 10*time.Millisecond {
		return ms(d.Round(100*time.Microsecond)) + " ms"
	}
	return ms(d.Round(time.Millisecond)) + " ms"
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "—"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64)
}

func (r result) print(w io.Writer) {
	fmt.Fprintf(w, "scenario %s on %s: offered %d/s for %s (after %s of warm-up)\n", r.scenario, r.db, r.rate, r.duration, r.warmup)
	if r.routing {
		fmt.Fprintf(w, "  routing rules       %s; first attempts of warm-up payments: %s\n", r.routes, tallyText(r.routed))
	}
	fmt.Fprintf(w, "  start-up            %s\n", r.startup)
	fmt.Fprintf(w, "  requests            %d (success %.2f%%, statuses %v)\n", r.requests, r.success*100, r.statuses)
	fmt.Fprintf(w, "  throughput          %.1f/s\n", r.throughput)
	fmt.Fprintf(w, "  latency p50/p95/p99 %s / %s / %s (max %s)\n", roundMs(r.p50), roundMs(r.p95), roundMs(r.p99), roundMs(r.mx))
	if r.p99Bound > 0 {
		verdict := "met"
		if r.p99 > r.p99Bound || r.success < 1 {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "  p99 bound %-9s %s at %d/s offered\n", r.p99Bound, verdict, r.rate)
	}
	fmt.Fprintf(w, "  server CPU          %s per 1000 requests\n", r.cpuPerK.Round(time.Millisecond))
	if r.requests > 0 {
		perK := func(d time.Duration) time.Duration { return r.perK(d).Round(time.Millisecond) }
		fmt.Fprintf(w, "  other CPU           PostgreSQL backends %s, load generator and receiver %s per 1000 requests\n",
			perK(r.cpu.postgres), perK(r.cpu.bench))
		fmt.Fprintf(w, "  cores busy          %.2f of %d on average (%.2f by other processes: PostgreSQL's own, other users')\n",
			r.cpu.cores, runtime.NumCPU(), r.cpu.others)
	}
	if r.completed > 0 {
		fmt.Fprintf(w, "  completed           %.1f payments/s end to end (%d of %d outcomes delivered, %d succeeded, last after %s; %d deliveries, %d refused)\n",
			r.completed, r.completion.delivered, r.requests, r.completion.succeeded, r.completedIn.Round(time.Millisecond),
			r.completion.deliveries, r.completion.bad)
	}
	if r.commitsPerPayment > 0 {
		fmt.Fprintf(w, "  commits per payment %.2f (pg_stat_database.xact_commit, idle baseline %.1f commits/s taken off)\n", r.commitsPerPayment, r.idleCommits)
	}
	if r.dbCeil.commits > 0 {
		r.printCeilings(w, "  ")
		fmt.Fprintf(w, "  ratio to DB commit ceiling   %s\n", ratio(r.throughput, r.dbCeil.commits))
		if r.dbCeil.grouped > 0 {
			fmt.Fprintf(w, "  ratio to DB group commit     %s\n", ratio(r.throughput, r.dbCeil.grouped))
		}
		fmt.Fprintf(w, "  ratio to bare handler        %s\n", ratio(r.throughput, r.bareCeil.rate))
	}
	fmt.Fprintf(w, "  paste: %s\n", r.row())
	fmt.Fprintf(w, "  (columns: %s)\n", strings.SplitN(rowHeader, "\n", 2)[0])
}

func (r result) printCeilings(w io.Writer, indent string) {
	fmt.Fprintf(w, "%sDB commit ceiling   %.1f commits/s (%d rows a transaction: %s; %d goroutines, %s; CPU %s per 1000 commits)\n",
		indent, r.dbCeil.commits, r.dbCeil.rows, r.dbCeil.tables, r.dbCeil.conns, r.dbCeil.duration, r.dbCeil.cpuPerK.Round(time.Millisecond))
	if r.dbCeil.grouped > 0 {
		fmt.Fprintf(w, "%sDB group commit     %.1f requests/s (the same transactions through store.Batch, sharing commits as Paygate's writes do on SQLite)\n",
			indent, r.dbCeil.grouped)
	}
	if r.dbCeil.pipelined > 0 {
		fmt.Fprintf(w, "%sDB pipelined        %.1f commits/s (the same transactions, each sent as one pgx batch: one round trip; CPU %s per 1000 commits)\n",
			indent, r.dbCeil.pipelined, r.dbCeil.pipelinedCPUPerK.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "%sbare handler        %.1f requests/s (HMAC check + JSON decode into %s; %d workers at maximum rate, %s)\n",
		indent, r.bareCeil.rate, orNone(r.bareCeil.wire), r.bareCeil.workers, r.bareCeil.duration)
}

func orNone(s string) string {
	if s == "" {
		return "no body"
	}
	return s
}

// rowHeader and row are a Markdown table of runs, for docs/benchmarks.md.
const rowHeader = "| scenario | database | offered | achieved | p50 | p95 | p99 | CPU / 1000 req | DB commit ceiling | ratio | DB group commit | ratio | bare handler | ratio |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

func (r result) row() string {
	perSecond := func(v float64) string {
		if v <= 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f/s", v)
	}
	return fmt.Sprintf("| %s | %s | %d/s | %.1f/s | %s | %s | %s | %.2f s | %s | %s | %s | %s | %s | %s |",
		r.scenario, dbLabel(r.db), r.rate, r.throughput, roundMs(r.p50), roundMs(r.p95), roundMs(r.p99), r.cpuPerK.Seconds(),
		perSecond(r.dbCeil.commits), ratio(r.throughput, r.dbCeil.commits),
		perSecond(r.dbCeil.grouped), ratio(r.throughput, r.dbCeil.grouped),
		perSecond(r.bareCeil.rate), ratio(r.throughput, r.bareCeil.rate))
}

// perK is CPU time d per thousand requests of the run.
func (r result) perK(d time.Duration) time.Duration {
	if r.requests == 0 {
		return 0
	}
	return d * 1000 / time.Duration(r.requests)
}
