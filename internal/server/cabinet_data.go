package server

import (
	"context"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// cabinetPayments adapts the store to what the cabinet's payments pages
// read (pages.PaymentsReader; docs/cabinet.md, Payments). Every call reads
// the database: nothing is cached.
type cabinetPayments struct{ s *Server }

// storeFilter is the page's query as the store reads it: the same
// filters as listPayments (GET /api/v1/payments) and the exact search.
func storeFilter(q pages.PaymentQuery) store.PaymentFilter {
	return store.PaymentFilter{Status: q.Status, CreatedGTE: q.From, CreatedLT: q.Before, Search: q.Search,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit}
}

func (c cabinetPayments) ListPayments(ctx context.Context, q pages.PaymentQuery) ([]*payment.Payment, error) {
	return c.s.store.ListPayments(ctx, q.KeyID, storeFilter(q))
}

func (c cabinetPayments) Totals(ctx context.Context, q pages.PaymentQuery) ([]pages.CurrencyTotals, error) {
	ts, err := c.s.store.PaymentTotals(ctx, q.KeyID, storeFilter(q))
	out := make([]pages.CurrencyTotals, len(ts))
	for i, t := range ts {
		out[i] = pages.CurrencyTotals{Currency: t.Currency, Count: t.Count, SucceededCount: t.SucceededCount,
			SucceededMinor: t.SucceededMinor, CapturedMinor: t.CapturedMinor, RefundedMinor: t.RefundedMinor,
			DeclinedCount: t.DeclinedCount}
	}
	return out, err
}

func (c cabinetPayments) PaymentsPerDay(ctx context.Context, keyID, status string, from, to time.Time) ([]pages.DayCount, error) {
	days, err := c.s.store.PaymentsPerDay(ctx, keyID, status, from, to)
	out := make([]pages.DayCount, len(days))
	for i, d := range days {
		out[i] = pages.DayCount{Day: d.Day, Status: d.Status, Count: d.Count}
	}
	return out, err
}

func (c cabinetPayments) FindPayment(ctx context.Context, id string) (*payment.Payment, error) {
	p, err := c.s.store.FindPaymentByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

// maxEvents bounds the events a payment's page lists.
const maxEvents = 100

func (c cabinetPayments) PaymentDetail(ctx context.Context, p *payment.Payment) (pages.Detail, error) {
	var d pages.Detail
	var err error
	if d.Operations, err = c.s.store.PaymentOperations(ctx, p.ID); err != nil {
		return d, err
	}
	if d.Refunds, err = c.s.store.ListRefunds(ctx, p.ID); err != nil {
		return d, err
	}
	d.Events, err = resourceEvents(ctx, c.s.store, p.AccessKeyID, p.ID)
	if err != nil {
		return d, err
	}
	return d, nil
}
