package pages_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
	"github.com/paygate/paygate/internal/webhook"
)

// The rows the pages read, stored as the domain stores them, without
// running a provider: the pages' tests are about what the pages show and
// refuse, not how a payment came to be.

func (e *env) channel(t *testing.T, k merchant.Key) string {
	t.Helper()
	chs, err := e.store.ChannelsForKey(context.Background(), k.ID)
	require.NoError(t, err)
	require.NotEmpty(t, chs)
	return chs[0].ID
}

// payment stores a succeeded card payment of the key, changed by edit.
func (e *env) payment(t *testing.T, k merchant.Key, edit func(p *payment.Payment)) *payment.Payment {
	t.Helper()
	now := e.clock.Now()
	p := &payment.Payment{ID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: e.channel(t, k), Kind: payment.KindDirect,
		Status: payment.Succeeded, OrderID: "order-" + uuid.NewString()[:8], AmountMinor: 1234, Currency: "USD",
		CustomerReference: "cust-1", Locale: "en", OperationMode: payment.ModeCharge, Method: "card",
		MaskedCard: "424242******4242", CardScheme: "visa", CapturedAmountMinor: 1234, CreatedAt: now, UpdatedAt: now}
	if edit != nil {
		edit(p)
	}
	ctx := context.Background()
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.CreatePayment(ctx, p) }))
	return p
}

// card stores a usable saved card of the key.
func (e *env) card(t *testing.T, k merchant.Key, customerRef string, created time.Time) *savedcard.Card {
	t.Helper()
	id := uuid.NewString()
	c, err := savedcard.New(e.kr, savedcard.Card{ID: id, AccessKeyID: k.ID, CustomerReference: customerRef,
		Provider: "sandbox", MaskedCard: "424242******4242", Scheme: "visa", ExpMonth: 12,
		ExpYear: created.Year() + 2, CreatedAt: created}, "tok_"+id)
	require.NoError(t, err)
	require.NoError(t, e.store.CreateSavedCard(context.Background(), c))
	return c
}

// usable reports whether the key's saved card can still be used.
func (e *env) usable(t *testing.T, k merchant.Key, id string) bool {
	t.Helper()
	_, err := e.store.FindSavedCardForKey(context.Background(), k.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	require.NoError(t, err)
	return true
}

// mandate stores an active mandate of the key on a new saved card, as a
// successful payment with terms leaves it.
func (e *env) mandate(t *testing.T, k merchant.Key, customerRef string) *subscription.Mandate {
	t.Helper()
	now := e.clock.Now()
	c := e.card(t, k, customerRef, now)
	m := &subscription.Mandate{ID: uuid.NewString(), AccessKeyID: k.ID, Status: subscription.MandateActive,
		PaymentID: uuid.NewString(), ChannelID: e.channel(t, k), CustomerReference: customerRef, DisclosureVersion: "v1",
		SavedCardID: c.ID, CardMask: c.MaskedCard, CardExpMonth: c.ExpMonth, CardExpYear: c.ExpYear, ConsentAt: &now,
		CreatedAt: now, UpdatedAt: now}
	ctx := context.Background()
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMandate(ctx, m) }))
	return m
}

// subscription stores a monthly subscription of USD 3.00 on the mandate,
// in the status, created at created.
func (e *env) subscription(t *testing.T, m *subscription.Mandate, status subscription.Status, created time.Time) *subscription.Subscription {
	t.Helper()
	s := &subscription.Subscription{ID: uuid.NewString(), AccessKeyID: m.AccessKeyID, MandateID: m.ID, Status: status,
		AmountMinor: 300, Currency: "USD", Interval: subscription.Interval{Unit: subscription.Month, Count: 1},
		Anchor: created, Period: 1, CreatedAt: created, UpdatedAt: created}
	if status == subscription.Active || status == subscription.PastDue {
		next := created.AddDate(0, 1, 0)
		s.NextRunAt = &next
	}
	ctx := context.Background()
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.CreateSubscription(ctx, s) }))
	return s
}

func (e *env) subscriptionStatus(t *testing.T, id string) subscription.Status {
	t.Helper()
	s, err := e.store.FindSubscriptionByID(context.Background(), id)
	require.NoError(t, err)
	return s.Status
}

// verification stores a verified card verification of the key.
func (e *env) verification(t *testing.T, k merchant.Key, edit func(v *verification.Verification)) *verification.Verification {
	t.Helper()
	now := e.clock.Now()
	v := &verification.Verification{ID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: e.channel(t, k),
		OrderID: "verify-" + uuid.NewString()[:8], Currency: "USD", Status: verification.Verified,
		CardMask: "424242******4242", ExpiresAt: now.Add(72 * time.Hour), CreatedAt: now, UpdatedAt: now}
	if edit != nil {
		edit(v)
	}
	require.NoError(t, e.store.CreateVerification(context.Background(), v))
	return v
}

// payout stores a succeeded card payout of the key.
func (e *env) payout(t *testing.T, k merchant.Key, edit func(p *payout.Payout)) *payout.Payout {
	t.Helper()
	now := e.clock.Now()
	p := &payout.Payout{ID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: e.channel(t, k),
		OrderID: "payout-" + uuid.NewString()[:8], Status: payout.Succeeded, AmountMinor: 500, Currency: "USD",
		Method: "card", CardMask: "424242******4242", CreatedAt: now, UpdatedAt: now}
	if edit != nil {
		edit(p)
	}
	require.NoError(t, e.store.CreatePayout(context.Background(), p))
	return p
}

// endpoint stores an enabled webhook endpoint of the key taking every
// event type.
func (e *env) endpoint(t *testing.T, k merchant.Key, rawURL string) *webhook.Endpoint {
	t.Helper()
	ep := &webhook.Endpoint{ID: uuid.NewString(), AccessKeyID: k.ID, URL: rawURL, SecretSealed: []byte("sealed"),
		CreatedAt: e.clock.Now()}
	require.NoError(t, e.store.CreateWebhookEndpoint(context.Background(), ep))
	return ep
}

// event stores an event of the key about a resource, with body as sent,
// and no delivery.
func (e *env) event(t *testing.T, k merchant.Key, typ, resourceType, resourceID, body string, created time.Time) webhook.Event {
	t.Helper()
	ev := webhook.Event{ID: uuid.NewString(), AccessKeyID: k.ID, Type: typ, ResourceType: resourceType,
		ResourceID: resourceID, CreatedAt: created}
	ctx := context.Background()
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertEvent(ctx, ev, []byte(body)) }))
	return ev
}

// deliveries counts the event's deliveries: a resend makes one per
// endpoint.
func (e *env) deliveries(t *testing.T, eventID string) int {
	t.Helper()
	ds, err := e.store.ListDeliveries(context.Background(), eventID)
	require.NoError(t, err)
	return len(ds)
}
