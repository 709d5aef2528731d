package main

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// The store must satisfy what the payment domain asks of it.
var (
	_ operation.Store     = (*store.Store)(nil)
	_ operation.Tx        = (*store.Tx)(nil)
	_ operation.QueueTx   = (*store.Tx)(nil)
	_ payment.EngineStore = (*store.Store)(nil)
	_ payment.EngineTx    = (*store.Tx)(nil)
	_ payment.OperationTx = (*store.Tx)(nil)
	_ payment.DirectTx    = (*store.Tx)(nil)
	_ payment.SessionTx   = (*store.Tx)(nil)
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
