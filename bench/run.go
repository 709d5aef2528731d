package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/paygate/paygate/internal/client"
)

type config struct {
	scenario string
	db       string
	rate     int
	duration time.Duration
	workers  int
}

// startBench builds the binary and starts one Paygate (role all) on a
// fresh database with the rate limit off.
func startBench(ctx context.Context, c config, dir string) (*paygate, func(), error) {
	bin, err := buildPaygate(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	spec := paygateSpec{bin: bin, dataDir: filepath.Join(dir, "data")}
	cleanup := func() {}
	if c.db == "postgres" {
		url, drop, err := freshPostgres(ctx)
		if err != nil {
			return nil, nil, err
		}
		spec.databaseURL, cleanup = url, drop
	}
	pg, err := startPaygate(ctx, spec)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if pg.access == "" {
		pg.kill()
		cleanup()
		return nil, nil, errNoKey
	}
	return pg, func() { pg.kill(); cleanup() }, nil
}

// result is one run's figures.
type result struct {
	config
	startup           time.Duration
	requests          uint64
	success           float64
	throughput        float64
	p50, p95, p99, mx time.Duration
	cpuPerK           time.Duration
	statuses          map[string]int
	completed         float64 // payments settled per second, first request to last settled
	completedIn       time.Duration
}

func (r result) print(w io.Writer) {
	fmt.Fprintf(w, "scenario %s on %s: offered %d/s for %s\n", r.scenario, r.db, r.rate, r.duration)
	fmt.Fprintf(w, "  start-up            %s\n", r.startup)
	fmt.Fprintf(w, "  requests            %d (success %.2f%%, statuses %v)\n", r.requests, r.success*100, r.statuses)
	fmt.Fprintf(w, "  throughput          %.1f/s\n", r.throughput)
	fmt.Fprintf(w, "  latency p50/p95/p99 %s / %s / %s (max %s)\n", r.p50.Round(10*time.Microsecond), r.p95.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.mx.Round(10*time.Microsecond))
	fmt.Fprintf(w, "  server CPU          %s per 1000 requests\n", r.cpuPerK.Round(time.Millisecond))
	if r.completed > 0 {
		fmt.Fprintf(w, "  completed           %.1f payments/s (all %d final after %s)\n", r.completed, r.requests, r.completedIn.Round(time.Millisecond))
	}
}

func runScenario(ctx context.Context, c config) (result, error) {
	dir, err := os.MkdirTemp("", "paygate-bench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	pg, stop, err := startBench(ctx, c, dir)
	if err != nil {
		return result{}, err
	}
	defer stop()
	cl := client.New(pg.url, pg.access, pg.secret)
	targeter, err := scenarioTargeter(ctx, c.scenario, cl)
	if err != nil {
		return result{}, err
	}
	cpuBefore, err := processCPU(pg.cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	attacker := vegeta.NewAttacker(vegeta.Workers(uint64(c.workers)), vegeta.MaxWorkers(uint64(c.workers)), vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	started := time.Now()
	for res := range attacker.Attack(targeter, vegeta.Rate{Freq: c.rate, Per: time.Second}, c.duration, c.scenario) {
		m.Add(res)
	}
	m.Close()
	var completed time.Duration
	if c.scenario == "direct-complete" {
		if completed, err = waitSettled(ctx, cl, time.Since(started)); err != nil {
			return result{}, err
		}
	}
	cpuAfter, err := processCPU(pg.cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	r := result{config: c, startup: pg.startup, requests: m.Requests, success: m.Success, throughput: m.Throughput,
		p50: m.Latencies.P50, p95: m.Latencies.P95, p99: m.Latencies.P99, mx: m.Latencies.Max, statuses: m.StatusCodes}
	if m.Requests > 0 {
		r.cpuPerK = (cpuAfter - cpuBefore) * 1000 / time.Duration(m.Requests)
	}
	if completed > 0 {
		r.completed = float64(m.Requests) / completed.Seconds()
		r.completedIn = completed
	}
	return r, nil
}

// scenarioTargeter signs each request afresh (a new nonce, and for a POST a
// new Idempotency-Key), as a merchant's backend would.
func scenarioTargeter(ctx context.Context, name string, cl *client.Client) (vegeta.Targeter, error) {
	sign := func(method, target string, body []byte) func(*vegeta.Target) error {
		return func(t *vegeta.Target) error {
			r, _ := http.NewRequest(method, cl.BaseURL+target, nil)
			cl.Sign(r, body)
			t.Method, t.URL, t.Body, t.Header = method, cl.BaseURL+target, body, r.Header
			if method == http.MethodPost {
				t.Header.Set("Content-Type", "application/json")
				t.Header.Set("Idempotency-Key", uuid.NewString())
			}
			return nil
		}
	}
	switch name {
	case "sessions":
		body := []byte(`{"order_id":"bench","amount_minor":1999,"currency":"USD","description":"Benchmark tea"}`)
		return sign(http.MethodPost, "/api/v1/payment-sessions", body), nil
	case "session-get":
		var p struct {
			SessionID string `json:"session_id"`
		}
		if err := cl.JSON(ctx, "POST", "/api/v1/payment-sessions", json.RawMessage(`{"order_id":"bench","amount_minor":5,"currency":"USD"}`), &p); err != nil {
			return nil, err
		}
		return sign(http.MethodGet, "/api/v1/payment-sessions/"+p.SessionID, nil), nil
	case "channels":
		return sign(http.MethodGet, "/api/v1/payment-channels", nil), nil
	case "direct", "direct-complete":
		return sign(http.MethodPost, "/api/v1/payments/direct", directBody()), nil
	case "payment-get":
		var p struct {
			PaymentID string `json:"payment_id"`
		}
		if err := cl.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(directBody()), &p); err != nil {
			return nil, err
		}
		return sign(http.MethodGet, "/api/v1/payments/"+p.PaymentID, nil), nil
	}
	return nil, fmt.Errorf("unknown scenario %q", name)
}

// processCPU is the user+system CPU time a process has used (Linux).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clkTck, nil
}

// directBody is a Mastercard charge that the sandbox approves.
func directBody() []byte {
	return []byte(fmt.Sprintf(`{"order_id":"bench","amount_minor":1999,"currency":"USD","customer":{"email":"bench@example.com"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		time.Now().Year()+2))
}

// waitSettled waits until no payment is processing and returns how long it
// took from the first request.
func waitSettled(ctx context.Context, cl *client.Client, sinceStart time.Duration) (time.Duration, error) {
	start := time.Now().Add(-sinceStart)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := cl.JSON(ctx, "GET", "/api/v1/payments?status=processing&limit=1", nil, &page); err != nil {
			return 0, err
		}
		if len(page.Items) == 0 {
			return time.Since(start), nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, errors.New("payments did not settle within 2 minutes")
}
