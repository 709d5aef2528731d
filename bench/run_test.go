package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestScenarios runs three load scenarios briefly at a low rate on each
// database, with both ceilings measured for a moment: the harness itself
// works end to end, not the figures.
func TestScenarios(t *testing.T) {
	databases(t, func(t *testing.T, db string) {
		for _, scenario := range []string{"sessions", "direct-complete", "payouts"} {
			t.Run(scenario, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				r, err := runScenario(ctx, config{scenario: scenario, db: db, rate: 20, duration: time.Second, workers: 8, warmup: 200 * time.Millisecond,
					ceilingTime: 300 * time.Millisecond, ceilingWorkers: 4, p99Bound: 20 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				var out strings.Builder
				r.print(&out)
				t.Log("\n" + out.String())
				if r.requests < 15 || r.success != 1 {
					t.Fatalf("%d requests, success %.2f, statuses %v", r.requests, r.success, r.statuses)
				}
				for code := range r.statuses {
					if !strings.HasPrefix(code, "2") {
						t.Fatalf("statuses %v", r.statuses)
					}
				}
				if r.dbCeil.commits <= 0 || r.bareCeil.rate <= 0 {
					t.Fatalf("ceilings: DB %.1f/s, bare handler %.1f/s", r.dbCeil.commits, r.bareCeil.rate)
				}
				if db == "sqlite" && r.dbCeil.grouped <= 0 {
					t.Fatalf("no group commit ceiling on SQLite")
				}
				if db == "postgres" && r.dbCeil.pipelined <= 0 {
					t.Fatalf("no pipelined ceiling on PostgreSQL")
				}
				if scenario != "direct-complete" {
					return
				}
				if r.completion.delivered != int(r.requests) || r.completion.bad != 0 || r.completed <= 0 {
					t.Fatalf("completion %+v of %d payments", r.completion, r.requests)
				}
				if db == "postgres" && r.commitsPerPayment <= 0 {
					t.Fatalf("commits per payment %.2f", r.commitsPerPayment)
				}
			})
		}
		// Routing rules on the key (bench -routing): set as listed, and
		// every payment completes on one of the two channels of position 1.
		t.Run("direct-complete with routing rules", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r, err := runScenario(ctx, config{scenario: "direct-complete", db: db, rate: 20, duration: time.Second, workers: 8,
				warmup: time.Second, p99Bound: 20 * time.Millisecond, routing: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.requests < 15 || r.success != 1 || r.completion.delivered != int(r.requests) || r.completion.bad != 0 {
				t.Fatalf("%d requests, success %.2f, completion %+v", r.requests, r.success, r.completion)
			}
			want := "sandbox at 1 (weight 3, visa,mastercard, ≤ 1000000); sandbox-b at 1 (weight 1, visa,mastercard, ≤ 1000000)"
			sampled := r.routed["sandbox"] + r.routed["sandbox-b"]
			if r.routes != want || sampled == 0 || sampled != sum(r.routed) {
				t.Fatalf("routes %q, warm-up payments by channel: %v", r.routes, r.routed)
			}
		})
		if db != "postgres" {
			return
		}
		// Two API processes and a worker: the load spread over the API
		// processes, completed by the worker.
		t.Run("direct-complete on a cluster", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r, err := runScenario(ctx, config{scenario: "direct-complete", db: db, rate: 20, duration: time.Second, workers: 8,
				warmup: 200 * time.Millisecond, p99Bound: 20 * time.Millisecond, cluster: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.requests < 15 || r.success != 1 || r.completion.delivered != int(r.requests) || r.completion.bad != 0 {
				t.Fatalf("%d requests, success %.2f, completion %+v", r.requests, r.success, r.completion)
			}
		})
	})
}

func TestTemplateArgs(t *testing.T) {
	row := templateRow{vals: []any{"01a20887-2969-7eeb-aff4-349c9d4819ba", "ak_kept", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, int64(7)}, fresh: []int{0, 2}}
	a, b := row.args(1), row.args(2)
	if a[0] == b[0] || a[0] != "01a20887-2969-7eeb-aff4-000000000001" {
		t.Fatalf("fresh text keys %v, %v", a[0], b[0])
	}
	if string(a[2].([]byte)) == string(b[2].([]byte)) || len(a[2].([]byte)) != 9 || a[2].([]byte)[0] != 1 {
		t.Fatalf("fresh blob keys %v, %v", a[2], b[2])
	}
	if a[1] != "ak_kept" || a[3] != int64(7) {
		t.Fatalf("other values changed: %v", a)
	}
}

func TestParseSweep(t *testing.T) {
	sc, err := parseSweep("100, 200,400", config{rate: 50}, 0, "")
	if err != nil || len(sc.rates) != 3 || sc.rates[2] != 400 {
		t.Fatalf("%+v %v", sc, err)
	}
	if sc, err = parseSweep("auto", config{rate: 50}, 0, ""); err != nil || sc.rates != nil || sc.step != 50 {
		t.Fatalf("%+v %v", sc, err)
	}
	for _, bad := range []string{"", "0", "100,x", "-5"} {
		if _, err := parseSweep(bad, config{rate: 50}, 0, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// sum adds a map's counts.
func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
