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
type cabinetPayments struct{ st *store.Store }

func (c cabinetPayments) ListPayments(ctx context.Context, q pages.PaymentQuery) ([]*payment.Payment, error) {
	return c.st.ListPayments(ctx, q.KeyID, store.PaymentFilter{Status: q.Status, CreatedGTE: q.From,
		CreatedLT: q.Before, Search: q.Search, AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit})
}

func (c cabinetPayments) PaymentsPerDay(ctx context.Context, keyID, status string, from, to time.Time) ([]pages.DayCount, error) {
	days, err := c.st.PaymentsPerDay(ctx, keyID, status, from, to)
	out := make([]pages.DayCount, len(days))
	for i, d := range days {
		out[i] = pages.DayCount{Day: d.Day, Status: d.Status, Count: d.Count}
	}
	return out, err
}

func (c cabinetPayments) FindPayment(ctx context.Context, id string) (*payment.Payment, error) {
	p, err := c.st.FindPaymentByID(ctx, id)
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
	if d.Operations, err = c.st.PaymentOperations(ctx, p.ID); err != nil {
		return d, err
	}
	if d.Refunds, err = c.st.ListRefunds(ctx, p.ID); err != nil {
		return d, err
	}
	events, err := c.st.ListEvents(ctx, p.AccessKeyID, store.EventFilter{ResourceID: p.ID, Limit: maxEvents})
	if err != nil {
		return d, err
	}
	attempts, err := c.st.ResourceAttempts(ctx, p.AccessKeyID, p.ID)
	if err != nil {
		return d, err
	}
	byEvent := map[string][]pages.Attempt{}
	for _, a := range attempts {
		byEvent[a.EventID] = append(byEvent[a.EventID], pages.Attempt{EndpointID: a.EndpointID, At: a.At,
			StatusCode: a.StatusCode, Error: a.Error})
	}
	for _, e := range events {
		d.Events = append(d.Events, pages.Event{ID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt, Attempts: byEvent[e.ID]})
	}
	return d, nil
}
