package main

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/server"
	"github.com/paygate/paygate/internal/subscription"

	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/verification"
)

// The store must satisfy what the payment domain asks of it.
var (
	_ operation.Store     = (*store.Store)(nil)
	_ operation.Store     = store.Queries{} // the reader of Engine.Read
	_ operation.RunReader = store.Queries{} // its one-statement read
	_ operation.Tx        = (*store.Tx)(nil)
	_ operation.QueueTx   = (*store.Tx)(nil)
	_ operation.LeaseTx   = (*store.Tx)(nil) // the handoff's leases: rescued, never silently not
	_ payment.EngineStore = (*store.Store)(nil)
	_ payment.EngineTx    = (*store.Tx)(nil)
	_ payment.OperationTx = (*store.Tx)(nil)
	_ payment.DirectTx    = (*store.Tx)(nil)
	_ payment.SessionTx   = (*store.Tx)(nil)
	_ payout.EngineStore  = (*store.Store)(nil)
	_ payout.EngineTx     = (*store.Tx)(nil)
	_ payout.CreateTx     = (*store.Tx)(nil)
	_ payout.ConfirmTx    = (*store.Tx)(nil)
)

// engines builds the operation engine and the payment engine on a store,
// with the payments' operations registered. Each resource that calls a
// provider registers its handler here.
func engines(s *store.Store, svc *payment.Service, a *app, pollEvery time.Duration) (*operation.Engine, *payment.Engine) {
	ops := &operation.Engine{Store: s, Sealer: svc.Sealer, Now: svc.Now, Log: a.log, PollEvery: pollEvery,
		Transact: func(ctx context.Context, fn func(operation.Tx) error) error {
			// Batched: on SQLite the jobs' commits group with the requests'.
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
		// One read-only transaction for the reads before a provider call.
		Read: func(ctx context.Context, fn func(operation.Store) error) error {
			return s.ReadOnly(ctx, func(q store.Queries) error { return fn(q) })
		},
	}
	eng := &payment.Engine{
		Service: svc, Store: s, Log: a.log, PollEvery: pollEvery, Ops: ops,
		Transact: func(ctx context.Context, fn func(payment.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
	}
	ops.Handle(payment.Resource, eng.Handler())
	return ops, eng
}

var _ payment.CheckoutTx = (*store.Tx)(nil)

// The store must satisfy what the verification domain asks of it.
var (
	_ verification.CreateTx    = (*store.Tx)(nil)
	_ verification.VerifyTx    = (*store.Tx)(nil)
	_ verification.EngineTx    = (*store.Tx)(nil)
	_ verification.EngineStore = (*store.Store)(nil)
)

// verificationEngine builds card verifications' service and engine on the
// payments' providers, and registers their operations with ops.
func verificationEngine(s *store.Store, a *app, ops *operation.Engine) *verification.Engine {
	svc := &verification.Service{Sealer: a.keyring, Now: a.now, NewID: a.payments.NewID,
		Providers: a.payments.Providers, Keys: a.keyring}
	eng := &verification.Engine{Service: svc, Store: s,
		Transact: func(ctx context.Context, fn func(verification.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		}}
	ops.Handle(verification.Resource, eng.Handler())
	return eng
}

// payouts builds the payouts' service and engine beside the payments'
// (same vault, clock, ids, providers and BIN base) and registers their
// operations on ops (docs/architecture.md, "Adding a resource that calls a
// provider").
func payouts(s *store.Store, svc *payment.Service, ops *operation.Engine, a *app) *payout.Engine {
	eng := &payout.Engine{Store: s, Ops: ops, Log: a.log,
		Service: &payout.Service{Sealer: svc.Sealer, Now: svc.Now, NewID: svc.NewID, Providers: svc.Providers, BINs: svc.BINs},
		Transact: func(ctx context.Context, fn func(payout.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
	}
	ops.Handle(payout.Resource, eng.Handler())
	return eng
}

// The store must satisfy what the subscription domain asks of it.
var (
	_ subscription.ChargeTx = (*store.Tx)(nil)
	_ subscription.Store    = (*store.Store)(nil)
	_ clock.Offsets         = (*store.Store)(nil)
)

// subscriptions builds the subscription domain on the payments' service:
// it creates mandates and subscriptions with the payments that carry
// terms (payment.Service.Recurring) and charges them through the same
// service and operation engine. The scheduler runs it in worker processes
// (serve); the sandbox clock through advance, with the expiries of the
// other resources (their engines' ClockSource) due on the way.
func subscriptions(s *store.Store, a *app, ops *operation.Engine, expiries ...clock.Source) (*subscription.Service, *clock.Advancer) {
	svc := &subscription.Service{NewID: a.payments.NewID, Now: a.now, Payments: a.payments, Store: s, Ops: ops,
		Log: a.log, ErrNotFound: store.ErrNotFound,
		Transact: func(ctx context.Context, fn func(subscription.ChargeTx) error) error {
			return s.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
		},
		RenderSubscription: server.RenderSubscription, RenderMandate: server.RenderMandate,
	}
	a.payments.Recurring = svc
	ops.KeyClocks = true
	adv := &clock.Advancer{Base: a.now, Offsets: s, Sources: append([]clock.Source{svc.ClockSource()}, expiries...)}
	return svc, adv
}
