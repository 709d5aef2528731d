// Package verification is card verifications (LookUp): a small sum is
// briefly blocked on a card and the payer reads a code back
// (createCardVerification (POST /card-verifications); docs/verifications.md).
// A verification is a resource of its own, a sibling of internal/payment
// on the shared operation engine (docs/architecture.md, "Adding a resource
// that calls a provider"): it never appears among payments.
package verification

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/lifecycle"
)

// Resource names verifications among the resources whose operations the
// operation engine runs, and in events (card_verification.<status>).
const Resource = "card_verification"

// Kinds of a verification's operations.
const (
	OpCreate = "create" // the LookUp: hold a sum, send the payer a code
	OpVerify = "verify" // submit one code
	// OpRelease lets the hold go when the verification expired unverified
	// (docs/design/decisions.md section 15); it changes no status here.
	OpRelease = "release"
)

// Status is where a verification stands (OpenAPI schema CardVerification).
type Status string

// The statuses.
const (
	Pending  Status = "pending"
	CodeSent Status = "code_sent"
	Verified Status = "verified"
	Failed   Status = "failed"
	// ManualReview: the provider's answer could not be read; not final and
	// never a bad card: the engine keeps asking (docs/design/decisions.md
	// section 4).
	ManualReview Status = "manual_review"
)

// Final reports whether no change can follow.
func (s Status) Final() bool { return s == Verified || s == Failed }

// moves is the life cycle (client API, "Card verification"): from each
// status, the statuses it may change to.
var moves = lifecycle.Table[Status]{
	Pending:      {CodeSent, Verified, Failed, ManualReview},
	CodeSent:     {Verified, Failed, ManualReview},
	ManualReview: {CodeSent, Verified, Failed},
}

// CanMove reports whether from → to is in the life cycle.
func CanMove(from, to Status) bool {
	return moves.Allows(from, to)
}

// Decline codes Paygate sets itself.
const (
	// DeclineAuthenticationFailed: the provider's code limit was reached
	// (client API).
	DeclineAuthenticationFailed = "authentication_failed"
	// DeclineExpired: no right code within Lifetime
	// (docs/design/decisions.md section 15).
	DeclineExpired = "verification_expired"
)

// Lifetime is how long a verification waits for its code
// (docs/design/decisions.md section 15: 72 hours).
const Lifetime = 72 * time.Hour

// ErrDuplicateOrderID is what the store answers when the key already has a
// verification with the order id (a unique index).
var ErrDuplicateOrderID = errors.New("a verification with this order_id exists")

// ErrConflict: the verification changed since it was read (compare-and-set lost).
var ErrConflict = fault.Conflict("verification", fault.VerificationNotAwaitingCode)

// Verification is one card verification. No card number, CVV or code is
// ever kept here: they travel only in an operation's sealed secret.
type Verification struct {
	ID          string
	AccessKeyID string
	ChannelID   string
	OrderID     string
	Currency    string
	Description string
	Metadata    json.RawMessage
	Status      Status
	CardMask    string
	DeclineCode string
	// ProviderID is the provider's id of the verification, once it has one.
	ProviderID    string
	BankReference *BankReference
	// VerifyAttempts counts the codes submitted (verifyCardVerification
	// (POST /card-verifications/{id}/verify)).
	VerifyAttempts int
	// ExpiresAt: a verification still waiting for its code then fails.
	ExpiresAt time.Time
	// Version counts stored changes: updates compare and set it.
	Version int64
	// StoredStatus is the status as last read or written: a change of
	// Status against it makes an event (docs/design/decisions.md section 6).
	StoredStatus Status
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// BankReference is the issuing bank's own reference, when the provider
// reports one.
type BankReference struct {
	PaymentID string `json:"payment_id,omitempty"`
	Name      string `json:"name,omitempty"`
}

// ClientDescription is the neutral, payer-safe summary of a status (OpenAPI
// schema CardVerification: never the provider's own text).
func ClientDescription(v *Verification) string {
	switch v.Status {
	case Pending:
		return "The card verification is being started."
	case CodeSent:
		return "A small amount was blocked on the card; enter the code shown with it."
	case Verified:
		return "The card was verified."
	case ManualReview:
		return "The card verification is being checked."
	}
	if v.DeclineCode == DeclineExpired {
		return "The card verification expired."
	}
	return "The card could not be verified."
}
