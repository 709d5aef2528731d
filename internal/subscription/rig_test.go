package subscription_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app/apptest"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
)

// rig is the subscription domain as internal/app builds it, on a fresh
// store of one database, charging through the sandbox acquirer over real
// HTTP (internal/app/apptest). Its scheduler runs when a test ticks it,
// at the process's clock, which the test moves.
type rig struct {
	*apptest.Rig
	svc *subscription.Service
}

// each runs fn on a rig of its own for each database, in parallel.
func each(t *testing.T, fn func(t *testing.T, r *rig)) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, r *apptest.Rig) { fn(t, &rig{Rig: r, svc: r.App.Subscriptions}) })
}

// subscribe makes a direct payment of 1000 USD by the card with monthly
// terms first due at first, runs it, and answers its subscription, which
// its success made active.
func (r *rig) subscribe(k merchant.Key, number string, first time.Time) *subscription.Subscription {
	r.T.Helper()
	return r.subscribeEvery(k, number, first, subscription.Month)
}

// subscribeEvery is subscribe with terms of another interval unit. The
// card is good through December of the year after next.
func (r *rig) subscribeEvery(k merchant.Key, number string, first time.Time, unit string) *subscription.Subscription {
	r.T.Helper()
	in := payment.NewDirect{NewSession: payment.NewSession{OrderID: "o-" + uuid.NewString(), AmountMinor: 1000,
		Currency: "USD", CustomerReference: "payer-" + number[12:],
		Customer: &instrument.Customer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
			BillingAddress: &instrument.BillingAddress{Country: "GB", Line1: "1 Street"}},
		Subscription: &payment.SubscriptionTerms{IntervalUnit: unit, IntervalCount: 1, FirstChargeAt: first,
			DisclosureVersion: "terms-2026-11"}},
		Method: payment.MethodCard,
		Card:   &instrument.Card{Number: number, ExpMonth: 12, ExpYear: r.Clock.Now().Year() + 2, CVV: "123"}}
	var p *payment.Payment
	require.NoError(r.T, r.InTx(func(tx *store.Tx) error {
		var err error
		p, err = r.App.Payments.CreateDirect(r.Ctx, tx, k, in)
		return err
	}))
	require.NotEmpty(r.T, p.SubscriptionID)
	sub := r.subscription(p.SubscriptionID)
	require.Equal(r.T, subscription.Incomplete, sub.Status, "until the payment succeeds")
	r.Run(p.ID)
	require.Equal(r.T, payment.Succeeded, r.payment(p.ID).Status)
	sub = r.subscription(p.SubscriptionID)
	require.Equal(r.T, subscription.Active, sub.Status)
	return sub
}

// at moves the process's clock to t.
func (r *rig) at(t time.Time) { r.Clock.Add(t.Sub(r.Clock.Now())) }

// tick runs the scheduler once and then each charge it started, and
// answers the charges it started.
func (r *rig) tick(k merchant.Key) []*payment.Payment {
	r.T.Helper()
	before := r.allCharges(k)
	_, err := r.svc.Tick(r.Ctx, 100)
	require.NoError(r.T, err)
	var started []*payment.Payment
	for _, p := range r.allCharges(k) {
		if !slices.ContainsFunc(before, func(b *payment.Payment) bool { return b.ID == p.ID }) {
			r.Run(p.ID)
			started = append(started, r.payment(p.ID))
		}
	}
	return started
}

// act applies a merchant's pause, resume or cancel in a transaction of
// its own, as the request does.
func (r *rig) act(k merchant.Key, id string, a subscription.Action) (*subscription.Subscription, error) {
	var sub *subscription.Subscription
	err := r.InTx(func(tx *store.Tx) error {
		var err error
		sub, err = r.svc.Act(r.Ctx, tx, k.ID, id, a)
		return err
	})
	return sub, err
}

func (r *rig) subscription(id string) *subscription.Subscription {
	r.T.Helper()
	sub, err := r.Store.FindSubscriptionByID(r.Ctx, id)
	require.NoError(r.T, err)
	return sub
}

func (r *rig) payment(id string) *payment.Payment {
	r.T.Helper()
	p, err := r.Store.FindPaymentByID(r.Ctx, id)
	require.NoError(r.T, err)
	return p
}

// allCharges are the key's subscription charges.
func (r *rig) allCharges(k merchant.Key) []*payment.Payment {
	r.T.Helper()
	all, err := r.Store.ListPayments(r.Ctx, k.ID, payment.Filter{Limit: 500})
	require.NoError(r.T, err)
	return slices.DeleteFunc(all, func(p *payment.Payment) bool { return p.SubscriptionPeriod == nil })
}

// charges are a subscription's charges, by period then attempt.
func (r *rig) charges(k merchant.Key, subID string) []*payment.Payment {
	r.T.Helper()
	out := slices.DeleteFunc(r.allCharges(k), func(p *payment.Payment) bool { return p.SubscriptionID != subID })
	slices.SortFunc(out, func(a, b *payment.Payment) int {
		if d := *a.SubscriptionPeriod - *b.SubscriptionPeriod; d != 0 {
			return int(d)
		}
		return a.SubscriptionAttempt - b.SubscriptionAttempt
	})
	return out
}

// periods lists the period and attempt of each charge.
func periods(charges []*payment.Payment) [][2]int64 {
	out := make([][2]int64, len(charges))
	for i, c := range charges {
		out[i] = [2]int64{*c.SubscriptionPeriod, int64(c.SubscriptionAttempt)}
	}
	return out
}
