package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/recurring"
)

// Recurring is the subscription domain (internal/subscription) as payments
// call it, in the transaction of the change, so that a mandate, its
// subscription and the payment never disagree (docs/design/decisions.md
// section 5). The transaction is handed as the subscription's own
// statements (recurring.Tx), which every transaction a payment is written
// in offers (WriteTx, CreateTx): the compiler checks it, nothing at run
// time.
type Recurring interface {
	// Begin creates the pending mandate and the incomplete subscription
	// of a new payment that carries terms, and sets p.MandateID and
	// p.SubscriptionID before the payment is stored.
	Begin(ctx context.Context, tx recurring.Tx, p *Payment) error
	// Moved is told of a status change of a payment that carries terms
	// or pays a subscription's period, after the payment's own event.
	Moved(ctx context.Context, tx recurring.Tx, p *Payment) error
}

// ErrDuplicateCharge: a payment for this (subscription, period, attempt)
// exists already. The database's unique index decides
// (payments_subscription_charge), so two schedulers can never both charge a period.
var ErrDuplicateCharge = errors.New("this subscription period's charge exists already")

// MaxTermsBackdate is how far in the past first_charge_at may be: a little
// for clocks and queues, not so much that a new subscription starts by
// charging a backlog of periods (docs/subscriptions.md, "Terms"). A
// subscription's first_run_at follows the same rule.
const MaxTermsBackdate = 24 * time.Hour

// MaxIntervalCount is the longest interval of each unit, ten years
// (docs/subscriptions.md, "Terms"): every date of a schedule, anchor plus
// n intervals, stays one the API can show, and the count one both
// databases store. A subscription's interval_count follows the same rule.
var MaxIntervalCount = map[string]int{"day": 3660, "week": 522, "month": 120, "year": 10}

// CheckInterval refuses an interval longer than MaxIntervalCount allows,
// on field.
func CheckInterval(unit string, count int, field string) *fault.Error {
	if limit, ok := MaxIntervalCount[unit]; ok && count > limit {
		return fault.OnField(fault.ValidationError, field,
			fmt.Sprintf("must be at most %d for interval_unit %s (ten years)", limit, unit))
	}
	return nil
}

// checkTerms applies the rules of subscription terms beyond the schema
// (docs/subscriptions.md, "Terms"): an interval of at most ten years, and
// first_charge_at not more than a day in the past by the key's clock.
func checkTerms(t *SubscriptionTerms, now time.Time) *fault.Error {
	if t == nil {
		return nil
	}
	if err := CheckInterval(t.IntervalUnit, t.IntervalCount, "subscription.interval_count"); err != nil {
		return err
	}
	if t.FirstChargeAt.Before(now.Add(-MaxTermsBackdate)) {
		return fault.OnField(fault.ValidationError, "subscription.first_charge_at",
			"must not be more than 24 hours in the past")
	}
	return nil
}

// Charge is one attempt at a subscription's period: a merchant-initiated
// payment on the mandate's saved card (docs/design/decisions.md section
// 11).
type Charge struct {
	ID                              string // the payment's id, chosen by the caller
	KeyID, ChannelID                string
	MandateID, SubscriptionID       string
	SavedCardID, MaskedCard, Scheme string
	CustomerReference               string
	Period                          int64
	Attempt                         int
	AmountMinor                     int64
	Currency                        string
	At                              time.Time // by the key's clock
}

// CreateCharge stores a subscription's charge and queues its provider
// call, in tx. Like every payment it first reserves its amount on the
// collection allowance; over it, the charge is stored failed with decline
// code limit_exceeded and nothing goes to the provider (a soft failure:
// docs/subscriptions.md, "Dunning"). ErrDuplicateCharge when the period's
// attempt exists already. It returns the payment and the id of its
// provider call ("" when refused).
func (s *Service) CreateCharge(ctx context.Context, tx DirectTx, c Charge) (*Payment, string, error) {
	period := c.Period
	p := &Payment{
		ID: c.ID, AccessKeyID: c.KeyID, ChannelID: c.ChannelID, Kind: KindRecurring, Status: Processing,
		OrderID:     fmt.Sprintf("subscription_%s_%d_%d", c.SubscriptionID, c.Period, c.Attempt),
		AmountMinor: c.AmountMinor, Currency: c.Currency, CustomerReference: c.CustomerReference,
		Description: fmt.Sprintf("Subscription charge, period %d", c.Period), Locale: "ru",
		OperationMode: ModeCharge, Method: MethodCard, MaskedCard: c.MaskedCard, CardScheme: c.Scheme,
		SavedCardID: c.SavedCardID, MandateID: c.MandateID, SubscriptionID: c.SubscriptionID,
		SubscriptionPeriod: &period, SubscriptionAttempt: c.Attempt, CreatedAt: c.At, UpdatedAt: c.At,
	}
	err := s.create(ctx, tx, p)
	if f, ok := fault.As(err); ok && f.Code == fault.LimitExceeded {
		p.Status, p.DeclineCode, p.DeclineMessage = Failed, string(fault.LimitExceeded),
			"The payment exceeds the merchant's allowance."
		return p, "", s.insert(ctx, tx, p)
	}
	if err != nil {
		return nil, "", err
	}
	opID, err := s.queueID(ctx, tx, p, OpPay, p.AmountMinor, "", nil)
	return p, opID, err
}

// moved tells the subscription domain of a status change of p (the
// caller knows it changed).
func (s *Service) moved(ctx context.Context, tx recurring.Tx, p *Payment) error {
	if s.Recurring == nil || (p.MandateID == "" && p.SubscriptionID == "") {
		return nil
	}
	return s.Recurring.Moved(ctx, tx, p)
}

// reserve is create's allowance step.
func reserve(ctx context.Context, tx allowance.Tx, p *Payment) error {
	return allowance.Reserve(ctx, tx, allowance.Hold{KeyID: p.AccessKeyID, Allowance: allowance.Collection,
		Currency: p.Currency, AmountMinor: p.AmountMinor, Resource: Resource, ResourceID: p.ID,
		At: p.CreatedAt})
}

// now is the time by the clock of the key whose request or job ctx
// carries (docs/design/decisions.md section 14).
func (s *Service) now(ctx context.Context) time.Time { return clock.Now(ctx, s.Now) }
