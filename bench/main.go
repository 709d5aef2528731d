// Command bench measures a real Paygate on loopback and proves what it
// survives.
//
// Load scenarios build and start the binary on a fresh database, then drive
// it open-loop with vegeta at a fixed rate for a fixed time, and print
// throughput, latency percentiles and the server's CPU per thousand
// requests. After the load, on the same database with Paygate stopped, they
// measure two ceilings and print the throughput as a ratio to each: the
// database's own commit rate for the rows one request writes, and a bare
// net/http handler doing the same HMAC check and JSON decode:
//
//	go run ./bench -scenario sessions -db sqlite -rate 300 -duration 10s
//	go run ./bench -scenario direct -db postgres -rate 300 -duration 10s
//	go run ./bench -scenario payouts -db postgres -rate 200 -duration 10s
//
// A sweep runs one fresh bounded run per offered rate, prints the table and
// the highest rate whose p99 stayed under the bound, and plots p50 and p99
// against offered load:
//
//	go run ./bench -scenario direct -db postgres -sweep auto -rate 100 -step 100 -p99 20ms \
//		-plot docs/images/latency-direct-postgres.png
//	go run ./bench -scenario direct -db sqlite -sweep 100,200,300,400
//
// Reliability checks run a scenario against real processes and print PASS or
// FAIL with their figures (exit status 1 on FAIL):
//
//	go run ./bench -check duplicate-storm -db postgres
//	go run ./bench -check crash-chaos -db postgres
//	go run ./bench -check subscription-chaos -db postgres
//	go run ./bench -check failover -db postgres
//	go run ./bench -check failover-stripe -db postgres
//
// -routing on sets routing rules on the key before a load; -routing both
// runs the load without them, then with them, and prints the ratios:
//
//	go run ./bench -scenario direct-complete -db postgres -rate 200 -duration 10s -ceiling 0 -routing both
//
// -reconcile reconciles a generated day of -n payments (default 1,000,000)
// and prints its time and memory (reconcile.go):
//
//	go run ./bench -reconcile -db postgres -n 1000000
//
// PostgreSQL runs create a fresh database on PAYGATE_BENCH_DATABASE_URL
// (else PAYGATE_TEST_DATABASE_URL, else the local server) and drop it after.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	scenario := flag.String("scenario", "sessions", "load: "+scenarioNames)
	checkName := flag.String("check", "", "reliability: "+checkNames())
	reconcileMode := flag.Bool("reconcile", false, "reconcile a generated day of -n payments (0: 1,000,000), measured")
	db := flag.String("db", "sqlite", "sqlite or postgres")
	rate := flag.Int("rate", 200, "requests per second offered (open loop)")
	duration := flag.Duration("duration", 10*time.Second, "how long to offer load (bounded: at most 2m); fuzz: time per target")
	workers := flag.Int("workers", 64, "vegeta workers")
	n := flag.Int("n", 0, "reliability: requests or payments (0: the check's full size)")
	kills := flag.Int("kills", 0, "crash-chaos: SIGKILLs at least (0: 20)")
	warmup := flag.Duration("warmup", time.Second, "load: offered at -rate before the measured load, not measured")
	ceiling := flag.Duration("ceiling", 5*time.Second, "load: how long each ceiling (DB commits, bare handler) is measured after the load; 0: none")
	ceilingWorkers := flag.Int("ceiling-workers", 32, "load: vegeta workers against the bare handler, at maximum rate")
	p99 := flag.Duration("p99", 20*time.Millisecond, "load: the p99 bound throughput is judged at")
	sweep := flag.String("sweep", "", "load: offered rates to run one after another, \"100,200,400\", or \"auto\": from -rate up by -step until saturated")
	step := flag.Int("step", 0, "sweep auto: the rate step (0: -rate)")
	cluster := flag.Bool("cluster", false, "load, PostgreSQL: two API processes (serve --role api) and one worker (--role worker) on the database, the load spread over the API processes")
	routing := flag.String("routing", "off", "load: off, on (routing rules set on the key before the load: two weighted channels at one position with scheme and amount rules), or both: off then on, back to back, and their ratios")
	plotPath := flag.String("plot", "", "sweep: write a PNG of p50 and p99 latency against offered load here")
	flag.Parse()
	if *db != "sqlite" && *db != "postgres" {
		fmt.Fprintln(os.Stderr, "bench: -db is sqlite or postgres")
		os.Exit(2)
	}
	if *cluster && *db != "postgres" {
		fmt.Fprintln(os.Stderr, "bench: -cluster needs -db postgres (SQLite serves one process)")
		os.Exit(2)
	}
	if *reconcileMode {
		os.Exit(runReconcile(*db, *n))
	}
	if *checkName != "" {
		os.Exit(runCheck(*checkName, *db, *n, *kills, *duration))
	}
	if *duration > 2*time.Minute || *ceiling > time.Minute || *warmup > 10*time.Second {
		fmt.Fprintln(os.Stderr, "bench: -duration is bounded to 2m, -ceiling to 1m, -warmup to 10s")
		os.Exit(2)
	}
	c := config{scenario: *scenario, db: *db, rate: *rate, duration: *duration, workers: *workers, warmup: *warmup,
		ceilingTime: *ceiling, ceilingWorkers: *ceilingWorkers, p99Bound: *p99, cluster: *cluster}
	if *sweep != "" {
		c.routing = *routing == "on"
		sc, err := parseSweep(*sweep, c, *step, *plotPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), sc.bound())
		err = runSweep(ctx, sc, os.Stdout, os.Stderr)
		cancel()
		exitOn(err)
		return
	}
	var runs []bool
	switch *routing {
	case "off":
		runs = []bool{false}
	case "on":
		runs = []bool{true}
	case "both":
		runs = []bool{false, true}
	default:
		fmt.Fprintln(os.Stderr, "bench: -routing is off, on or both")
		os.Exit(2)
	}
	var results []result
	for _, on := range runs {
		c.routing = on
		ctx, cancel := context.WithTimeout(context.Background(), *duration+*ceiling*3+3*time.Minute)
		res, err := runScenario(ctx, c)
		cancel()
		exitOn(err)
		res.print(os.Stdout)
		results = append(results, res)
	}
	if len(results) == 2 {
		printRoutingCost(os.Stdout, results[0], results[1])
	}
}

// printRoutingCost compares a run with routing rules (on) with one without
// (off): what the rules cost a payment that needs no failover.
func printRoutingCost(w io.Writer, off, on result) {
	div := func(a, b float64) string {
		if b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.3f", a/b)
	}
	fmt.Fprintf(w, "routing rules on / off\n")
	fmt.Fprintf(w, "  throughput          %.1f/s / %.1f/s = %s\n", on.throughput, off.throughput, div(on.throughput, off.throughput))
	fmt.Fprintf(w, "  p50 / p99           %s / %s on, %s / %s off\n", roundMs(on.p50), roundMs(on.p99), roundMs(off.p50), roundMs(off.p99))
	fmt.Fprintf(w, "  server CPU / 1000   %s / %s = %s\n", on.cpuPerK.Round(time.Millisecond), off.cpuPerK.Round(time.Millisecond),
		div(float64(on.cpuPerK), float64(off.cpuPerK)))
	if on.completed > 0 || off.completed > 0 {
		fmt.Fprintf(w, "  completed           %.1f/s / %.1f/s = %s\n", on.completed, off.completed, div(on.completed, off.completed))
	}
	if on.commitsPerPayment > 0 || off.commitsPerPayment > 0 {
		fmt.Fprintf(w, "  commits per payment %.2f on, %.2f off\n", on.commitsPerPayment, off.commitsPerPayment)
	}
}

// exitOn ends the process on a load run's error, after removing the
// binary the runs shared.
func exitOn(err error) {
	removeBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runCheck runs one reliability check (bounded to 30 minutes) and returns
// the exit status.
func runCheck(name, db string, n, kills int, duration time.Duration) int {
	run, ok := checks[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: unknown check %q (%s)\n", name, checkNames())
		return 2
	}
	dir, err := os.MkdirTemp("", "paygate-check-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	defer removeBinary() // the checks that share one build through paygateBinary
	if !flagSet("duration") {
		duration = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res, err := run(ctx, checkConfig{db: db, n: n, kills: kills, duration: duration, dir: dir, log: os.Stderr})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
		return 1
	}
	res.print(os.Stdout)
	if !res.pass {
		return 1
	}
	return 0
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
