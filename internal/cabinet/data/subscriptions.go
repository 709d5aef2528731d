package data

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
)

// subscriptionPages is what the subscriptions pages read and change
// (pages.SubscriptionsData; docs/cabinet.md, "Subscriptions").
type subscriptionPages struct{ *source }

var _ pages.SubscriptionsData = subscriptionPages{}

func (c subscriptionPages) ListSubscriptions(ctx context.Context, q pages.SubscriptionQuery) ([]*subscription.Subscription, error) {
	return c.store.ListSubscriptions(ctx, q.KeyID, store.SubscriptionFilter{Status: q.Status,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit})
}

func (c subscriptionPages) FindSubscription(ctx context.Context, id string) (*subscription.Subscription, error) {
	sub, err := c.store.FindSubscriptionByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return sub, err
}

func (c subscriptionPages) FindMandate(ctx context.Context, keyID, id string) (*subscription.Mandate, error) {
	m, err := c.store.FindMandateForKey(ctx, keyID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return m, err
}

func (c subscriptionPages) SubscriptionPayments(ctx context.Context, sub *subscription.Subscription,
	m *subscription.Mandate, q pages.ChargeQuery) ([]*payment.Payment, error) {
	f := store.ChargeFilter{AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit}
	if m != nil {
		f.TermsPaymentID = m.PaymentID
	}
	return c.store.SubscriptionPayments(ctx, sub.AccessKeyID, sub.ID, f)
}

// ActOnSubscription is what actOnSubscription does for pauseSubscription
// (POST /subscriptions/{id}/pause), resumeSubscription and
// cancelSubscription: subscription.Service.Act in one transaction, at the
// key's clock (docs/design/decisions.md section 14), which records the
// same subscription.<status> event. Act locks the subscription's row, so
// of concurrent calls one changes it and the others find the new status.
func (c subscriptionPages) ActOnSubscription(ctx context.Context, key merchant.Key, id string,
	a subscription.Action) (*subscription.Subscription, error) {
	if c.subscriptions == nil {
		return nil, fault.New(fault.NotFound, "subscriptions are not served here")
	}
	ctx = keyClock(ctx, key)
	var sub *subscription.Subscription
	err := c.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		sub, err = c.subscriptions.Act(ctx, tx, key.ID, id, a)
		return err
	})
	return sub, err
}
