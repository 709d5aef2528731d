package server_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
)

// activeMandate stores an active mandate of the key on a saved card,
// as a successful payment with terms leaves it (docs/subscriptions.md),
// without running a payment: for tests of the routes themselves.
func activeMandate(t testing.TB, e *env, keyID string) *subscription.Mandate {
	t.Helper()
	ctx := context.Background()
	card := savedCard(t, e, keyID, "payer-"+uuid.NewString())
	chs, err := e.store.ChannelsForKey(ctx, keyID)
	require.NoError(t, err)
	require.NotEmpty(t, chs)
	now := e.clock.Now().UTC()
	m := &subscription.Mandate{ID: uuid.NewString(), AccessKeyID: keyID, Status: subscription.MandateActive,
		PaymentID: uuid.NewString(), ChannelID: chs[0].ID, CustomerReference: card.CustomerReference,
		DisclosureVersion: "v1", SavedCardID: card.ID, CardMask: card.MaskedCard, CardExpMonth: card.ExpMonth,
		CardExpYear: card.ExpYear, ConsentAt: &now, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMandate(ctx, m) }))
	return m
}
