// Package apptest is the domain tests' rig: a process's graph built by the
// composition root (app.New) on a fresh, migrated store of one database,
// with a clock the test moves and the bundled sandbox acquirer reached
// over real HTTP. No worker runs: a test runs a resource's operations with
// the operation engine when it chooses (Run), and its jobs by calling
// their workers. Only tests import it (docs/architecture.md, "Where the
// tests are").
package apptest

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
)

// Clock is the process's clock: a test moves it instead of waiting. It is
// River's time generator too.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock d on.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// NowUTC implements River's rivertype.TimeGenerator.
func (c *Clock) NowUTC() time.Time { return c.Now().UTC() }

// NowUTCOrNil implements River's rivertype.TimeGenerator.
func (c *Clock) NowUTCOrNil() *time.Time { t := c.Now().UTC(); return &t }

// Rig is one process's graph on a fresh store of one database.
type Rig struct {
	T        testing.TB
	Ctx      context.Context
	App      *app.App
	Store    *store.Store
	Clock    *Clock
	Keyring  *vault.Keyring
	Acquirer *acquirer.Server

	cfg      app.Config   // the process's, for Peer
	dbConfig store.Config // the database's, for Peer's pool
}

// New builds the graph on a fresh store of db, the clock at the current
// second, as serve does: the store migrated and seeded (app.Seed), every
// service and engine through app.New, jobs queued but not worked.
func New(t testing.TB, db storetest.Database) *Rig {
	t.Helper()
	ctx := context.Background()
	var dbConfig store.Config
	s := storetest.Open(t, storetest.Database{Name: db.Name, Config: func(t testing.TB) store.Config {
		dbConfig = db.Config(t)
		return dbConfig
	}})
	clk := NewClock(time.Now().UTC().Truncate(time.Second))
	if err := app.Seed(ctx, s, merchant.Sandbox, clk.Now); err != nil {
		t.Fatal(err)
	}
	acq, err := acquirer.Start(acquirer.Config{Now: clk.Now, MaxHang: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acq.Close() })
	kr := vault.New()
	cfg := app.Config{Store: s, Keyring: kr, Now: clk.Now, RiverTime: clk,
		Log: slog.New(slog.DiscardHandler), Environment: merchant.Sandbox, Version: "test",
		Providers: provider.Registry{sandbox.Name: sandbox.NewAdapter(acq.URL, acq.APIKey,
			&http.Client{Timeout: 5 * time.Second})},
		ProviderOrigins: []string{acq.URL}, PublicURL: "https://pay.example",
		BINFallback: func(context.Context, string, string) (provider.BINInfo, error) {
			return provider.BINInfo{}, provider.Errorf(provider.NotFound, "no fallback in a domain test")
		}}
	a, err := app.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Rig{T: t, Ctx: ctx, App: a, Store: s, Clock: clk, Keyring: kr, Acquirer: acq.Server, cfg: cfg, dbConfig: dbConfig}
}

// Peer is another process on the rig's database: the same graph on a pool
// of its own, as a second `serve` has (its clock, keyring and acquirer are
// the rig's). A race between processes runs half its calls through it:
// only the database keeps them apart, never a lock of one process.
func (r *Rig) Peer() *app.App {
	r.T.Helper()
	s, err := store.Open(r.Ctx, r.dbConfig)
	if err != nil {
		r.T.Fatal(err)
	}
	r.T.Cleanup(func() { s.Close() })
	cfg := r.cfg
	cfg.Store = s
	a, err := app.New(cfg)
	if err != nil {
		r.T.Fatal(err)
	}
	return a
}

// Each runs fn on a rig of its own for each database (storetest.Databases),
// as parallel subtests named after the database.
func Each(t *testing.T, fn func(t *testing.T, r *Rig)) {
	t.Helper()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, New(t, db))
		})
	}
}

// Key stores a new sandbox key with the sandbox's channels; direct is its
// permission to send raw card data.
func (r *Rig) Key(direct bool) merchant.Key { return storetest.SandboxKey(r.T, r.Store, direct) }

// InTx runs fn in a transaction, as a request's handler does.
func (r *Rig) InTx(fn func(tx *store.Tx) error) error { return r.Store.InTx(r.Ctx, fn) }

// Run runs each operation of the resource not yet done, once, and returns
// their ids, oldest first.
func (r *Rig) Run(resourceID string) []string {
	r.T.Helper()
	ops := storetest.OpenOperations(r.T, r.Store, resourceID)
	for _, op := range ops {
		if err := r.App.Operations.Run(r.Ctx, op, 1, 5); err != nil {
			r.T.Fatalf("run operation %s: %v", op, err)
		}
	}
	return ops
}

// Events lists the types of the resource's events, oldest first.
func (r *Rig) Events(k merchant.Key, resourceID string) []string {
	return storetest.EventTypes(r.T, r.Store, k.ID, resourceID)
}

// Ahead moves the key's sandbox clock d ahead of the process's
// (docs/sandbox.md, "The sandbox clock") and returns the context of its
// requests, which carries that clock as a request's does.
func (r *Rig) Ahead(k merchant.Key, d time.Duration) context.Context {
	r.T.Helper()
	if err := r.Store.MoveKeyClock(r.Ctx, k.ID, d); err != nil {
		r.T.Fatal(err)
	}
	return clock.With(r.Ctx, d)
}
