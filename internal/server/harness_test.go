package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/app/apptest"
	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/server"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/vault"
)

// clock is a settable clock shared by the server and its clients: the
// domain tests' (internal/app/apptest).
type clock = apptest.Clock

// env is a running server on one database with two sandbox keys, built by
// the composition root as serve builds it (internal/app).
type env struct {
	t         testing.TB
	app       *app.App
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
	// cfg starts another process on the same database (peer, apiProcess).
	cfg app.Config
	// dbConfig starts a second process with its own pool on the same
	// database (apiProcess, concurrency_test.go).
	dbConfig store.Config
	// subs is the subscription domain; its scheduler runs only when a
	// test ticks it.
	subs *subscription.Service
	// ops is the operation engine: a test without workers runs an
	// operation with it when it chooses.
	ops *operation.Engine[app.Reader, *store.Tx]
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
	// log is the processes' log; nil: testLog().
	log *slog.Logger
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
	clk := apptest.NewClock(time.Now().UTC().Truncate(time.Second))
	kr := o.keyring
	if kr == nil {
		kr = vault.New()
	}
	ctx := context.Background()
	// The sandbox channels exist in every environment here: a production
	// test assigns them to its keys.
	require.NoError(t, app.Seed(ctx, s, merchant.Sandbox, clk.Now))

	// The sandbox acquirer, reached over real HTTP.
	acq, err := acquirer.Start(acquirer.Config{Now: clk.Now, MaxHang: 3 * time.Second, Faults: o.faults})
	require.NoError(t, err)
	t.Cleanup(func() { acq.Close() })

	// The server listens before the graph is built: the payer's 3DS step
	// returns to it.
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	cfg := app.Config{Store: s, Keyring: kr, Now: clk.Now, RiverTime: clk,
		Log:         o.log,
		Environment: o.environment, Version: "test",
		Providers:       provider.Registry{sandbox.Name: sandbox.NewAdapter(acq.URL, acq.APIKey, &http.Client{Timeout: time.Second})},
		ProviderOrigins: []string{acq.URL}, BINFallback: o.binFallback,
		PublicURL: "https://pay.example", ReturnURL: "http://" + hs.Listener.Addr().String(),
		RateLimit: o.rateLimit, TrustedProxies: o.proxies,
		// Cheap Argon2id parameters: the recommended ones are tested in
		// internal/cabinet.
		CabinetParams: cabinet.Params{Time: 1, Memory: 64, Threads: 1},
		Work:          o.work, Jobs: jobs.Options{Poll: 20 * time.Millisecond},
		Operations:     operation.Options{PollEvery: 50 * time.Millisecond, Steps: 2},
		WebhookTimeout: o.webhookTimeout, WebhookJitter: func(d time.Duration) time.Duration { return d },
	}
	if o.binFallback == nil {
		cfg.BINFallback = noBINFallback
	}
	if cfg.Log == nil {
		cfg.Log = testLog()
	}
	p, err := app.New(cfg)
	require.NoError(t, err)
	if o.work {
		require.NoError(t, p.Start(ctx))
		t.Cleanup(func() {
			stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = p.Stop(stop)
		})
	}
	hs.Config.Handler = p.Server
	hs.Start()

	e := &env{t: t, app: p, store: s, clock: clk, url: hs.URL, merchants: p.Merchants, server: p.Server, bins: p.BINs,
		acquirer: acq.Server, subs: p.Subscriptions, ops: p.Operations, acqURL: acq.URL, cfg: cfg, dbConfig: dbConfig}
	e.a, e.aKey = e.newClient("merchant-a")
	e.b, e.bKey = e.newClient("merchant-b")
	return e
}

// testLog is the processes' log: discarded, or on stderr when
// PAYGATE_TEST_LOG is set (to read what a failing test's process said).
func testLog() *slog.Logger {
	if os.Getenv("PAYGATE_TEST_LOG") != "" {
		return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewJSONHandler(io.Discard, nil))
}

// noBINFallback is the harness's default: the BIN base alone answers, as
// before tests chose a fallback of their own.
func noBINFallback(context.Context, string, string) (provider.BINInfo, error) {
	return provider.BINInfo{}, provider.Errorf(provider.NotFound, "no fallback in this test")
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

// awaitLimit is how long await waits, in real time.
const awaitLimit = 60 * time.Second

// await looks every 20 ms of real time until done reports nil, moving the
// test clock by step after each look (0: the clock stands still), so that
// what a job was scheduled or snoozed for comes due. The 20 ms are a poll
// interval, not synchronisation: River's workers and its scheduler poll in
// real time (a job made due runs at their next pass, a snoozed one when
// the scheduler next runs, every few seconds), hence a bound in real time.
// After awaitLimit the test fails with done's last error, which says what
// did not happen and what was seen instead.
func (e *env) await(step time.Duration, done func() error) {
	e.t.Helper()
	deadline := time.Now().Add(awaitLimit)
	for {
		err := done()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("not within %s: %v", awaitLimit, err)
		}
		e.clock.Add(step)
		time.Sleep(20 * time.Millisecond) // the poll interval of River's real-time workers
	}
}

// each runs fn as a subtest on every database.
func each(t *testing.T, fn func(t *testing.T, db storetest.Database)) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) { fn(t, db) })
	}
}
