// Package recurring holds what a payment's transaction writes of the
// subscription domain: the mandate and subscription records and the
// statements the domain runs in the transaction of a payment's change
// (Tx). internal/payment embeds Tx in the transactions it writes in and
// hands it to payment.Recurring, so the compiler checks that a payment's
// transaction offers the subscription's statements
// (docs/architecture.md, "Typed seams"). It imports neither payment nor
// subscription: both import it. The rules (status tables, the schedule,
// dunning) are internal/subscription's.
package recurring

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/webhook"
)

// Tx is what the subscription domain reads and writes in the transaction
// of a payment's change: the mandate and subscription a payment with
// terms begins, and the moves a payment's outcome makes to them.
type Tx interface {
	CreateMandate(ctx context.Context, m *Mandate) error
	UpdateMandate(ctx context.Context, m *Mandate) error
	FindMandateByID(ctx context.Context, id string) (*Mandate, error)
	CreateSubscription(ctx context.Context, s *Subscription) error
	UpdateSubscription(ctx context.Context, s *Subscription) error
	LockSubscription(ctx context.Context, id string) (*Subscription, error)
	// FindSavedCardForCharge reads the card a mandate charges, even if
	// deleted since.
	FindSavedCardForCharge(ctx context.Context, keyID, id string) (*savedcard.Card, error)
	webhook.RecordTx
}

// Status is a subscription status of the client API (schema
// Subscription); its values and life cycle are internal/subscription's.
type Status string

// MandateStatus is a mandate status of the client API (schema Mandate);
// its values and life cycle are internal/subscription's.
type MandateStatus string

// Interval is a subscription's period length.
type Interval struct {
	Unit  string
	Count int
}

// Subscription is one schedule of charges on a mandate.
type Subscription struct {
	ID          string
	AccessKeyID string
	MandateID   string
	Status      Status
	AmountMinor int64
	Currency    string
	Interval    Interval
	// Anchor is when period 0 is due (first_charge_at or first_run_at):
	// period n is due at subscription.Due(Anchor, Interval, n).
	Anchor time.Time
	// Period is the next period to charge; Attempt counts the charges of
	// it made so far (0 until the first; a retry is attempt 1 to 3).
	Period  int64
	Attempt int
	// FailedAt is when the period's first charge failed: retries are
	// counted from it.
	FailedAt *time.Time
	// NextRunAt is when the scheduler next acts: the period's due time, a
	// retry's time, or the card's expiry. Nil: nothing is scheduled
	// (incomplete, paused, final).
	NextRunAt *time.Time
	// ChargingPaymentID is the charge in flight: while it is set no other
	// charge starts.
	ChargingPaymentID string
	LastDeclineCode   string
	Version           int64
	StoredStatus      Status
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Mandate is a payer's consent to be charged later on a saved card.
type Mandate struct {
	ID                string
	AccessKeyID       string
	Status            MandateStatus
	PaymentID         string // the payment that carried the terms
	ChannelID         string
	CustomerReference string
	DisclosureVersion string
	SavedCardID       string // set when active
	CardMask          string
	CardExpMonth      int
	CardExpYear       int
	ConsentAt         *time.Time
	Evidence          json.RawMessage // subscription.Evidence as JSON
	Version           int64
	StoredStatus      MandateStatus
	CreatedAt         time.Time
	UpdatedAt         time.Time
}
