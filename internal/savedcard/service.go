package savedcard

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
)

// Store is what the service reads and changes outside a transaction (the
// store's Store is one).
type Store interface {
	ListSavedCardsPage(ctx context.Context, keyID string, f Filter) ([]Card, error)
	DeleteSavedCard(ctx context.Context, keyID, id string, at time.Time) error
}

// Service lists and deletes a key's saved cards for the cabinet's API
// (docs/design/decisions.md section 13).
type Service struct {
	Store Store
	Now   func() time.Time // the process's clock; a key's is clock.Now(ctx, Now)
	// ErrNotFound is the store's "no such row", which the service answers
	// with 404.
	ErrNotFound error
}

// NewService builds the saved cards' service; every dependency is an
// argument (docs/architecture.md, "The composition root"). errNotFound is
// the store's "no such row".
func NewService(st Store, now func() time.Time, errNotFound error) *Service {
	return &Service{Store: st, Now: now, ErrNotFound: errNotFound}
}

// List is up to f.Limit of the key's usable saved cards matching f, newest
// first (listPaymentMethodTokens (GET /cabinet/v1/payment-method-tokens)).
func (s *Service) List(ctx context.Context, keyID string, f Filter) ([]Card, error) {
	return s.Store.ListSavedCardsPage(ctx, keyID, f)
}

// Delete marks the key's card id deleted at the key's time, in one
// compare-and-set step, so that it can no longer be used
// (deletePaymentMethodToken (DELETE /cabinet/v1/payment-method-tokens/{id})):
// another key's card, or one already deleted, is 404.
func (s *Service) Delete(ctx context.Context, keyID, id string) error {
	err := s.Store.DeleteSavedCard(ctx, keyID, id, clock.Now(ctx, s.Now))
	return fault.Missing(err, s.ErrNotFound, "no saved card with this id")
}
