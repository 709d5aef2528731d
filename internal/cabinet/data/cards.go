package data

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
)

// cardPages is what the saved cards page reads and changes
// (pages.CardsData; docs/cabinet.md, "Saved cards"), with the queries of
// the signed API's stored cards.
type cardPages struct{ *source }

var _ pages.CardsData = cardPages{}

func (c cardPages) ListCards(ctx context.Context, q pages.CardQuery) ([]savedcard.Card, error) {
	return c.store.ListSavedCardsPage(ctx, q.KeyID, savedcard.Filter{CustomerReference: q.CustomerReference,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit})
}

// DeleteCard is deletePaymentMethodToken (DELETE
// /cabinet/v1/payment-method-tokens/{id}) for the page: the same
// compare-and-set, at the key's sandbox clock as the API request would be
// (docs/design/decisions.md section 14).
func (c cardPages) DeleteCard(ctx context.Context, key merchant.Key, id string) (bool, error) {
	err := c.store.DeleteSavedCard(ctx, key.ID, id, c.keyNow(keyClock(ctx, key)))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
