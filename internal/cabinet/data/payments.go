package data

import (
	"context"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// paymentPages is what the payments pages read (pages.PaymentsReader;
// docs/cabinet.md, Payments). Their CSV download is the server's export
// (pages.Deps.Export).
type paymentPages struct{ *source }

var _ pages.PaymentsReader = paymentPages{}

// storeFilter is the page's query as the store reads it: the same
// filters as listPayments (GET /api/v1/payments) and the exact search.
func storeFilter(q pages.PaymentQuery) payment.Filter {
	return payment.Filter{Status: q.Status, CreatedGTE: q.From, CreatedLT: q.Before, Search: q.Search,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit}
}

func (c paymentPages) ListPayments(ctx context.Context, q pages.PaymentQuery) ([]*payment.Payment, error) {
	return c.store.ListPayments(ctx, q.KeyID, storeFilter(q))
}

func (c paymentPages) Totals(ctx context.Context, q pages.PaymentQuery) ([]pages.CurrencyTotals, error) {
	ts, err := c.store.PaymentTotals(ctx, q.KeyID, storeFilter(q))
	out := make([]pages.CurrencyTotals, len(ts))
	for i, t := range ts {
		out[i] = pages.CurrencyTotals{Currency: t.Currency, Count: t.Count, SucceededCount: t.SucceededCount,
			SucceededMinor: t.SucceededMinor, CapturedMinor: t.CapturedMinor, RefundedMinor: t.RefundedMinor,
			DeclinedCount: t.DeclinedCount}
	}
	return out, err
}

func (c paymentPages) PaymentsPerDay(ctx context.Context, keyID, status string, from, to time.Time) ([]pages.DayCount, error) {
	days, err := c.store.PaymentsPerDay(ctx, keyID, status, from, to)
	out := make([]pages.DayCount, len(days))
	for i, d := range days {
		out[i] = pages.DayCount{Day: d.Day, Status: d.Status, Count: d.Count}
	}
	return out, err
}

func (c paymentPages) FindPayment(ctx context.Context, id string) (*payment.Payment, error) {
	p, err := c.store.FindPaymentByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

// maxEvents bounds the events a payment's page lists.
const maxEvents = 100

func (c paymentPages) PaymentDetail(ctx context.Context, p *payment.Payment) (pages.Detail, error) {
	var d pages.Detail
	var err error
	if d.Operations, err = c.store.PaymentOperations(ctx, p.ID); err != nil {
		return d, err
	}
	if d.Refunds, err = c.store.ListRefunds(ctx, p.ID); err != nil {
		return d, err
	}
	prior, err := c.store.PaymentAttempts(ctx, p.ID)
	if err != nil {
		return d, err
	}
	ch, err := c.store.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return d, err
	}
	d.Attempts = payment.AttemptsOf(p, prior, ch)
	d.Events, err = resourceEvents(ctx, c.store, p.AccessKeyID, p.ID)
	if err != nil {
		return d, err
	}
	return d, nil
}
