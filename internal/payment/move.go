package payment

import (
	"context"
	"fmt"

	"github.com/paygate/paygate/internal/webhook"
)

// EventTx records an event in the transaction of the change it reports
// (the store's transaction: the fan-out to webhook deliveries happens
// there too).
type EventTx interface {
	RecordEvent(ctx context.Context, e webhook.Event) error
}

// WriteTx is what writing a payment needs. Only a transaction offers
// RecordEvent, so a status change outside one does not compile.
type WriteTx interface {
	UpdatePayment(ctx context.Context, p *Payment) error
	EventTx
}

// CreateTx is what storing a new payment needs.
type CreateTx interface {
	CreatePayment(ctx context.Context, p *Payment) error
	EventTx
}

// save is the one way a payment is written after its creation: a change of
// status must be in the life cycle's table (CanMove) and records its
// payment.<status> event, carrying the payment as GET shows it, in the same
// transaction (docs/design/decisions.md section 6). The row is written by
// compare-and-set: ErrConflict when it changed since it was read.
func (s *Service) save(ctx context.Context, tx WriteTx, p *Payment) error {
	if p.Status != p.StoredStatus && !CanMove(p.StoredStatus, p.Status) {
		return fmt.Errorf("payment %s: %s → %s is not in the life cycle", p.ID, p.StoredStatus, p.Status)
	}
	if err := tx.UpdatePayment(ctx, p); err != nil {
		return err
	}
	return s.changed(ctx, tx, p)
}

// create stores a new payment with the event of its first status.
func (s *Service) create(ctx context.Context, tx CreateTx, p *Payment) error {
	if err := tx.CreatePayment(ctx, p); err != nil {
		return err
	}
	p.StoredStatus = "" // a new payment: its first status is a change
	return s.changed(ctx, tx, p)
}

// changed records the event of a status change, once.
func (s *Service) changed(ctx context.Context, tx EventTx, p *Payment) error {
	if s.Render == nil || p.Status == p.StoredStatus {
		p.StoredStatus = p.Status
		return nil
	}
	obj, err := s.Render(p)
	if err != nil {
		return err
	}
	if err := tx.RecordEvent(ctx, webhook.Event{ID: s.NewID(), AccessKeyID: p.AccessKeyID,
		Type: "payment." + string(p.Status), ResourceType: Resource, ResourceID: p.ID, Object: obj,
		CreatedAt: p.UpdatedAt}); err != nil {
		return err
	}
	p.StoredStatus = p.Status
	return nil
}
