package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sweepConfig is a sweep: one fresh, bounded run per offered rate.
type sweepConfig struct {
	base  config
	rates []int // the rates given; nil: step up from base.rate by step
	step  int
	plot  string // PNG path; "": no plot
}

// maxSweepSteps bounds an automatic sweep.
const maxSweepSteps = 20

// parseSweep reads -sweep: "auto" or a comma-separated list of rates.
func parseSweep(s string, base config, step int, plot string) (sweepConfig, error) {
	sc := sweepConfig{base: base, step: step, plot: plot}
	if sc.step <= 0 {
		sc.step = base.rate
	}
	if s == "auto" {
		if base.rate <= 0 {
			return sc, errors.New("-sweep auto starts at -rate, which must be positive")
		}
		return sc, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return sc, fmt.Errorf("-sweep: %q is not a positive rate", f)
		}
		sc.rates = append(sc.rates, n)
	}
	if len(sc.rates) > maxSweepSteps {
		return sc, fmt.Errorf("-sweep: at most %d rates", maxSweepSteps)
	}
	return sc, nil
}

// bound is the longest a sweep may take.
func (sc sweepConfig) bound() time.Duration {
	steps := maxSweepSteps + 1
	if sc.rates != nil {
		steps = len(sc.rates)
	}
	return time.Duration(steps)*(sc.base.duration+2*time.Minute) + 2*sc.base.ceilingTime + 3*time.Minute
}

// fallsBehind says a step is past what Paygate can take: errors, or the
// offered rate not achieved (accepted, or for direct-complete completed end
// to end).
func fallsBehind(r result) bool {
	if r.success < 1 || r.throughput < 0.95*float64(r.rate) {
		return true
	}
	return r.scenario == "direct-complete" && r.completed < 0.9*float64(r.rate)
}

// stopSweep ends an automatic sweep at the first step that fails or falls
// behind the offered rate (accepting, or completing end to end), or at the
// second in a row whose p99 passes a second (one alone may be a pause of
// the shared machine): the maximum rate is then known.
func stopSweep(steps []result) bool {
	last := steps[len(steps)-1]
	if fallsBehind(last) {
		return true
	}
	return len(steps) > 1 && last.p99 > time.Second && steps[len(steps)-2].p99 > time.Second
}

// withinBound says a step kept its promise: every request answered 2xx,
// the offered rate achieved and p99 under the bound.
func withinBound(r result) bool {
	return r.success == 1 && r.throughput >= 0.95*float64(r.rate) && r.p99 <= r.p99Bound
}

// runSweep runs the steps (the ceilings in the first only: they do not
// depend on the offered rate), then, for an automatic sweep, one more at
// half the maximum rate reached, and prints the table and its findings.
func runSweep(ctx context.Context, sc sweepConfig, out, progress io.Writer) error {
	var steps []result
	run := func(rate int) error {
		c := sc.base
		c.rate = rate
		if len(steps) > 0 {
			c.ceilingTime = 0
		}
		fmt.Fprintf(progress, "bench: %s on %s at %d/s for %s …\n", c.scenario, c.db, rate, c.duration)
		r, err := runScenario(ctx, c)
		if err != nil {
			return fmt.Errorf("at %d/s: %w", rate, err)
		}
		fmt.Fprintf(progress, "  %s\n", r.row())
		steps = append(steps, r)
		return nil
	}
	if sc.rates != nil {
		for _, rate := range sc.rates {
			if err := run(rate); err != nil {
				return err
			}
		}
	} else {
		for rate := sc.base.rate; len(steps) < maxSweepSteps; rate += sc.step {
			if err := run(rate); err != nil {
				return err
			}
			if stopSweep(steps) {
				break
			}
		}
		half := int(math.Round(maxThroughput(steps) / 2))
		if near := nearest(steps, half); half > 0 && math.Abs(float64(near.rate-half)) > 0.05*float64(half) {
			if err := run(half); err != nil {
				return err
			}
		}
	}
	ceilings := steps[0]
	sort.Slice(steps, func(i, j int) bool { return steps[i].rate < steps[j].rate })
	printSweep(out, sc, steps, ceilings)
	if sc.plot != "" {
		title := fmt.Sprintf("%s on %s: latency against offered load (%s runs)", sc.base.scenario, dbLabel(sc.base.db), sc.base.duration)
		if err := writePlot(sc.plot, title, steps, sc.base.p99Bound); err != nil {
			return err
		}
		fmt.Fprintf(out, "plot: %s\n", sc.plot)
	}
	return nil
}

// maxThroughput is the most 2xx answers per second any step achieved.
func maxThroughput(steps []result) float64 {
	best := 0.0
	for _, r := range steps {
		best = math.Max(best, r.throughput)
	}
	return best
}

// nearest is the step whose offered rate is closest to rate.
func nearest(steps []result, rate int) result {
	best := steps[0]
	for _, r := range steps {
		if math.Abs(float64(r.rate-rate)) < math.Abs(float64(best.rate-rate)) {
			best = r
		}
	}
	return best
}

func printSweep(w io.Writer, sc sweepConfig, steps []result, ceilings result) {
	bound := sc.base.p99Bound
	deployment := "one process"
	if sc.base.cluster {
		deployment = "2 API processes + 1 worker, the load spread over the API processes; Paygate CPU is the three's"
	}
	fmt.Fprintf(w, "sweep %s on %s (%s): each step a fresh Paygate and database, %s of warm-up then %s of open-loop load; p99 bound %s\n\n",
		sc.base.scenario, sc.base.db, deployment, sc.base.warmup, sc.base.duration, bound)
	complete, pg := sc.base.scenario == "direct-complete", sc.base.db == "postgres"
	header, rule := "| offered | achieved | success | p50 | p95 | p99 | Paygate CPU / 1000 req |", "|---|---|---|---|---|---|---|"
	if pg {
		header, rule = header+" PostgreSQL CPU / 1000 req |", rule+"---|"
	}
	header, rule = header+" cores busy (by others) |", rule+"---|"
	if complete {
		header, rule = header+" completed end to end | commits / payment |", rule+"---|---|"
	}
	fmt.Fprintln(w, header)
	fmt.Fprintln(w, rule)
	for _, r := range steps {
		fmt.Fprintf(w, "| %d/s | %.1f/s | %.2f%% | %s | %s | %s | %.2f s |", r.rate, r.throughput, r.success*100,
			roundMs(r.p50), roundMs(r.p95), roundMs(r.p99), r.cpuPerK.Seconds())
		if pg {
			fmt.Fprintf(w, " %.2f s |", r.perK(r.cpu.postgres).Seconds())
		}
		fmt.Fprintf(w, " %.2f (%.2f) |", r.cpu.cores, r.cpu.others)
		if complete {
			commits := "—"
			if r.commitsPerPayment > 0 {
				commits = fmt.Sprintf("%.1f", r.commitsPerPayment)
			}
			fmt.Fprintf(w, " %.1f/s | %s |", r.completed, commits)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if ceilings.dbCeil.commits > 0 {
		ceilings.printCeilings(w, "")
	}
	var best *result
	for i := range steps {
		if withinBound(steps[i]) && (best == nil || steps[i].rate > best.rate) {
			best = &steps[i]
		}
	}
	if best == nil {
		fmt.Fprintf(w, "throughput at p99 ≤ %s: none of the rates kept p99 under the bound\n", bound)
	} else {
		fmt.Fprintf(w, "throughput at p99 ≤ %s: %.1f/s (offered %d/s; p99 %s); ratio to DB commit ceiling %s, to DB group commit %s, to bare handler %s\n",
			bound, best.throughput, best.rate, roundMs(best.p99), ratio(best.throughput, ceilings.dbCeil.commits),
			ratio(best.throughput, ceilings.dbCeil.grouped), ratio(best.throughput, ceilings.bareCeil.rate))
	}
	top := maxThroughput(steps)
	saturatedAt := "never fell behind within the sweep: a lower bound"
	for _, r := range steps {
		if fallsBehind(r) {
			saturatedAt = fmt.Sprintf("falls behind from %d/s offered", r.rate)
			break
		}
	}
	fmt.Fprintf(w, "maximum rate        %.1f/s achieved (%s)\n", top, saturatedAt)
	if sc.base.scenario == "direct-complete" {
		best := 0.0
		for _, r := range steps {
			best = math.Max(best, r.completed)
		}
		fmt.Fprintf(w, "completed at most   %.1f payments/s end to end\n", best)
	}
	if half := nearest(steps, int(math.Round(top/2))); top > 0 {
		verdict := "under"
		if half.p99 > bound {
			verdict = "OVER"
		}
		fmt.Fprintf(w, "at half of it       offered %d/s: p99 %s (%s the %s bound)\n", half.rate, roundMs(half.p99), verdict, bound)
	}
	if best != nil {
		fmt.Fprintf(w, "paste (the rate at the bound): %s\n", best.withCeilings(ceilings).row())
	}
}

// withCeilings is r with the ceilings measured in another step of the sweep.
func (r result) withCeilings(c result) result {
	r.dbCeil, r.bareCeil = c.dbCeil, c.bareCeil
	return r
}
