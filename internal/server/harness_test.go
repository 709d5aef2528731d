package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/client"
	keyclock "github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/server"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/vault"
	"github.com/paygate/paygate/internal/verification"
)

// clock is a settable clock shared by the server and its clients.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// NowUTC and NowUTCOrNil make the clock River's time generator too.
func (c *clock) NowUTC() time.Time       { return c.Now().UTC() }
func (c *clock) NowUTCOrNil() *time.Time { t := c.Now().UTC(); return &t }

// env is a running server on one database with two sandbox keys.
type env struct {
	t         testing.TB
	store     *store.Store
	clock     *clock
	url       string
	merchants *merchant.Service
	server    *server.Server
	acquirer  *acquirer.Server
	acqURL    string // the sandbox's base URL: its pages and API
	bins      *cardinfo.Service
	a, b      *client.Client // two keys of two merchants
	aKey      merchant.Key
	bKey      merchant.Key
	// cfg and deps start another process on the same database (forgery_test.go).
	cfg  server.Config
	deps server.Deps
	// dbConfig and keyring start a second API process with its own pool
	// on the same database (apiProcess, concurrency_test.go).
	dbConfig store.Config
	keyring  *vault.Keyring
	// subs is the subscription domain; its scheduler runs only when a
	// test ticks it.
	subs *subscription.Service
	// ops is the operation engine: a test without workers runs an
	// operation with it when it chooses.
	ops *operation.Engine
	// walkMandate is the active mandate the route walker's subscriptions
	// use (route_statuses_test.go).
	walkMandate string
}

type options struct {
	environment string
	rateLimit   int
	work        bool // run River workers
	faults      acquirer.Faults
	proxies     []netip.Prefix
	binFallback func(ctx context.Context, keyID, bin string) (provider.BINInfo, error)
	// webhookTimeout is how long a webhook endpoint may take; 0: 15 s.
	webhookTimeout time.Duration
	// keyring is the master keyring; nil: a new one.
	keyring *vault.Keyring
}

func newEnv(t testing.TB, db storetest.Database, o options) *env {
	t.Helper()
	if o.environment == "" {
		o.environment = merchant.Sandbox
	}
	var dbConfig store.Config
	s := storetest.Open(t, storetest.Database{Name: db.Name, Config: func(t testing.TB) store.Config {
		dbConfig = db.Config(t)
		return dbConfig
	}})
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	kr := o.keyring
	if kr == nil {
		kr = vault.New()
	}
	newID := func() string { return uuid.Must(uuid.NewV7()).String() }
	ctx := context.Background()
	for _, c := range merchant.SandboxChannels() {
		c.ID, c.CreatedAt = newID(), clk.Now()
		_, err := s.EnsureChannel(ctx, c)
		require.NoError(t, err)
	}
	merchants := &merchant.Service{Store: s, Sealer: kr, Now: clk.Now, NewID: newID, Environment: merchant.Sandbox}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))

	// The sandbox acquirer, reached over real HTTP.
	acq, err := acquirer.Start(acquirer.Config{Now: clk.Now, MaxHang: 3 * time.Second, Faults: o.faults})
	require.NoError(t, err)
	t.Cleanup(func() { acq.Close() })
	adapter := sandbox.NewAdapter(acq.URL, acq.APIKey, &http.Client{Timeout: time.Second})
	payments := &payment.Service{Sealer: kr, Now: clk.Now, NewID: newID,
		Providers: provider.Registry{sandbox.Name: adapter}}
	ops := &operation.Engine{Store: s, Sealer: kr, Now: clk.Now, Log: log, PollEvery: 50 * time.Millisecond,
		Steps: make(chan struct{}, 2),
		Transact: func(ctx context.Context, fn func(operation.Tx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
		Read: func(ctx context.Context, fn func(operation.Store) error) error { // as serve wires it
			return s.ReadOnly(ctx, func(q store.Queries) error { return fn(q) })
		}}
	eng := &payment.Engine{Service: payments, Store: s, Log: log, PollEvery: 50 * time.Millisecond, Ops: ops,
		Transact: func(ctx context.Context, fn func(payment.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		}}
	ops.Handle(payment.Resource, eng.Handler())
	verifications := &verification.Engine{Service: &verification.Service{Sealer: kr, Now: clk.Now, NewID: newID,
		Providers: payments.Providers, Keys: kr}, Store: s,
		Transact: func(ctx context.Context, fn func(verification.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		}}
	ops.Handle(verification.Resource, verifications.Handler())
	bins := &cardinfo.Service{Store: s, Now: clk.Now, NewID: newID, Log: log}
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { _, err := bins.Seed(ctx, tx); return err }))
	payments.BINs = bins
	po := &payout.Engine{Store: s, Ops: ops, Log: log, Transact: func(ctx context.Context, fn func(payout.EngineTx) error) error {
		return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
	}, Service: &payout.Service{Sealer: kr, Now: clk.Now, NewID: newID, Providers: payments.Providers, BINs: bins}}
	ops.Handle(payout.Resource, po.Handler())

	workers := river.NewWorkers()
	operation.AddWorkers(workers, ops)
	payment.AddWorkers(workers, eng)
	verification.AddWorkers(workers, verifications)
	payout.AddWorkers(workers, po)
	// The process runs what it queues itself, as serve does.
	handedOff := handoff.NewWorkers()
	operation.AddHandoff(handedOff, ops)
	webhooks := addWebhookWorkers(workers, handedOff, s, kr, clk, newID, log, o)
	q, err := jobs.NewClient(s, workers, clk.Now, jobs.Options{Work: o.work, Log: log, Time: clk, Poll: 20 * time.Millisecond,
		Handoff: handedOff})
	require.NoError(t, err)
	if o.work {
		require.NoError(t, q.Start(ctx))
		t.Cleanup(func() {
			stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = handedOff.Stop(stop)
			_ = q.Stop(stop)
		})
	}

	metrics := server.NewMetrics(s.Collectors()...)
	metrics.ObserveBatches(s.BatchStats)
	cfg := server.Config{Environment: o.environment, Version: "test", PublicURL: "https://pay.example",
		RateLimit: o.rateLimit, TrustedProxies: o.proxies, ProviderOrigins: []string{acq.URL}}
	// Subscriptions and the sandbox clock, as serve wires them
	// (cmd/paygate/engine.go): the scheduler does not run by itself here;
	// a test ticks it (e.subs.Tick) or advances a key's clock.
	subs := &subscription.Service{NewID: newID, Now: clk.Now, Payments: payments, Store: s, Ops: ops, Log: log,
		ErrNotFound: store.ErrNotFound, RenderSubscription: server.RenderSubscription, RenderMandate: server.RenderMandate,
		Transact: func(ctx context.Context, fn func(subscription.ChargeTx) error) error {
			return s.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
		}}
	payments.Recurring = subs
	ops.KeyClocks = true
	advancer := &keyclock.Advancer{Base: clk.Now, Offsets: s, Sources: []keyclock.Source{subs.ClockSource(),
		eng.ClockSource(), verifications.ClockSource(), po.ClockSource()}}
	deps := server.Deps{Store: s, Merchants: merchants, Payments: payments, Verifications: verifications.Service, Payouts: po.Service, Engine: eng, Log: log, Now: clk.Now,
		Metrics: metrics, BINs: bins, BINFallback: o.binFallback, Webhooks: webhooks, Keys: kr,
		Subscriptions: subs, Clock: advancer,
		// Cheap Argon2id parameters: the recommended ones are tested in
		// internal/cabinet.
		Cabinet: &cabinet.Service{Store: s, Now: clk.Now, Params: cabinet.Params{Time: 1, Memory: 64, Threads: 1}}}
	srv, err := server.New(cfg, deps)
	require.NoError(t, err)
	payments.Render = srv.RenderPayment // as serve does: every status change makes its event
	verifications.Service.Render = srv.RenderVerification
	po.Service.Render = srv.RenderPayout
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	eng.PublicURL = hs.URL

	e := &env{t: t, store: s, clock: clk, url: hs.URL, merchants: merchants, server: srv, bins: bins, acquirer: acq.Server, subs: subs, ops: ops,
		acqURL: acq.URL, cfg: cfg, deps: deps, dbConfig: dbConfig, keyring: kr}
	e.a, e.aKey = e.newClient("merchant-a")
	e.b, e.bKey = e.newClient("merchant-b")
	return e
}

// newClient issues a key and returns a client for it on the test clock.
func (e *env) newClient(name string) (*client.Client, merchant.Key) {
	k, err := e.merchants.Create(context.Background(), merchant.NewKey{Name: name, DirectCardData: true})
	require.NoError(e.t, err)
	c := client.New(e.url, k.Key.AccessKey, k.Secret)
	c.Now = e.clock.Now
	c.Retries = 0
	return c, k.Key
}

// each runs fn as a subtest on every database.
func each(t *testing.T, fn func(t *testing.T, db storetest.Database)) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) { fn(t, db) })
	}
}
