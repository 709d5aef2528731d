package payment

import (
	"context"
	"slices"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
)

// OperationTx is what the payment operations need in the request's transaction.
type OperationTx interface {
	DirectTx
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	WriteTx
	CreateRefund(ctx context.Context, r *Refund) error
	// OpenOperations lists the payment's operations not yet done.
	OpenOperations(ctx context.Context, paymentID string) ([]Operation, error)
	// A payer's page carries no key's clock: it is read with the
	// payment's key (docs/design/decisions.md section 14).
	clock.Reader
}

func invalidState(p *Payment, op string) *fault.Error {
	return fault.Newf(fault.InvalidPaymentState, "a payment in status %s cannot be %s", p.Status, op)
}

// Confirm queues the confirmation of a requires_action payment
// (confirmPayment (POST /payments/{id}/confirm)): with code, a one-time
// code; without, a question for the outcome of a 3DS or redirect step
// (docs/design/decisions.md section 4). The payment answers processing
// meanwhile.
func (s *Service) Confirm(ctx context.Context, tx OperationTx, p *Payment, code string) (*Payment, error) {
	if p.Status != RequiresAction {
		return nil, invalidState(p, "confirmed")
	}
	// A step past its hour is being canceled at the acquirer (abandon):
	// its answer decides, and the confirm would be a second question.
	if pending, err := s.pendingOp(ctx, tx, p, OpAbandon); err != nil || pending {
		if err == nil {
			err = fault.Newf(fault.InvalidPaymentState, "the payer's step ran out of time: the payment is being canceled at its acquirer")
		}
		return nil, err
	}
	ctx, err := clock.OfKey(ctx, tx, p.AccessKeyID)
	if err != nil {
		return nil, err
	}
	if q, ok, err := s.confirmRedirect(ctx, tx, p, code); ok {
		return q, err
	}
	if p.NextActionType == "otp" && code == "" {
		return nil, fault.OnField(fault.ValidationError, "value", "the one-time code the payer received is required")
	}
	var sec *Secret
	if code != "" {
		sec = &Secret{Version: SecretVersion, Code: code}
	}
	p.Status, p.UpdatedAt = Processing, s.now(ctx)
	if err := s.save(ctx, tx, p); err != nil {
		return nil, err
	}
	return p, s.queue(ctx, tx, p, OpConfirm, 0, "", sec)
}

// Capture queues the capture of an authorized payment (capturePayment
// (POST /payments/{id}/capture)), all of it or amount (≤ the authorized
// amount; the rest is released).
func (s *Service) Capture(ctx context.Context, tx OperationTx, p *Payment, amount *int64) (*Payment, error) {
	if p.Status != Authorized {
		return nil, invalidState(p, "captured")
	}
	n := p.AmountMinor
	if amount != nil {
		if *amount > p.AmountMinor {
			return nil, fault.OnField(fault.ValidationError, "amount_minor", "must not exceed the authorized amount")
		}
		n = *amount
	}
	if pending, err := s.pendingOp(ctx, tx, p, OpCapture, OpCancel); err != nil || pending {
		if err == nil {
			err = invalidState(p, "captured: a capture or cancel is already queued")
		}
		return nil, err
	}
	return p, s.queue(ctx, tx, p, OpCapture, n, "", nil)
}

// Cancel cancels a session not yet paid at once, or queues the release of a
// hold (cancelPayment (POST /payments/{id}/cancel)).
func (s *Service) Cancel(ctx context.Context, tx OperationTx, p *Payment) (*Payment, error) {
	switch p.Status {
	case Created, AwaitingPaymentData:
		if p.ExpiresAt != nil && !s.now(ctx).Before(*p.ExpiresAt) {
			return nil, fault.Newf(fault.InvalidPaymentState, "a payment in status %s cannot be canceled", Expired)
		}
		p.Status, p.UpdatedAt = Canceled, s.now(ctx)
		return p, s.save(ctx, tx, p)
	case Authorized:
		if pending, err := s.pendingOp(ctx, tx, p, OpCapture, OpCancel); err != nil || pending {
			if err == nil {
				err = invalidState(p, "canceled: a capture or cancel is already queued")
			}
			return nil, err
		}
		return p, s.queue(ctx, tx, p, OpCancel, 0, "", nil)
	}
	return nil, invalidState(p, "canceled")
}

// Refund queues a refund (refundPayment (POST /payments/{id}/refunds)). A
// channel whose profile lacks the refund capability answers 422 before
// anything is queued.
func (s *Service) Refund(ctx context.Context, tx OperationTx, p *Payment, amount *int64) (*Payment, *Refund, error) {
	if p.Status != Succeeded && p.Status != PartiallyRefunded {
		return nil, nil, invalidState(p, "refunded")
	}
	ch, err := tx.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return nil, nil, err
	}
	prov, err := s.Providers.Provider(ch.Provider)
	if err != nil {
		return nil, nil, err
	}
	caps, err := prov.Capabilities(ch.Profile)
	if err != nil {
		return nil, nil, err
	}
	if !caps.Has(provider.Refund) {
		return nil, nil, fault.New(fault.CapabilityNotSupported, "refunds are not supported by this payment channel; send a payout to return money")
	}
	ops, err := tx.OpenOperations(ctx, p.ID)
	if err != nil {
		return nil, nil, err
	}
	left := p.CapturedAmountMinor - p.RefundedAmountMinor
	for _, op := range ops {
		if op.Kind == OpRefund {
			left -= op.AmountMinor // queued refunds count already
		}
	}
	n := left
	if amount != nil {
		n = *amount
	}
	if n <= 0 || n > left {
		return nil, nil, fault.OnField(fault.ValidationError, "amount_minor", "must not exceed the amount left to refund")
	}
	now := s.now(ctx)
	r := &Refund{ID: s.NewID(), PaymentID: p.ID, AmountMinor: n, Status: RefundPending, CreatedAt: now}
	if err := tx.CreateRefund(ctx, r); err != nil {
		return nil, nil, err
	}
	return p, r, s.queue(ctx, tx, p, OpRefund, n, r.ID, nil)
}

// pendingOp reports whether an operation of one of kinds is still open.
func (s *Service) pendingOp(ctx context.Context, tx OperationTx, p *Payment, kinds ...string) (bool, error) {
	ops, err := tx.OpenOperations(ctx, p.ID)
	if err != nil {
		return false, err
	}
	for _, op := range ops {
		if slices.Contains(kinds, op.Kind) {
			return true, nil
		}
	}
	return false, nil
}
