package server

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
)

// cabinetCards adapts the store to what the cabinet's saved cards page reads
// and changes (pages.CardsData; docs/cabinet.md, "Saved cards"), with the
// queries of the signed API's stored cards.
type cabinetCards struct{ s *Server }

func (c cabinetCards) ListCards(ctx context.Context, q pages.CardQuery) ([]savedcard.Card, error) {
	return c.s.store.ListSavedCardsPage(ctx, q.KeyID, store.SavedCardFilter{CustomerReference: q.CustomerReference,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit})
}

// DeleteCard is deletePaymentMethodToken (DELETE
// /cabinet/v1/payment-method-tokens/{id}) for the page: the same
// compare-and-set, at the key's sandbox clock as the API request would be
// (docs/design/decisions.md section 14).
func (c cabinetCards) DeleteCard(ctx context.Context, key merchant.Key, id string) (bool, error) {
	err := c.s.store.DeleteSavedCard(ctx, key.ID, id, c.s.keyNow(keyClock(ctx, key)))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// keyClock is ctx at key's clock, as the API's pipeline sets it for the
// key's requests (front, pipeline.go): a sandbox key's offset, none in
// production.
func keyClock(ctx context.Context, key merchant.Key) context.Context {
	if key.Environment != merchant.Sandbox {
		return clock.With(ctx, 0)
	}
	return clock.With(ctx, key.ClockOffset)
}
