package payment

import (
	"time"

	"github.com/paygate/paygate/internal/operation"
)

// Operation kinds: one call to the provider each.
const (
	OpPay     = "pay"
	OpConfirm = "confirm"
	OpCapture = "capture"
	OpCancel  = "cancel"
	OpRefund  = "refund"
	// OpAbandon cancels at the acquirer a payment whose payer did not
	// finish a 3DS or redirect step in time (ActionLifetime): the payment
	// expires once the acquirer has canceled it, and succeeds (or is
	// declined) if the payer finished first (docs/payments.md, "The
	// payer's step expires").
	OpAbandon = "abandon"
)

// Operation states (operation.State).
const (
	OpPending   = operation.Pending
	OpInquiring = operation.Inquiring
	OpDone      = operation.Done
)

// Operation is one provider call for a payment (Resource "payment",
// ResourceID the payment's id; Ref a refund's id). Its ID is the
// idempotency key the provider sees.
type Operation = operation.Operation

// Refund is a refund of a payment.
type Refund struct {
	ID          string
	PaymentID   string
	AmountMinor int64
	Status      string // pending, succeeded, failed
	CreatedAt   time.Time
	CompletedAt *time.Time
}

// Refund statuses (the client API leaves them open).
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)
