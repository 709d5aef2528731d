package payout_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
)

// processClock is the process's clock; a test moves it instead of waiting.
type processClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *processClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *processClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rig is the payout domain on a fresh store of one database, built with
// its constructors as internal/app builds it, paying out through the
// bundled sandbox acquirer over real HTTP. No worker runs anything: a test
// runs a payout's operations with the operation engine when it chooses
// (run), and its jobs by calling their workers.
type rig struct {
	t         *testing.T
	ctx       context.Context
	store     *store.Store
	clock     *processClock
	acquirer  *acquirer.Server
	keyring   *vault.Keyring
	newID     func() string
	providers provider.Registry
	svc       *payout.Service
	engine    *payout.Engine
	ops       *operation.Engine[store.Queries, *store.Tx]
	// handler is the payout's operation handler, as the engine calls it.
	handler operation.Handler[store.Queries, *store.Tx]
}

func newRig(t *testing.T, db storetest.Database) *rig {
	t.Helper()
	s := storetest.Open(t, db)
	clk := &processClock{t: time.Now().UTC().Truncate(time.Second)}
	acq, err := acquirer.Start(acquirer.Config{Now: clk.Now, MaxHang: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { acq.Close() })
	r := &rig{t: t, ctx: context.Background(), store: s, clock: clk, acquirer: acq.Server, keyring: vault.New(),
		newID:     func() string { return uuid.Must(uuid.NewV7()).String() },
		providers: provider.Registry{sandbox.Name: sandbox.NewAdapter(acq.URL, acq.APIKey, &http.Client{Timeout: 5 * time.Second})}}
	log := slog.New(slog.DiscardHandler)
	r.ops = operation.NewEngine(
		func(ctx context.Context, fn func(*store.Tx) error) error { return s.InTx(ctx, fn) },
		func(ctx context.Context, fn func(store.Queries) error) error { return s.ReadOnly(ctx, fn) },
		func(tx *store.Tx) store.Queries { return tx.Queries },
		r.keyring, clk.Now, log, operation.Options{KeyClocks: true})
	r.svc = payout.NewService(r.keyring, clk.Now, r.newID, r.providers, nil, s, store.ErrNotFound, render)
	r.engine = payout.NewEngine(r.svc, s, func(ctx context.Context, fn func(payout.EngineTx) error) error {
		return s.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
	}, r.ops, log)
	r.handler = payout.NewHandler[store.Queries, *store.Tx](r.engine)
	r.ops.Handle(payout.Resource, r.handler)
	// Queuing inserts River jobs (Tx.Enqueue): an insert-only client that
	// knows every kind a payout queues.
	workers := river.NewWorkers()
	operation.AddWorkers(workers, r.ops)
	payout.AddWorkers(workers, r.engine)
	_, err = jobs.NewClient(s, workers, clk.Now, jobs.Options{Log: log})
	require.NoError(t, err)
	return r
}

// render is the object of a payout's events: enough to read back which
// payout and status each event carries.
func render(p *payout.Payout) ([]byte, error) {
	return json.Marshal(map[string]string{"payout_id": p.ID, "status": string(p.Status)})
}

// key is a new sandbox key allowed raw card data, with a payout allowance
// in USD of daily minor units (0: none set).
func (r *rig) key(daily int64) merchant.Key {
	r.t.Helper()
	k := storetest.SandboxKey(r.t, r.store, true)
	if daily > 0 {
		require.NoError(r.t, r.store.PutAllowance(r.ctx, allowance.Setting{KeyID: k.ID, Allowance: allowance.Payout,
			Currency: "USD", DailyMinor: &daily, UpdatedAt: r.clock.Now()}))
	}
	return k
}

// toCard is a valid payout of 2500 USD to the card number, with the
// customer a Visa card needs.
func (r *rig) toCard(number string) payout.New {
	return payout.New{OrderID: "po-" + uuid.NewString(), AmountMinor: 2500, Currency: "USD", Account: "main",
		Method: payout.MethodCard, Card: &instrument.Card{Number: number, ExpMonth: 12, ExpYear: r.clock.Now().Year() + 2, CVV: "123"},
		Customer: &instrument.Customer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
			BillingAddress: &instrument.BillingAddress{Country: "GB", Line1: "1 Street"}}}
}

// create accepts a payout in its own transaction, as a request does.
func (r *rig) create(k merchant.Key, in payout.New) (*payout.Payout, error) {
	var p *payout.Payout
	err := r.store.InTx(r.ctx, func(tx *store.Tx) error {
		var err error
		p, err = r.svc.Create(r.ctx, tx, k, in)
		return err
	})
	return p, err
}

// accepted creates a payout that must be accepted.
func (r *rig) accepted(k merchant.Key, in payout.New) *payout.Payout {
	r.t.Helper()
	p, err := r.create(k, in)
	require.NoError(r.t, err)
	return p
}

// confirm confirms the payout in a transaction that reads it locked, as
// the confirm request does.
func (r *rig) confirm(k merchant.Key, id, code string) error {
	return r.store.InTx(r.ctx, func(tx *store.Tx) error {
		p, err := tx.LockPayoutForKey(r.ctx, k.ID, id)
		if err != nil {
			return err
		}
		_, err = r.svc.Confirm(r.ctx, tx, p, code)
		return err
	})
}

// run runs each operation of the payout not yet done, once, against the
// sandbox, and returns their ids.
func (r *rig) run(id string) []string {
	r.t.Helper()
	ops := storetest.OpenOperations(r.t, r.store, id)
	for _, op := range ops {
		require.NoError(r.t, r.ops.Run(r.ctx, op, 1, 5))
	}
	return ops
}

func (r *rig) payout(id string) *payout.Payout {
	r.t.Helper()
	p, err := r.store.FindPayoutByID(r.ctx, id)
	require.NoError(r.t, err)
	return p
}

// events lists the types of the payout's events, oldest first.
func (r *rig) events(k merchant.Key, id string) []string {
	return storetest.EventTypes(r.t, r.store, k.ID, id)
}

// usage is the key's payout allowance today in USD.
func (r *rig) usage(k merchant.Key) allowance.Usage {
	r.t.Helper()
	u, err := r.store.AllowanceUsage(r.ctx, k.ID, allowance.Payout, "USD", allowance.Day(r.clock.Now()))
	require.NoError(r.t, err)
	return u
}

// transfers counts the acquirer's transfers made for an operation.
func (r *rig) transfers(opID string) int {
	return r.acquirer.Count(acquirer.EntryTransfer, opID)
}

// faultOf is err's fault, failing the test when err is none.
func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	var f *fault.Error
	require.True(t, errors.As(err, &f), "want a fault, got %v", err)
	return f
}
