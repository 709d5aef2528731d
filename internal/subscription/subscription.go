// Package subscription is the recurring-charge domain: mandates (the
// payer's standing consent, with the saved card it charges), subscriptions
// (a schedule of charges on a mandate), their life cycles in one table
// each, and the scheduler that charges each due period exactly once
// (docs/design/decisions.md sections 5 and 11; docs/subscriptions.md).
//
// A charge is an ordinary payment made by internal/payment; this package
// decides when, and learns the outcome through payment.Recurring, in the
// transaction that records it.
package subscription

import (
	"errors"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/lifecycle"
	"github.com/paygate/paygate/internal/recurring"
)

// Resource names subscriptions and mandates among the resources of events.
const (
	Resource        = "subscription"
	MandateResource = "mandate"
)

// Status is a subscription status of the client API (schema
// Subscription). The records a payment's transaction writes are
// internal/recurring's, so that internal/payment can name them without
// importing this package (docs/architecture.md, "Typed seams").
type Status = recurring.Status

// The subscription statuses.
const (
	Incomplete Status = "incomplete" // the payment that carries the terms has not succeeded yet
	Active     Status = "active"
	PastDue    Status = "past_due" // a charge failed softly: retried after 1, 3 and 5 days
	Paused     Status = "paused"
	Canceled   Status = "canceled"  // final
	Completed  Status = "completed" // final: the mandate's card expired with no charge due
)

// Statuses lists every status, in the client API's order.
var Statuses = []Status{Incomplete, Active, PastDue, Paused, Canceled, Completed}

// Final reports whether a subscription in status s will never change
// again.
func Final(s Status) bool { return s == Canceled || s == Completed }

// transitions is the whole life cycle of a subscription
// (docs/subscriptions.md, "Statuses"): from a status, the statuses it may
// move to. Anything else is refused.
var transitions = lifecycle.Table[Status]{
	Incomplete: {Active, Canceled, Completed},
	Active:     {PastDue, Paused, Canceled, Completed},
	PastDue:    {Active, Paused, Canceled, Completed},
	Paused:     {Active, Canceled, Completed},
}

// CanMove reports whether the life cycle allows from → to.
func CanMove(from, to Status) bool {
	return transitions.Allows(from, to)
}

// Action is a merchant's call on a subscription (pauseSubscription,
// resumeSubscription, cancelSubscription).
type Action string

// The actions.
const (
	Pause  Action = "pause"
	Resume Action = "resume"
	Cancel Action = "cancel"
)

// actions says, for each action, the statuses it is allowed in and where
// it leads; in any other status the call is 409 invalid_subscription_state
// (docs/subscriptions.md, "Statuses").
var actions = map[Action]struct {
	from []Status
	to   Status
}{
	Pause:  {[]Status{Active, PastDue}, Paused},
	Resume: {[]Status{Paused}, Active},
	Cancel: {[]Status{Incomplete, Active, PastDue, Paused}, Canceled},
}

// Allows reports whether a is allowed in s, and the status it leads to.
func (a Action) Allows(s Status) (Status, bool) {
	rule, ok := actions[a]
	if !ok {
		return "", false
	}
	for _, f := range rule.from {
		if f == s {
			return rule.to, true
		}
	}
	return "", false
}

// Subscription is one schedule of charges on a mandate.
type Subscription = recurring.Subscription

// MandateStatus is a mandate status.
type MandateStatus = recurring.MandateStatus

// The mandate statuses (docs/subscriptions.md, "Mandates").
const (
	MandatePending MandateStatus = "pending" // the payment carrying the terms has no outcome yet
	MandateActive  MandateStatus = "active"  // consent given and the card saved: it can be charged
	MandateFailed  MandateStatus = "failed"  // the payment carrying the terms did not succeed
)

// mandateMoves is the mandate's life cycle.
var mandateMoves = lifecycle.Table[MandateStatus]{
	MandatePending: {MandateActive, MandateFailed},
}

// CanMoveMandate reports whether a mandate may move from → to.
func CanMoveMandate(from, to MandateStatus) bool {
	return mandateMoves.Allows(from, to)
}

// Mandate is a payer's consent to be charged later on a saved card.
type Mandate = recurring.Mandate

// Evidence is what Paygate keeps of a payer's consent: how it was given
// and from where (docs/subscriptions.md, "Mandates").
type Evidence struct {
	// Channel is "hosted_page" (the payer ticked the box on Paygate's
	// page) or "direct" (the merchant sent the terms with a direct
	// payment and vouches for the consent).
	Channel string `json:"channel"`
	// ConsentBox: the hosted page showed a separate consent box and the
	// payer ticked it (the terms' consent: true).
	ConsentBox bool   `json:"consent_box"`
	PayerIP    string `json:"payer_ip,omitempty"`
	UserAgent  string `json:"user_agent,omitempty"`
}

// Errors of the store that the domain acts on.
var (
	// ErrConflict: the row changed since it was read (compare-and-set lost).
	ErrConflict = fault.Conflict("subscription", fault.InvalidSubscriptionState)
	// ErrDuplicateCharge: a payment for this (subscription, period,
	// attempt) exists already (the database's unique index).
	ErrDuplicateCharge = errors.New("this period's charge exists already")
)
