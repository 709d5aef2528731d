package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store"
)

// The mode -reconcile measures reconciliation at scale (docs/reconciliation.md, "Scale: bounded memory"): a day of n payments
// (1,000,000 unless -n) reconciles in bounded memory and in minutes.
//
//	go run ./bench -reconcile -db sqlite -n 1000000
//	go run ./bench -reconcile -db postgres -n 100000
//
// Paygate's side is written straight into a fresh database (dayPlan.seed);
// the acquirer's is a sandbox acquirer in a child process (this program
// again), its ledger planted with the same day and twenty breaks, read over
// HTTP through the sandbox adapter as a real run reads it. The child keeps
// the ledger out of this process, so that the memory measured here is the
// run's own: the Go heap in use and the resident set, sampled every 50 ms
// during reconcile.Service.Run, above their level just before it. The run
// fails unless it finds exactly the planted breaks.

const reconcileAccount = "acq"

// reconcileRun is one measured run.
type reconcileRun struct {
	db        string
	n         int
	seeded    time.Duration // not part of the figure
	took      time.Duration
	phases    *phaseTimes
	res       reconcile.Result
	stored    int // breaks stored by the run
	base      memSample
	peak      memSample
	samples   int
	ledgerLen int
}

// runReconcile is the mode's command: one run, one line, exit status 1 on
// a wrong result.
func runReconcile(db string, n int) int {
	if n == 0 {
		n = 1000000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	run, err := reconcileScale(ctx, db, n, os.Stderr)
	if err == nil {
		err = run.check()
	}
	if run.phases != nil {
		fmt.Println(run.line())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: reconcile:", err)
		return 1
	}
	return 0
}

// reconcileScale seeds a fresh database and a ledger with a day of n
// payments and reconciles it once, measured.
func reconcileScale(ctx context.Context, db string, n int, log io.Writer) (reconcileRun, error) {
	run := reconcileRun{db: db, n: n}
	if n < 1000 {
		return run, errors.New("-n must be at least 1000")
	}
	plan := dayPlan{n: n, day: reconcileDay}
	cfg := store.Config{}
	if db == "postgres" {
		url, drop, err := freshPostgres(ctx)
		if err != nil {
			return run, err
		}
		defer drop()
		cfg.DatabaseURL = url
	} else {
		dir, err := os.MkdirTemp("", "paygate-reconcile-")
		if err != nil {
			return run, err
		}
		defer os.RemoveAll(dir)
		cfg.SQLitePath = filepath.Join(dir, "paygate.db")
	}
	st, err := store.Open(ctx, cfg)
	if err != nil {
		return run, err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return run, err
	}
	start := time.Now()
	led, err := startLedger(ctx, n)
	if err != nil {
		return run, err
	}
	defer led.stop()
	if err := plan.seed(ctx, st, reconcileAccount); err != nil {
		return run, err
	}
	run.seeded = time.Since(start)
	fmt.Fprintf(log, "reconcile: %s seeded with %d payments (%d movements a side) in %s\n", db, n, plan.movements(),
		run.seeded.Round(time.Millisecond))

	run.phases = &phaseTimes{}
	timed := &timedStore{Store: st, t: run.phases}
	adapter := sandbox.NewAdapter(led.url, led.key, nil)
	svc := reconcile.NewService(timed, oneProvider{reconcileAccount, adapter},
		func() time.Time { return plan.day.Add(27 * time.Hour) })
	runtime.GC()
	debug.FreeOSMemory()
	run.base = sampleSelf()
	stopSampling := sampleWhile(&run)
	stopProfile, err := profileRun()
	if err != nil {
		return run, err
	}
	start = time.Now()
	run.res, err = svc.Run(ctx, reconcileAccount, plan.day)
	run.took = time.Since(start)
	stopProfile()
	stopSampling()
	if err != nil {
		return run, err
	}
	bs, err := st.ReconciliationBreaks(ctx, reconcileAccount, plan.day)
	run.stored = len(bs)
	return run, err
}

// check compares the run's result with what was planted: five breaks each
// of four kinds, every other movement matched.
func (r reconcileRun) check() error {
	plan := dayPlan{n: r.n, day: reconcileDay}
	ours := plan.movements()
	want := reconcile.Result{Paygate: ours, AtProvider: ours - planted + planted + planted, Matched: ours - 3*planted,
		ByKind: map[string]int{reconcile.MissingAtProvider: planted, reconcile.MissingInPaygate: planted,
			reconcile.AmountMismatch: planted, reconcile.DuplicateAtProvider: planted}}
	var wrong []string
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"Paygate's movements", r.res.Paygate, want.Paygate},
		{"the acquirer's", r.res.AtProvider, want.AtProvider},
		{"matched", r.res.Matched, want.Matched},
		{"pending", r.res.Pending, 0},
		{"breaks stored", r.stored, 4 * planted},
	} {
		if c.got != c.want {
			wrong = append(wrong, fmt.Sprintf("%s %d, want %d", c.name, c.got, c.want))
		}
	}
	for _, k := range reconcile.BreakKinds {
		if r.res.ByKind[k] != want.ByKind[k] {
			wrong = append(wrong, fmt.Sprintf("%s %d, want %d", k, r.res.ByKind[k], want.ByKind[k]))
		}
	}
	if wrong != nil {
		return fmt.Errorf("the run did not find what was planted: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// line is the run's one-line report.
func (r reconcileRun) line() string {
	p := r.phases
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return fmt.Sprintf("reconcile %s n=%d: %d+%d movements, %d matched, %d breaks; run %s (stage Paygate %s, "+
		"read+stage acquirer %s [inserts %s], match by ref %s, compare %s, finish %s); "+
		"peak above baseline: heap in use +%s, RSS +%s (baseline heap %s, RSS %s; %d samples); seeding %s",
		r.db, r.n, r.res.Paygate, r.res.AtProvider, r.res.Matched, r.res.Breaks(), ms(r.took), ms(p.paygate),
		ms(p.acquirer()), ms(p.acquirerInserts), ms(p.match), ms(p.compare), ms(p.finish),
		mib(r.peak.heap-r.base.heap), mib(r.peak.rss-r.base.rss), mib(r.base.heap), mib(r.base.rss), r.samples,
		ms(r.seeded))
}

// profileRun writes a CPU profile of the run to the file named by
// PAYGATE_BENCH_CPUPROFILE, when set (go tool pprof reads it).
func profileRun() (stop func(), err error) {
	path := os.Getenv("PAYGATE_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// oneProvider is the run's Providers: the one account.
type oneProvider struct {
	name string
	p    provider.Provider
}

func (o oneProvider) Provider(name string) (provider.Provider, error) {
	if name != o.name {
		return nil, fmt.Errorf("no provider account %q", name)
	}
	return o.p, nil
}

// sampleSelf reads this process's Go heap in use and resident set.
func sampleSelf() memSample {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	m := memSample{heap: int64(s[0].Value.Uint64() + s[1].Value.Uint64())}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				m.rss = kb << 10
			}
		}
	}
	return m
}

// sampleWhile records the peak of sampleSelf into run every 50 ms until
// the function it returns is called.
func sampleWhile(run *reconcileRun) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			s := sampleSelf()
			run.peak.heap, run.peak.rss = max(run.peak.heap, s.heap), max(run.peak.rss, s.rss)
			run.samples++
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// phaseTimes is where a run's time went, as its store calls show it.
type phaseTimes struct {
	paygate, acquirerInserts, match, compare, finish time.Duration
	paygateEnd, matchStart                           time.Time
}

// acquirer is the time from staging Paygate's side to matching: reading
// the acquirer's pages and staging them.
func (p *phaseTimes) acquirer() time.Duration { return p.matchStart.Sub(p.paygateEnd) }

// timedStore is the store, its staging calls timed.
type timedStore struct {
	*store.Store
	t *phaseTimes
}

func (s *timedStore) StagePaygate(ctx context.Context, c reconcile.Claim, from, to time.Time, kinds []string) (int, error) {
	start := time.Now()
	n, err := s.Store.StagePaygate(ctx, c, from, to, kinds)
	s.t.paygateEnd = time.Now()
	s.t.paygate += s.t.paygateEnd.Sub(start)
	return n, err
}

func (s *timedStore) StageProvider(ctx context.Context, c reconcile.Claim, seq int, ms []provider.Movement) error {
	start := time.Now()
	err := s.Store.StageProvider(ctx, c, seq, ms)
	s.t.acquirerInserts += time.Since(start)
	return err
}

func (s *timedStore) MatchStaged(ctx context.Context, c reconcile.Claim) error {
	s.t.matchStart = time.Now()
	err := s.Store.MatchStaged(ctx, c)
	s.t.match = time.Since(s.t.matchStart)
	return err
}

func (s *timedStore) StagedKeys(ctx context.Context, c reconcile.Claim,
	fn func(ours []reconcile.Movement, theirs []provider.Movement) error) error {
	start := time.Now()
	err := s.Store.StagedKeys(ctx, c, fn)
	s.t.compare = time.Since(start)
	return err
}

func (s *timedStore) FinishReconciliation(ctx context.Context, c reconcile.Claim, r reconcile.Result, now time.Time) error {
	start := time.Now()
	err := s.Store.FinishReconciliation(ctx, c, r, now)
	s.t.finish = time.Since(start)
	return err
}

var _ reconcile.Store = (*timedStore)(nil)

// ledgerEnv, set in a child's environment, makes this program (or the
// test binary) a sandbox acquirer with the planted ledger of a day of
// that many payments (serveLedger), before anything else runs.
const ledgerEnv = "PAYGATE_BENCH_RECONCILE_LEDGER"

func init() {
	if v := os.Getenv(ledgerEnv); v != "" {
		os.Exit(serveLedger(v))
	}
}

// serveLedger is the child: it plants the ledger, prints its URL and key
// on a line, and serves until its standard input closes.
func serveLedger(spec string) int {
	n, err := strconv.Atoi(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
		return 2
	}
	acq, err := acquirer.Start(acquirer.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
		return 1
	}
	acq.Server.PlantMany(dayPlan{n: n, day: reconcileDay}.ledger())
	runtime.GC()
	fmt.Printf("%s %s\n", acq.URL, acq.APIKey)
	_, _ = io.Copy(io.Discard, os.Stdin)
	acq.Close()
	return 0
}

// ledgerProcess is a started child acquirer.
type ledgerProcess struct {
	url, key string
	stop     func()
}

// startLedger starts the child acquirer for a day of n payments and waits
// until its ledger is planted.
func startLedger(ctx context.Context, n int) (*ledgerProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), ledgerEnv+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { stdin.Close(); _ = cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, key, ok := strings.Cut(strings.TrimSpace(line), " ")
	if err != nil || !ok {
		stop()
		return nil, fmt.Errorf("the ledger process did not start: %q %v", line, err)
	}
	return &ledgerProcess{url: url, key: key, stop: stop}, nil
}
