// Package payment is the payment domain: the Payment record, its life cycle
// (docs/design/decisions.md section 4) in one transition table, hosted
// sessions and their jobs.
package payment

import "github.com/paygate/paygate/internal/lifecycle"

// Status is a payment status of the client API.
type Status string

// The payment statuses of the client API.
const (
	Created             Status = "created"
	AwaitingPaymentData Status = "awaiting_payment_data"
	Processing          Status = "processing"
	RequiresAction      Status = "requires_action"
	Authorized          Status = "authorized"
	Succeeded           Status = "succeeded"
	Declined            Status = "declined"
	Failed              Status = "failed"
	Canceled            Status = "canceled"
	Expired             Status = "expired"
	ManualReview        Status = "manual_review"
	PartiallyRefunded   Status = "partially_refunded"
	Refunded            Status = "refunded"
)

// Final reports whether no further change is expected
// (docs/design/decisions.md section 4: final is true for succeeded, declined,
// failed, canceled, expired, partially_refunded, refunded). A succeeded or
// partially refunded payment can still be refunded; "final" tells the
// merchant the outcome is known.
func (s Status) Final() bool {
	switch s {
	case Succeeded, Declined, Failed, Canceled, Expired, PartiallyRefunded, Refunded:
		return true
	}
	return false
}

// transitions is the whole life cycle of docs/design/decisions.md section 4:
// from a status, the statuses it may move to. Anything else is refused.
var transitions = lifecycle.Table[Status]{
	// A provider_redirect session goes to requires_action at once: the
	// payer is at the provider, as during a 3DS challenge.
	Created:             {AwaitingPaymentData, Processing, RequiresAction, Canceled, Expired},
	AwaitingPaymentData: {Processing, RequiresAction, Canceled, Expired},
	// A hosted session whose attempt was declined waits for another one
	// while it is open (processing or requires_action → awaiting_payment_data).
	// processing or manual_review → expired: the acquirer canceled the
	// payment of a payer's step that ran out of time while Paygate asked.
	Processing:     {RequiresAction, Authorized, Succeeded, Declined, Failed, ManualReview, AwaitingPaymentData, Expired},
	RequiresAction: {Processing, Authorized, Succeeded, Declined, Failed, ManualReview, Expired, AwaitingPaymentData},
	// manual_review → canceled: a hold's cancel whose answer could not be
	// read, then could.
	ManualReview:      {Processing, RequiresAction, Authorized, Succeeded, Declined, Failed, Expired, Canceled},
	Authorized:        {Succeeded, Canceled, Expired, ManualReview},
	Succeeded:         {PartiallyRefunded, Refunded},
	PartiallyRefunded: {PartiallyRefunded, Refunded},
}

// CanMove reports whether the life cycle allows from → to.
func CanMove(from, to Status) bool {
	return transitions.Allows(from, to)
}

// Statuses lists every status, in the client API's order.
var Statuses = []Status{
	Created, AwaitingPaymentData, Processing, RequiresAction, Authorized, Succeeded,
	Declined, Failed, Canceled, Expired, ManualReview, PartiallyRefunded, Refunded,
}
