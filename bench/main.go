// Command bench measures a real Paygate on loopback and proves what it
// survives.
//
// Load scenarios build and start the binary on a fresh database, then drive
// it open-loop with vegeta at a fixed rate for a fixed time, and print
// throughput, latency percentiles and the server's CPU per thousand
// requests:
//
//	go run ./bench -scenario sessions -db sqlite -rate 300 -duration 10s
//	go run ./bench -scenario direct -db postgres -rate 300 -duration 10s
//
// Reliability checks run a scenario against real processes and print PASS or
// FAIL with their figures (exit status 1 on FAIL):
//
//	go run ./bench -check duplicate-storm -db postgres
//	go run ./bench -check crash-chaos -db postgres
//
// PostgreSQL runs create a fresh database on PAYGATE_BENCH_DATABASE_URL
// (else PAYGATE_TEST_DATABASE_URL, else the local server) and drop it after.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	scenario := flag.String("scenario", "sessions", "load: sessions | session-get | channels | direct | direct-complete | payment-get")
	checkName := flag.String("check", "", "reliability: "+checkNames())
	db := flag.String("db", "sqlite", "sqlite or postgres")
	rate := flag.Int("rate", 200, "requests per second offered (open loop)")
	duration := flag.Duration("duration", 10*time.Second, "how long to offer load (bounded: at most 2m); fuzz: time per target")
	workers := flag.Int("workers", 64, "vegeta workers")
	n := flag.Int("n", 0, "reliability: requests or payments (0: the check's full size)")
	kills := flag.Int("kills", 0, "crash-chaos: SIGKILLs at least (0: 20)")
	flag.Parse()
	if *db != "sqlite" && *db != "postgres" {
		fmt.Fprintln(os.Stderr, "bench: -db is sqlite or postgres")
		os.Exit(2)
	}
	if *checkName != "" {
		os.Exit(runCheck(*checkName, *db, *n, *kills, *duration))
	}
	if *duration > 2*time.Minute {
		fmt.Fprintln(os.Stderr, "bench: -duration is bounded to 2m")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration+3*time.Minute)
	defer cancel()
	res, err := runScenario(ctx, config{scenario: *scenario, db: *db, rate: *rate, duration: *duration, workers: *workers})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
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
