package payout

import (
	"context"

	"github.com/paygate/paygate/internal/fault"
)

// Store is what the service reads outside a transaction, for the API (the
// store's Store is one).
type Store interface {
	FindPayoutForKey(ctx context.Context, keyID, id string) (*Payout, error)
}

// LockTx is what locking a key's payout reads in the request's
// transaction.
type LockTx interface {
	LockPayoutForKey(ctx context.Context, keyID, id string) (*Payout, error)
}

// FindForKey is the key's payout id (getPayout (GET /payouts/{id})):
// another key's, a payment's id, or none, is 404.
func (s *Service) FindForKey(ctx context.Context, keyID, id string) (*Payout, error) {
	p, err := s.Store.FindPayoutForKey(ctx, keyID, id)
	return p, fault.Missing(err, s.ErrNotFound, "no payout with this id")
}

// LockForKey is FindForKey in the request's transaction, the payout locked
// until it ends, so that of concurrent confirms one is accepted and the
// others find it processing (confirmPayout (POST /payouts/{id}/confirm)).
func (s *Service) LockForKey(ctx context.Context, tx LockTx, keyID, id string) (*Payout, error) {
	p, err := tx.LockPayoutForKey(ctx, keyID, id)
	return p, fault.Missing(err, s.ErrNotFound, "no payout with this id")
}
