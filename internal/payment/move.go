package payment

import (
	"context"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/lifecycle"
	"github.com/paygate/paygate/internal/recurring"
	"github.com/paygate/paygate/internal/webhook"
)

// ErrConflict: the payment changed since it was read (compare-and-set lost).
var ErrConflict = fault.Conflict("payment", fault.InvalidPaymentState)

// EventTx records an event in the transaction of the change it reports,
// and fans it out to webhook deliveries there (webhook.Record).
type EventTx = webhook.RecordTx

// WriteTx is what writing a payment needs. Only a transaction records
// events, so a status change outside one does not compile; a status change
// tells the subscription domain in the same transaction (Recurring), so
// every payment's transaction offers its statements (recurring.Tx).
type WriteTx interface {
	UpdatePayment(ctx context.Context, p *Payment) error
	EventTx
	allowance.Tx
	recurring.Tx
}

// CreateTx is what storing a new payment needs: a payment with terms
// begins its mandate and subscription in the same transaction.
type CreateTx interface {
	CreatePayment(ctx context.Context, p *Payment) error
	EventTx
	allowance.Tx
	recurring.Tx
}

// save is the one way a payment is written after its creation: a change of
// status must be in the life cycle's table (CanMove) and records its
// payment.<status> event, carrying the payment as GET shows it, in the same
// transaction (docs/design/decisions.md section 6). The row is written by
// compare-and-set: ErrConflict when it changed since it was read.
func (s *Service) save(ctx context.Context, tx WriteTx, p *Payment) error {
	moved := p.Status != p.StoredStatus
	if err := s.lifecycle().Save(ctx, tx, p, func() error {
		if err := tx.UpdatePayment(ctx, p); err != nil {
			return err
		}
		return settleAllowance(ctx, tx, p)
	}); err != nil {
		return err
	}
	if moved {
		return s.moved(ctx, tx, p)
	}
	return nil
}

// lifecycle is the payment as it moves (internal/lifecycle).
func (s *Service) lifecycle() lifecycle.Kind[*Payment, Status] {
	return lifecycle.Kind[*Payment, Status]{Name: Resource, Table: transitions, Render: s.Render, NewID: s.NewID,
		State: func(p *Payment) lifecycle.State[Status] {
			return lifecycle.State[Status]{ID: p.ID, KeyID: p.AccessKeyID, Status: p.Status, Stored: &p.StoredStatus, At: p.UpdatedAt}
		}}
}

// settleAllowance ends the payment's collection reservation when it reaches
// an outcome (docs/design/decisions.md section 12): succeeded consumes the
// captured amount and releases the rest (a partial capture); declined,
// failed, canceled and expired release it all. Refunds come after and
// change nothing. A payment without a reservation (no allowance set, or
// already settled) is left alone.
func settleAllowance(ctx context.Context, tx allowance.Tx, p *Payment) error {
	if p.Status == p.StoredStatus {
		return nil
	}
	switch p.Status {
	case Succeeded:
		return allowance.Settle(ctx, tx, Resource, p.ID, p.CapturedAmountMinor, p.UpdatedAt)
	case Declined, Failed, Canceled, Expired:
		return allowance.Settle(ctx, tx, Resource, p.ID, 0, p.UpdatedAt)
	}
	return nil
}

// create stores a new payment with the event of its first status. Every
// payment, hosted session, direct payment or subscription charge, first
// reserves its amount on the key's collection allowance, in the same
// transaction (docs/design/decisions.md section 12): over it, the request
// answers 422 limit_exceeded and nothing is stored. A session reserves at
// creation, not when the payer submits, so that the merchant's request is
// the one refused, never the payer's form (docs/limits.md).
func (s *Service) create(ctx context.Context, tx CreateTx, p *Payment) error {
	if err := reserve(ctx, tx, p); err != nil {
		return err
	}
	return s.insert(ctx, tx, p)
}

// insert stores a new payment, with the mandate and subscription of terms
// it carries, and records its first status's event.
func (s *Service) insert(ctx context.Context, tx CreateTx, p *Payment) error {
	if p.Subscription != nil && p.SubscriptionPeriod == nil {
		if s.Recurring == nil {
			return fault.OnField(fault.CapabilityNotSupported, "subscription", "this server does not run subscriptions")
		}
		if err := s.Recurring.Begin(ctx, tx, p); err != nil {
			return err
		}
	}
	if err := tx.CreatePayment(ctx, p); err != nil {
		return err
	}
	p.StoredStatus = "" // a new payment: its first status is a change
	if err := s.changed(ctx, tx, p); err != nil {
		return err
	}
	return s.moved(ctx, tx, p)
}

// changed records the event of a status change, once.
func (s *Service) changed(ctx context.Context, tx EventTx, p *Payment) error {
	return s.lifecycle().Record(ctx, tx, p)
}
