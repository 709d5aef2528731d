package main

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// The store must satisfy what the payment domain asks of it.
var (
	_ payment.EngineStore = (*store.Store)(nil)
	_ payment.EngineTx    = (*store.Tx)(nil)
	_ payment.OperationTx = (*store.Tx)(nil)
	_ payment.DirectTx    = (*store.Tx)(nil)
	_ payment.SessionTx   = (*store.Tx)(nil)
)

// engine builds the payment engine on a store.
func engine(s *store.Store, svc *payment.Service, a *app, pollEvery time.Duration) *payment.Engine {
	return &payment.Engine{
		Service: svc, Store: s, Log: a.log, PollEvery: pollEvery,
		Transact: func(ctx context.Context, fn func(payment.EngineTx) error) error {
			// Batched: on SQLite the jobs' commits group with the requests'.
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
	}
}

var _ payment.CheckoutTx = (*store.Tx)(nil)
