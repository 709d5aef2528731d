package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
)

// scenarioNames are the load scenarios, for -scenario.
const scenarioNames = "sessions | session-get | channels | bin-lookup | direct | direct-complete | payment-get | payouts"

type config struct {
	scenario string
	db       string
	rate     int
	duration time.Duration
	workers  int
	// warmup is offered at the same rate before the measured load.
	warmup time.Duration
	// ceilingTime is how long each ceiling is measured, after the load on
	// the same database; 0: none.
	ceilingTime    time.Duration
	ceilingWorkers int           // vegeta workers against the bare handler
	p99Bound       time.Duration // the latency bound throughput is judged at
	// cluster: on PostgreSQL, two API processes and one worker instead of
	// one process of role all (docs/operations.md, "Several processes").
	cluster bool
	// routing: the key's routing rules set before the load (routingRules).
	routing bool
}

// routingRules give the key's sandbox channel a route (weight 3, Visa and
// Mastercard, up to 1,000,000 minor units) at position 1 and a second
// channel on the built-in sandbox account with the same rules at the same
// position, weight 1 (docs/design/decisions.md section 17): every payment
// has its rules checked against two channels and the two drawn in order
// by weight (about 3 payments in 4 on sandbox), and none needs a
// failover.
var routingRules = [][]string{
	{"channels", "create", "--alias", "sandbox-b", "--provider", "sandbox", "--methods", "card", "--currencies", "USD"},
	{"channels", "assign", "--key", "{key}", "--channel", "sandbox", "--position", "1", "--weight", "3",
		"--schemes", "visa,mastercard", "--max-amount", "1000000"},
	{"channels", "assign", "--key", "{key}", "--channel", "sandbox-b", "--position", "1", "--weight", "1",
		"--schemes", "visa,mastercard", "--max-amount", "1000000"},
}

// setRouting sets routingRules on the key accessKey and returns the key's
// channels as `channels list` shows them.
func setRouting(ctx context.Context, spec paygateSpec, accessKey string) (string, error) {
	for _, args := range routingRules {
		args = slices.Clone(args)
		for i, a := range args {
			if a == "{key}" {
				args[i] = accessKey
			}
		}
		if err := runCLI(ctx, spec, args...); err != nil {
			return "", err
		}
	}
	args := []string{"channels", "list", "--key", accessKey, "--json", "--data-dir", spec.dataDir}
	if spec.databaseURL != "" {
		args = append(args, "--database-url", spec.databaseURL)
	}
	out, err := exec.CommandContext(ctx, spec.bin, args...).Output()
	if err != nil {
		return "", fmt.Errorf("paygate channels list: %w", err)
	}
	var rows []struct {
		Alias string `json:"alias"`
		Route struct {
			Position  int      `json:"position"`
			Weight    int      `json:"weight"`
			Schemes   []string `json:"schemes"`
			MaxAmount *int64   `json:"max_amount"`
		} `json:"route"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return "", fmt.Errorf("paygate channels list: %w in %q", err, out)
	}
	var parts []string
	for _, r := range rows {
		maxAmount := "any amount"
		if r.Route.MaxAmount != nil {
			maxAmount = fmt.Sprintf("≤ %d", *r.Route.MaxAmount)
		}
		parts = append(parts, fmt.Sprintf("%s at %d (weight %d, %s, %s)", r.Alias, r.Route.Position, r.Route.Weight,
			strings.Join(r.Route.Schemes, ","), maxAmount))
	}
	return strings.Join(parts, "; "), nil
}

// channelsOf counts the channels of the first attempts of payments (at
// most 40 of them): with routing rules, both channels take payments.
func channelsOf(ctx context.Context, cl *client.Client, ids []string) (map[string]int, error) {
	m := map[string]int{}
	for _, id := range ids[:min(len(ids), 40)] {
		var list struct {
			Items []struct {
				Channel string `json:"channel"`
			} `json:"items"`
		}
		if err := cl.JSON(ctx, "GET", "/api/v1/payments/"+id+"/attempts", nil, &list); err != nil {
			return nil, err
		}
		if len(list.Items) > 0 {
			m[list.Items[0].Channel]++
		}
	}
	return m, nil
}

// dbConns is how many goroutines commit at once in the DB ceiling: the
// size of Paygate's PostgreSQL pool (store.Config.MaxConns default); on
// SQLite they queue for its one connection as Paygate's handlers do.
const dbConns = 20

// startBench builds the binary and starts Paygate on a fresh database with
// the rate limit off: one process of role all, or with c.cluster two API
// processes and one worker. It returns the first process (it printed the
// sandbox key), the others, the spec and a stop for all of them.
func startBench(ctx context.Context, c config, dir string) (*paygate, []*paygate, paygateSpec, func(), error) {
	bin, err := paygateBinary(ctx)
	if err != nil {
		return nil, nil, paygateSpec{}, nil, err
	}
	// Keys kept as a production process keeps them (docs/signing.md,
	// "Revoking a key"); a sandbox process keeps none by default. Older
	// binaries ignore the variable.
	spec := paygateSpec{bin: bin, dataDir: filepath.Join(dir, "data"), env: []string{"PAYGATE_KEY_CACHE=5s"}}
	cleanup := func() {}
	if c.db == "postgres" {
		url, drop, err := freshPostgres(ctx)
		if err != nil {
			return nil, nil, spec, nil, err
		}
		spec.databaseURL, cleanup = url, drop
	}
	if c.cluster {
		// The processes of a cluster share one sandbox acquirer: an
		// in-process one holds its state file alone (docs/sandbox.md).
		acq, err := acquirer.Listen("127.0.0.1:0", acquirer.Config{StateFile: filepath.Join(dir, "acquirer.json")})
		if err != nil {
			cleanup()
			return nil, nil, spec, nil, err
		}
		spec.args = append(slices.Clone(spec.args), "--sandbox-url", acq.URL, "--sandbox-key", acq.APIKey)
		dropDB := cleanup
		cleanup = func() { dropDB(); _ = acq.Close() }
	}
	first := spec
	if c.cluster {
		first.role = "api"
	}
	pg, err := startPaygate(ctx, first)
	if err != nil {
		cleanup()
		return nil, nil, spec, nil, err
	}
	var others []*paygate
	stop := func() {
		pg.kill()
		for _, o := range others {
			o.kill()
		}
		cleanup()
	}
	if pg.access == "" {
		stop()
		return nil, nil, spec, nil, errNoKey
	}
	if c.cluster { // after the first: it migrated the database
		for _, role := range []string{"api", "worker"} {
			more := spec
			more.role = role
			o, err := startPaygate(ctx, more)
			if err != nil {
				stop()
				return nil, nil, spec, nil, err
			}
			others = append(others, o)
		}
	}
	return pg, others, spec, stop, nil
}

// spread sends the targets round-robin to the API processes' addresses:
// the signature covers the path, not the host.
func spread(t vegeta.Targeter, from string, to []string) vegeta.Targeter {
	if len(to) < 2 {
		return t
	}
	var n atomic.Uint64
	return func(tg *vegeta.Target) error {
		if err := t(tg); err != nil {
			return err
		}
		tg.URL = to[n.Add(1)%uint64(len(to))] + strings.TrimPrefix(tg.URL, from)
		return nil
	}
}

// result is one run's figures.
type result struct {
	config
	startup           time.Duration
	requests          uint64
	success           float64
	throughput        float64
	p50, p95, p99, mx time.Duration
	cpuPerK           time.Duration // Paygate's
	cpu               cpuUse
	statuses          map[string]int
	// direct-complete: payments accepted, their outcomes delivered to the
	// receiver, per second from the first request to the last delivery.
	completion  completion
	completed   float64
	completedIn time.Duration
	// PostgreSQL, direct-complete: xact_commit of the database per
	// completed payment, River's idle commits over the same time taken off.
	commitsPerPayment, idleCommits float64
	// routing: the key's channels and routes, and the channels of the
	// first attempts of some warm-up payments.
	routes   string
	routed   map[string]int
	dbCeil   dbCeiling
	bareCeil bareCeiling
}

func runScenario(ctx context.Context, c config) (result, error) {
	dir, err := os.MkdirTemp("", "paygate-bench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	pg, others, spec, stop, err := startBench(ctx, c, dir)
	if err != nil {
		return result{}, err
	}
	defer stop()
	cl := client.New(pg.url, pg.access, pg.secret)
	var routes string
	if c.routing {
		if routes, err = setRouting(ctx, spec, pg.access); err != nil {
			return result{}, err
		}
	}
	var rcv *receiver
	if c.scenario == "direct-complete" {
		if rcv, err = startReceiver(); err != nil {
			return result{}, err
		}
		defer rcv.close()
		if err := rcv.register(ctx, cl); err != nil {
			return result{}, err
		}
	}
	targeter, err := scenarioTargeter(ctx, c.scenario, cl)
	if err != nil {
		return result{}, err
	}
	apis := []string{pg.url}
	pids := []int{pg.cmd.Process.Pid}
	for i, o := range others {
		if i == 0 { // the second API process; the last is the worker
			apis = append(apis, o.url)
		}
		pids = append(pids, o.cmd.Process.Pid)
	}
	// The load goes to every API process; the ceilings' captures and the
	// bare handler take the one-process targets.
	load := spread(targeter, pg.url, apis)
	// The bench's own view of Paygate's database: opened as Paygate opens it.
	st, err := store.Open(ctx, store.Config{DatabaseURL: spec.databaseURL, SQLitePath: filepath.Join(spec.dataDir, "paygate.db")})
	if err != nil {
		return result{}, err
	}
	defer st.Close()
	var tpl *txTemplate
	if c.ceilingTime > 0 {
		if tpl, err = captureTemplate(ctx, st, targeter); err != nil {
			return result{}, err
		}
	}
	newAttacker := func() *vegeta.Attacker {
		return vegeta.NewAttacker(vegeta.Workers(uint64(c.workers)), vegeta.MaxWorkers(uint64(c.workers)), vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	}
	var routed map[string]int
	if c.warmup > 0 {
		// Connections opened, statements prepared, caches filled: not
		// measured. Its payments complete before the measured load starts.
		var warm []string
		for res := range newAttacker().Attack(load, vegeta.Rate{Freq: c.rate, Per: time.Second}, c.warmup, "warm-up") {
			warm = append(warm, paymentID(res)...)
		}
		if rcv != nil {
			if _, err := rcv.wait(ctx, warm, 2*time.Minute); err != nil {
				return result{}, fmt.Errorf("warm-up: %w", err)
			}
		}
		if c.routing && rcv != nil {
			if routed, err = channelsOf(ctx, cl, warm); err != nil {
				return result{}, err
			}
		}
	}
	meter := &cpuMeter{paygate: pids}
	var commits *commitCounter
	if c.db == "postgres" {
		// The server's maintenance database: reading the run's own would
		// count as its commits.
		admin, err := sql.Open("pgx", postgresBase())
		if err != nil {
			return result{}, err
		}
		defer admin.Close()
		u, err := url.Parse(spec.databaseURL)
		if err != nil {
			return result{}, err
		}
		meter.admin, meter.dbName = admin, strings.TrimPrefix(u.Path, "/")
		if rcv != nil {
			commits = &commitCounter{admin: admin, name: meter.dbName}
			if err := commits.start(ctx); err != nil {
				return result{}, err
			}
		}
	}
	cpuBefore, err := meter.sample(ctx)
	if err != nil {
		return result{}, err
	}
	var (
		m   vegeta.Metrics
		ids []string
	)
	started := time.Now()
	for res := range newAttacker().Attack(load, vegeta.Rate{Freq: c.rate, Per: time.Second}, c.duration, c.scenario) {
		m.Add(res)
		if rcv != nil {
			ids = append(ids, paymentID(res)...)
		}
	}
	m.Close()
	r := result{config: c, routes: routes, routed: routed, startup: pg.startup, requests: m.Requests, success: m.Success, throughput: m.Throughput,
		p50: m.Latencies.P50, p95: m.Latencies.P95, p99: m.Latencies.P99, mx: m.Latencies.Max, statuses: m.StatusCodes}
	if rcv != nil {
		if r.completion, err = rcv.wait(ctx, ids, 2*time.Minute); err != nil {
			return result{}, err
		}
		r.completedIn = r.completion.last.Sub(started)
		r.completed = float64(r.completion.delivered) / r.completedIn.Seconds()
	}
	cpuAfter, err := meter.sample(ctx)
	if err != nil {
		return result{}, err
	}
	r.cpu = cpuAfter.since(cpuBefore)
	if m.Requests > 0 {
		r.cpuPerK = r.cpu.paygate * 1000 / time.Duration(m.Requests)
	}
	if commits != nil && len(ids) > 0 {
		if r.commitsPerPayment, r.idleCommits, err = commits.perPayment(ctx, len(ids)); err != nil {
			return result{}, err
		}
	}
	if c.ceilingTime == 0 {
		return r, nil
	}
	// The ceilings run with Paygate stopped: nothing else on the database
	// or the cores.
	pg.stop()
	for _, o := range others {
		o.stop()
	}
	if r.dbCeil, err = measureDBCeiling(ctx, st, tpl, dbConns, c.ceilingTime, &cpuMeter{admin: meter.admin, dbName: meter.dbName}); err != nil {
		return result{}, err
	}
	r.bareCeil, err = measureBareCeiling(ctx, c.scenario, pg.secret, targeter, cl.BaseURL, c.ceilingWorkers, c.ceilingTime)
	return r, err
}

// paymentID is the payment a 2xx answer names, if any.
func paymentID(res *vegeta.Result) []string {
	var p struct {
		PaymentID string `json:"payment_id"`
	}
	if res.Code/100 != 2 || json.Unmarshal(res.Body, &p) != nil || p.PaymentID == "" {
		return nil
	}
	return []string{p.PaymentID}
}

// commitCounter reads pg_stat_database.xact_commit of the run's database
// from the server's maintenance database, so its own reads do not count.
type commitCounter struct {
	admin   *sql.DB
	name    string
	from    int64
	started time.Time
}

// statsFlush is longer than the longest a PostgreSQL backend keeps its
// counters before reporting them: a busy backend reports at most once a
// second (PGSTAT_MIN_INTERVAL), and one that then goes idle reports the
// rest after PGSTAT_IDLE_INTERVAL, 10 s (PostgreSQL 15, pgstat.c). With
// 1.5 s, the commits of the pool's connections that went idle at the end
// of the load were counted in the idle window instead, and taken off twice
// (about 0.6 commits per payment too few at 200/s).
const statsFlush = 11 * time.Second

func (c *commitCounter) read(ctx context.Context) (int64, error) {
	var n int64
	err := c.admin.QueryRowContext(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, c.name).Scan(&n)
	return n, err
}

func (c *commitCounter) start(ctx context.Context) error {
	time.Sleep(statsFlush) // the setup's commits reported
	var err error
	c.from, err = c.read(ctx)
	c.started = time.Now()
	return err
}

// perPayment returns the commits of the run per payment, less what an idle
// Paygate commits in as long (River's polling and leadership), and that
// idle rate.
func (c *commitCounter) perPayment(ctx context.Context, payments int) (perPayment, idlePerSecond float64, err error) {
	time.Sleep(statsFlush)
	to, err := c.read(ctx)
	if err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(c.started)
	idleFrom, err := c.read(ctx)
	if err != nil {
		return 0, 0, err
	}
	idleStart := time.Now()
	time.Sleep(elapsed)
	idleTo, err := c.read(ctx)
	if err != nil {
		return 0, 0, err
	}
	idlePerSecond = float64(idleTo-idleFrom) / time.Since(idleStart).Seconds()
	return (float64(to-c.from) - idlePerSecond*elapsed.Seconds()) / float64(payments), idlePerSecond, nil
}

// scenarioTargeter signs each request afresh (a new nonce, and for a POST a
// new Idempotency-Key), as a merchant's backend would.
func scenarioTargeter(ctx context.Context, name string, cl *client.Client) (vegeta.Targeter, error) {
	signEach := func(method, target string, next func() []byte) func(*vegeta.Target) error {
		return func(t *vegeta.Target) error {
			body := next()
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
	sign := func(method, target string, body []byte) func(*vegeta.Target) error {
		return signEach(method, target, func() []byte { return body })
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
	case "bin-lookup":
		// A BIN of the default BIN base (docs/bins.md): answered from the
		// database, the provider not asked.
		return sign(http.MethodGet, "/api/v1/cards/information?bin=55555555", nil), nil
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
	case "payouts":
		// order_id is unique per key for payouts (docs/payouts.md): each
		// request names its own.
		return signEach(http.MethodPost, "/api/v1/payouts", payoutBody), nil
	}
	return nil, fmt.Errorf("unknown scenario %q (%s)", name, scenarioNames)
}

// cpuMeter reads the CPU time of the processes a run involves: Paygate,
// the run's PostgreSQL backends, this process (vegeta, the receiver), and
// the whole machine, which the other engineers' work shares.
type cpuMeter struct {
	paygate []int   // Paygate's processes; none while the ceilings run with Paygate stopped
	admin   *sql.DB // PostgreSQL: finds the backends; nil on SQLite
	dbName  string
}

// cpuSample is the CPU time used so far, and when.
type cpuSample struct {
	at                  time.Time
	paygate, bench      time.Duration
	backends            map[int]time.Duration
	machine, machineAll time.Duration // busy, and busy+idle, over all cores
}

// cpuUse is what a run used: CPU time by process, and the machine's cores
// busy on average.
type cpuUse struct {
	paygate, postgres, bench time.Duration
	cores, others            float64 // cores busy in all, and by every other process
}

func (m *cpuMeter) sample(ctx context.Context) (cpuSample, error) {
	s := cpuSample{at: time.Now(), backends: map[int]time.Duration{}}
	var err error
	for _, pid := range m.paygate {
		t, err := processCPU(pid)
		if err != nil {
			return s, err
		}
		s.paygate += t
	}
	if s.bench, err = processCPU(os.Getpid()); err != nil {
		return s, err
	}
	if m.admin != nil {
		rows, err := m.admin.QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, m.dbName)
		if err != nil {
			return s, err
		}
		for rows.Next() {
			var pid int
			if err := rows.Scan(&pid); err != nil {
				rows.Close()
				return s, err
			}
			if t, err := processCPU(pid); err == nil { // another machine's server: none
				s.backends[pid] = t
			}
		}
		rows.Close()
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		if i >= 8 { // guest time is counted in user already
			break
		}
		v, _ := strconv.ParseInt(f, 10, 64)
		t := time.Duration(v) * time.Second / clkTck
		s.machineAll += t
		if i != 3 && i != 4 { // idle, iowait
			s.machine += t
		}
	}
	return s, nil
}

// since is the use between two samples. A backend that started in between
// counts from zero; one that ended in between is lost (the pool keeps its
// connections for minutes).
func (s cpuSample) since(from cpuSample) cpuUse {
	u := cpuUse{paygate: s.paygate - from.paygate, bench: s.bench - from.bench}
	for pid, t := range s.backends {
		u.postgres += t - from.backends[pid]
	}
	if elapsed := s.at.Sub(from.at); elapsed > 0 {
		u.cores = float64(s.machine-from.machine) / float64(elapsed)
		u.others = max(0, u.cores-float64(u.paygate+u.postgres+u.bench)/float64(elapsed))
	}
	return u
}

// clkTck is USER_HZ on Linux, the unit of /proc's CPU times.
const clkTck = 100

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
	return time.Duration(utime+stime) * time.Second / clkTck, nil
}

// directBody is a Mastercard charge that the sandbox approves.
func directBody() []byte {
	return []byte(fmt.Sprintf(`{"order_id":"bench","amount_minor":1999,"currency":"USD","customer":{"email":"bench@example.com"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		time.Now().Year()+2))
}

// payoutBody is a payout to a Visa card the sandbox pays out, with the
// customer fields a Visa transfer carries (docs/sandbox.md), under a fresh
// order_id.
func payoutBody() []byte {
	return []byte(fmt.Sprintf(`{"order_id":"bench-%s","amount_minor":2500,"currency":"USD","account":"bench",
		"customer":{"first_name":"Ada","last_name":"Lovelace","email":"bench@example.com","billing_address":{"country":"GB","line1":"1 Street"}},
		"payout_method":{"type":"card","card":{"number":"4242424242424242","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		uuid.NewString(), time.Now().Year()+2))
}
