package store

import (
	"context"
	"strings"

	"github.com/paygate/paygate/internal/payment"
)

// MigrateTo applies Paygate's migrations up to version, for tests of a
// migration on data written before it.
func (s *Store) MigrateTo(ctx context.Context, version int64) error { return s.migrate(ctx, version) }

// CreatePaymentBefore13 stores p in the payments table as it was before
// migration 00013 (no subscription charge columns).
func (q *Tx) CreatePaymentBefore13(ctx context.Context, p *payment.Payment) error {
	return q.createPayment(ctx, p, strings.TrimSuffix(paymentColumns, ", subscription_period, subscription_attempt"))
}
