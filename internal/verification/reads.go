package verification

import (
	"context"

	"github.com/paygate/paygate/internal/fault"
)

// Store is what the service reads outside a transaction, for the API (the
// store's Store is one).
type Store interface {
	FindVerificationForKey(ctx context.Context, keyID, id string) (*Verification, error)
}

// LockTx is what locking a key's verification reads in the request's
// transaction.
type LockTx interface {
	LockVerificationForKey(ctx context.Context, keyID, id string) (*Verification, error)
}

// FindForKey is the key's verification id (getCardVerification (GET
// /card-verifications/{id})): another key's, any other resource's id, or
// none, is 404.
func (s *Service) FindForKey(ctx context.Context, keyID, id string) (*Verification, error) {
	v, err := s.Store.FindVerificationForKey(ctx, keyID, id)
	return v, fault.Missing(err, s.ErrNotFound, "no card verification with this id")
}

// LockForKey is FindForKey in the request's transaction, the verification
// locked until it ends, so that concurrent codes are counted one after
// another (docs/design/decisions.md section 15).
func (s *Service) LockForKey(ctx context.Context, tx LockTx, keyID, id string) (*Verification, error) {
	v, err := tx.LockVerificationForKey(ctx, keyID, id)
	return v, fault.Missing(err, s.ErrNotFound, "no card verification with this id")
}
