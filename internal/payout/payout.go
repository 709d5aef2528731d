// Package payout is the payout domain: money sent to a card, a saved card
// or a wallet (createPayout (POST /payouts)), its life cycle in one
// transition table (docs/design/decisions.md section 15), and the
// operation handler that carries its calls to the provider through the
// shared operation engine (docs/architecture.md).
package payout

import (
	"encoding/json"
	"time"

	"github.com/paygate/paygate/internal/lifecycle"
)

// Resource names payouts among the resources whose operations the
// operation engine runs (operation.Operation.Resource).
const Resource = "payout"

// Status is a payout status of the client API (schema Payout).
type Status string

// The payout statuses.
const (
	Processing     Status = "processing"
	RequiresAction Status = "requires_action"
	Succeeded      Status = "succeeded"
	Declined       Status = "declined"
	Failed         Status = "failed"
	// ManualReview is neither final nor a failure: the provider's answer
	// could not be read and the engine keeps asking, never resending.
	ManualReview Status = "manual_review"
)

// Final reports whether no further change is expected (schema Payout:
// true only for succeeded, declined, failed).
func (s Status) Final() bool { return s == Succeeded || s == Declined || s == Failed }

// transitions is the payout's whole life cycle: from a status, the
// statuses it may move to. Anything else is refused by save.
var transitions = lifecycle.Table[Status]{
	Processing:     {RequiresAction, Succeeded, Declined, Failed, ManualReview},
	RequiresAction: {Processing, Succeeded, Declined, Failed, ManualReview},
	ManualReview:   {RequiresAction, Succeeded, Declined, Failed},
}

// CanMove reports whether the life cycle allows from → to.
func CanMove(from, to Status) bool {
	return transitions.Allows(from, to)
}

// Statuses lists every status, in the client API's order.
var Statuses = []Status{Processing, RequiresAction, Succeeded, Declined, Failed, ManualReview}

// Methods of a payout (schema PayoutMethod, type).
const (
	MethodCard       = "card"
	MethodApplePay   = "apple_pay"
	MethodGooglePay  = "google_pay"
	MethodSamsungPay = "samsung_pay"
)

// Operation kinds: one provider call each.
const (
	OpCreate  = "create"
	OpConfirm = "confirm"
)

// ActionLifetime is how long a payout may wait in requires_action before
// the provider is asked once more and, still waiting, the payout fails
// with authentication_expired (docs/design/decisions.md section 15).
const ActionLifetime = 30 * time.Minute

// Payout is one payout. The destination card number, the wallet payload
// and one-time codes are never here: they live only in the sealed secret
// of the operation that carries them (Secret).
type Payout struct {
	ID          string
	AccessKeyID string
	ChannelID   string
	OrderID     string
	Status      Status
	AmountMinor int64
	Currency    string
	Account     string
	Method      string
	CardMask    string
	SavedCardID string
	Description string
	ReturnURL   string
	Metadata    json.RawMessage
	Device      json.RawMessage
	PayerIP     string
	DeclineCode string
	// ClientDescription is Paygate's own payer-safe text for DeclineCode.
	ClientDescription string
	NextActionType    string
	NextActionURL     string
	// ActionExpiresAt is set when the payout first waits for the payer:
	// ActionLifetime later it is asked about once more, then failed. A
	// confirm that finds the payer not done does not extend it.
	ActionExpiresAt *time.Time
	BankReference   *BankReference
	ProviderID      string
	// Version counts stored changes: updates compare and set it.
	Version int64
	// StoredStatus is the status as last read or written: a change of
	// Status against it records an event (docs/design/decisions.md section 6).
	StoredStatus Status
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// BankReference is the receiving bank's reference for the transfer.
type BankReference struct {
	PaymentID string `json:"payment_id,omitempty"`
	Name      string `json:"name,omitempty"`
}

// declineTexts are payer-safe texts by decline code, written by Paygate
// (schema Payout, client_description: never the provider's own text).
var declineTexts = map[string]string{
	"card_declined":          "The card issuer refused the transfer.",
	"insufficient_funds":     "The transfer was refused.",
	"do_not_honor":           "The card issuer refused the transfer.",
	"expired_card":           "The card has expired.",
	"authentication_failed":  "The payee did not pass authentication.",
	"authentication_expired": "The payee did not complete authentication in time.",
	"processing_error":       "The transfer could not be processed.",
	"provider_unavailable":   "The payout provider could not be reached.",
}

func declineText(code string) string {
	if t, ok := declineTexts[code]; ok {
		return t
	}
	return "The transfer was not made."
}
