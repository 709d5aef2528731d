// Command bench measures a real Paygate on loopback: it builds and starts
// the binary on a fresh database, then drives it open-loop with vegeta at a
// fixed rate for a fixed time, and prints throughput, latency percentiles and
// the server's CPU per thousand requests.
//
//	go run ./bench -scenario sessions -db sqlite -rate 300 -duration 10s
//	go run ./bench -scenario sessions -db postgres -rate 300 -duration 10s
//
// PostgreSQL runs use PAYGATE_BENCH_DATABASE_URL (default: the local test
// server) and a fresh database created for the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	scenario := flag.String("scenario", "sessions", "sessions | session-get | channels | direct | direct-complete | payment-get")
	db := flag.String("db", "sqlite", "sqlite or postgres")
	rate := flag.Int("rate", 200, "requests per second offered (open loop)")
	duration := flag.Duration("duration", 10*time.Second, "how long to offer load (bounded: at most 2m)")
	workers := flag.Int("workers", 64, "vegeta workers")
	flag.Parse()
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
