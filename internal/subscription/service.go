package subscription

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/lifecycle"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/recurring"
)

// Tx is what the subscription domain reads and writes in a transaction
// of its own (the store's transaction offers it all): what it writes in a
// payment's (recurring.Tx) and the reads of a merchant's calls and of the
// scheduler.
type Tx interface {
	recurring.Tx
	FindMandateForKey(ctx context.Context, keyID, id string) (*Mandate, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	KeyClockOffset(ctx context.Context, keyID string) (time.Duration, error)
}

// ChargeTx is what starting a charge needs: the subscription's statements
// and a payment's.
type ChargeTx interface {
	Tx
	payment.DirectTx
}

// Store is what the scheduler, and the API's reads, read outside a
// transaction.
type Store interface {
	DueSubscriptions(ctx context.Context, now time.Time, limit int) ([]string, error)
	NextSubscriptionDue(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error)
	FindPaymentByID(ctx context.Context, id string) (*payment.Payment, error)
	FindSubscriptionForKey(ctx context.Context, keyID, id string) (*Subscription, error)
	FindMandateForKey(ctx context.Context, keyID, id string) (*Mandate, error)
}

// Operations runs a charge's provider call at once (operation.Engine.Run),
// for the sandbox clock, which waits for each charge's outcome.
type Operations interface {
	Run(ctx context.Context, opID string, attempt, maxAttempts int) error
}

// Service is the subscription domain.
type Service struct {
	NewID    func() string
	Now      func() time.Time // the process's clock; a key's is clock.Now(ctx, Now)
	Payments *payment.Service
	Store    Store
	Transact func(ctx context.Context, fn func(ChargeTx) error) error
	Ops      Operations
	Log      *slog.Logger
	// RenderSubscription and RenderMandate turn the resources into their
	// API form for their events (docs/design/decisions.md section 6); nil
	// records no events.
	RenderSubscription func(*Subscription) ([]byte, error)
	RenderMandate      func(*Mandate) ([]byte, error)
	// ErrNotFound is the store's "no such row", which the domain turns
	// into 422 mandate_not_found and 404.
	ErrNotFound error
}

// NewService builds the subscription domain on the payment service it charges
// through; every dependency is an argument (docs/architecture.md, "The
// composition root"). The renderers make the object of each status
// change's event (docs/design/decisions.md section 6); errNotFound is the
// store's "no such row".
func NewService(payments *payment.Service, st Store, transact func(ctx context.Context, fn func(ChargeTx) error) error,
	ops Operations, now func() time.Time, newID func() string, log *slog.Logger,
	renderSubscription func(*Subscription) ([]byte, error), renderMandate func(*Mandate) ([]byte, error),
	errNotFound error) *Service {
	return &Service{Payments: payments, Store: st, Transact: transact, Ops: ops, Now: now, NewID: newID, Log: log,
		RenderSubscription: renderSubscription, RenderMandate: renderMandate, ErrNotFound: errNotFound}
}

// The payment domain tells Service of payments with terms.
var _ payment.Recurring = (*Service)(nil)

// retryAfter are the retries of a period after its first soft failure
// (docs/design/decisions.md section 11: 1, 3 and 5 days after it).
var retryAfter = []time.Duration{24 * time.Hour, 3 * 24 * time.Hour, 5 * 24 * time.Hour}

// hardDeclines are never retried: the subscription is canceled at once
// (docs/design/decisions.md section 11). invalid_card_number is the
// sandbox's name of incorrect_number; do_not_retry is what an acquirer's
// "never try this card again" declines (fraud, a revoked authorization)
// become (docs/providers/stripe.md, "Declines"). Every other decline, and
// a failure, is soft.
var hardDeclines = map[string]bool{
	"lost_card": true, "stolen_card": true, "account_closed": true, "expired_card": true,
	"incorrect_number": true, "invalid_card_number": true, "do_not_retry": true,
}

// Hard reports whether a decline code ends a subscription at once.
func Hard(code string) bool { return hardDeclines[code] }

// Begin implements payment.Recurring: a payment with terms creates a
// pending mandate and an incomplete subscription of the payment's amount
// and currency, due first at first_charge_at (docs/design/decisions.md
// section 5).
func (s *Service) Begin(ctx context.Context, tx recurring.Tx, p *payment.Payment) error {
	t := p.Subscription
	m := &Mandate{ID: s.NewID(), AccessKeyID: p.AccessKeyID, Status: MandatePending, PaymentID: p.ID,
		ChannelID: p.ChannelID, CustomerReference: p.CustomerReference, DisclosureVersion: t.DisclosureVersion,
		CreatedAt: p.CreatedAt, UpdatedAt: p.CreatedAt}
	if err := tx.CreateMandate(ctx, m); err != nil {
		return err
	}
	if err := s.mandateChanged(ctx, tx, m); err != nil {
		return err
	}
	sub := &Subscription{ID: s.NewID(), AccessKeyID: p.AccessKeyID, MandateID: m.ID, Status: Incomplete,
		AmountMinor: p.AmountMinor, Currency: p.Currency, Interval: Interval{Unit: t.IntervalUnit, Count: t.IntervalCount},
		Anchor: t.FirstChargeAt.UTC().Truncate(time.Microsecond), CreatedAt: p.CreatedAt, UpdatedAt: p.CreatedAt}
	if err := tx.CreateSubscription(ctx, sub); err != nil {
		return err
	}
	if err := s.changed(ctx, tx, sub); err != nil {
		return err
	}
	p.MandateID, p.SubscriptionID = m.ID, sub.ID
	return nil
}

// Moved implements payment.Recurring.
func (s *Service) Moved(ctx context.Context, tx recurring.Tx, p *payment.Payment) error {
	if p.SubscriptionPeriod == nil {
		return s.consentMoved(ctx, tx, p)
	}
	return s.chargeMoved(ctx, tx, p)
}

// consentMoved: the payment that carried the terms succeeded (the mandate
// becomes active with its saved card and the evidence of consent, the
// subscription active) or ended otherwise (mandate failed, subscription
// canceled) (docs/design/decisions.md section 5).
func (s *Service) consentMoved(ctx context.Context, tx recurring.Tx, p *payment.Payment) error {
	var ok bool
	switch p.Status {
	case payment.Succeeded:
		ok = true
	case payment.Declined, payment.Failed, payment.Canceled, payment.Expired:
	default:
		return nil // no outcome yet (a hosted decline waits for another attempt)
	}
	m, err := tx.FindMandateByID(ctx, p.MandateID)
	if err != nil {
		return err
	}
	if m.Status != MandatePending {
		return nil
	}
	sub, err := tx.LockSubscription(ctx, p.SubscriptionID)
	if err != nil {
		return err
	}
	now := p.UpdatedAt
	m.UpdatedAt, sub.UpdatedAt = now, now
	if ok && p.SavedCardID == "" {
		ok = false // the provider kept no card: there is nothing to charge later
		sub.LastDeclineCode = "card_not_saved"
	}
	if !ok {
		m.Status = MandateFailed
		if err := s.saveMandate(ctx, tx, m); err != nil {
			return err
		}
		if CanMove(sub.Status, Canceled) {
			sub.Status, sub.NextRunAt = Canceled, nil
		}
		return s.save(ctx, tx, sub)
	}
	sc, err := tx.FindSavedCardForCharge(ctx, p.AccessKeyID, p.SavedCardID)
	if err != nil {
		return err
	}
	m.Status, m.SavedCardID, m.CardMask = MandateActive, sc.ID, sc.MaskedCard
	m.CardExpMonth, m.CardExpYear = sc.ExpMonth, sc.ExpYear
	ev := Evidence{Channel: "direct", PayerIP: p.PayerIP, UserAgent: userAgent(p.Device)}
	m.ConsentAt = &now
	if p.Kind == payment.KindHosted {
		ev.Channel = "hosted_page"
		ev.ConsentBox = p.ConsentAt != nil
		if p.ConsentAt != nil {
			m.ConsentAt = p.ConsentAt
		}
	}
	if m.Evidence, err = json.Marshal(ev); err != nil {
		return err
	}
	if err := s.saveMandate(ctx, tx, m); err != nil {
		return err
	}
	if sub.Status == Incomplete {
		sub.Status = Active
		s.schedule(sub, m)
	}
	return s.save(ctx, tx, sub)
}

// userAgent is the user agent of a payment's device snapshot.
func userAgent(device json.RawMessage) string {
	var d struct {
		UserAgent string `json:"user_agent"`
	}
	_ = json.Unmarshal(device, &d) // no snapshot: none
	return d.UserAgent
}

// chargeMoved records a charge's outcome on its subscription
// (docs/design/decisions.md section 11): success moves to the next period;
// a soft failure makes it past_due with retries after 1, 3 and 5 days,
// the last one canceling it; a hard decline cancels it at once. An outcome
// of a charge that is no longer the one in flight changes nothing.
func (s *Service) chargeMoved(ctx context.Context, tx recurring.Tx, p *payment.Payment) error {
	var ok bool
	switch p.Status {
	case payment.Succeeded:
		ok = true
	case payment.Declined, payment.Failed, payment.Canceled, payment.Expired:
	default:
		return nil
	}
	sub, err := tx.LockSubscription(ctx, p.SubscriptionID)
	if err != nil {
		return err
	}
	if sub.ChargingPaymentID != p.ID {
		return nil
	}
	m, err := tx.FindMandateByID(ctx, sub.MandateID)
	if err != nil {
		return err
	}
	sub.ChargingPaymentID, sub.UpdatedAt = "", p.UpdatedAt
	// A resume while the charge was in flight moved the schedule on (to
	// the first period due after it): the charge settled its own period,
	// and neither moves the new one nor starts dunning on it.
	stale := *p.SubscriptionPeriod != sub.Period || p.SubscriptionAttempt != sub.Attempt
	switch {
	case stale && !ok && Hard(p.DeclineCode):
		sub.LastDeclineCode = p.DeclineCode
		if CanMove(sub.Status, Canceled) {
			sub.Status = Canceled
		}
	case stale:
	case ok:
		sub.Period++
		sub.Attempt, sub.FailedAt, sub.LastDeclineCode = 0, nil, ""
		if sub.Status == PastDue {
			sub.Status = Active
		}
	case Hard(p.DeclineCode):
		sub.LastDeclineCode = p.DeclineCode
		if CanMove(sub.Status, Canceled) {
			sub.Status = Canceled
		}
	default:
		sub.LastDeclineCode = p.DeclineCode
		if sub.FailedAt == nil {
			at := p.UpdatedAt
			sub.FailedAt = &at
		}
		if sub.Attempt >= len(retryAfter) {
			if CanMove(sub.Status, Canceled) {
				sub.Status = Canceled
			}
			break
		}
		sub.Attempt++
		if sub.Status == Active {
			sub.Status = PastDue
		}
	}
	s.schedule(sub, m)
	return s.save(ctx, tx, sub)
}

// schedule sets when the scheduler next acts on sub: the period's due time
// (or the next retry's), or, when the mandate's card expires first, the
// card's expiry, when the subscription completes. Nothing while it is not
// active or past_due.
func (s *Service) schedule(sub *Subscription, m *Mandate) {
	if sub.Status != Active && sub.Status != PastDue {
		sub.NextRunAt = nil
		return
	}
	at := Due(sub.Anchor, sub.Interval, sub.Period)
	if sub.Attempt > 0 && sub.FailedAt != nil {
		at = sub.FailedAt.Add(retryAfter[sub.Attempt-1])
	}
	if end := CardExpiryEnd(m.CardExpMonth, m.CardExpYear); sub.Attempt == 0 && !at.Before(end) {
		at = end
	}
	sub.NextRunAt = &at
}

// save writes sub by compare-and-set, refusing a change of status the
// life cycle does not have, and records subscription.<status> on a change.
func (s *Service) save(ctx context.Context, tx recurring.Tx, sub *Subscription) error {
	return s.lifecycle().Save(ctx, tx, sub, func() error { return tx.UpdateSubscription(ctx, sub) })
}

// changed records the event of a subscription's status change, once.
func (s *Service) changed(ctx context.Context, tx recurring.Tx, sub *Subscription) error {
	return s.lifecycle().Record(ctx, tx, sub)
}

// lifecycle is the subscription as it moves (internal/lifecycle).
func (s *Service) lifecycle() lifecycle.Kind[*Subscription, Status] {
	return lifecycle.Kind[*Subscription, Status]{Name: Resource, Table: transitions, Render: s.RenderSubscription,
		NewID: s.NewID, State: func(sub *Subscription) lifecycle.State[Status] {
			return lifecycle.State[Status]{ID: sub.ID, KeyID: sub.AccessKeyID, Status: sub.Status, Stored: &sub.StoredStatus,
				At: sub.UpdatedAt}
		}}
}

// mandateLifecycle is the mandate as it moves (internal/lifecycle).
func (s *Service) mandateLifecycle() lifecycle.Kind[*Mandate, MandateStatus] {
	return lifecycle.Kind[*Mandate, MandateStatus]{Name: MandateResource, Table: mandateMoves, Render: s.RenderMandate,
		NewID: s.NewID, State: func(m *Mandate) lifecycle.State[MandateStatus] {
			return lifecycle.State[MandateStatus]{ID: m.ID, KeyID: m.AccessKeyID, Status: m.Status, Stored: &m.StoredStatus,
				At: m.UpdatedAt}
		}}
}

// saveMandate writes m and records mandate.<status> on a change.
func (s *Service) saveMandate(ctx context.Context, tx recurring.Tx, m *Mandate) error {
	return s.mandateLifecycle().Save(ctx, tx, m, func() error { return tx.UpdateMandate(ctx, m) })
}

func (s *Service) mandateChanged(ctx context.Context, tx recurring.Tx, m *Mandate) error {
	return s.mandateLifecycle().Record(ctx, tx, m)
}

// New is a validated createSubscription (POST /subscriptions) body.
type New struct {
	MandateID   string
	AmountMinor int64
	Currency    string
	Interval    Interval
	FirstRunAt  *time.Time // nil: due at once
}

// Create starts another schedule on an active mandate of the key
// (docs/design/decisions.md section 5): 422 mandate_not_found for an
// unknown, another key's or a mandate that is not active.
func (s *Service) Create(ctx context.Context, tx Tx, key merchant.Key, in New) (*Subscription, error) {
	now := clock.Now(ctx, s.Now)
	if !money.Known(in.Currency) {
		return nil, fault.OnField(fault.ValidationError, "currency", "must be an ISO 4217 currency code")
	}
	if err := payment.CheckInterval(in.Interval.Unit, in.Interval.Count, "interval_count"); err != nil {
		return nil, err
	}
	anchor := now
	if in.FirstRunAt != nil {
		anchor = in.FirstRunAt.UTC().Truncate(time.Microsecond)
		if anchor.Before(now.Add(-payment.MaxTermsBackdate)) {
			return nil, fault.OnField(fault.ValidationError, "first_run_at", "must not be more than 24 hours in the past")
		}
	}
	m, err := tx.FindMandateForKey(ctx, key.ID, in.MandateID)
	if errors.Is(err, s.ErrNotFound) {
		return nil, fault.OnField(fault.MandateNotFound, "mandate_id", "no mandate with this id")
	}
	if err != nil {
		return nil, err
	}
	if m.Status != MandateActive {
		return nil, fault.OnField(fault.MandateNotFound, "mandate_id",
			"the mandate is "+string(m.Status)+": only an active mandate can be charged")
	}
	ch, err := tx.FindChannelByID(ctx, m.ChannelID)
	if err != nil {
		return nil, err
	}
	if !ch.ServesCurrency(in.Currency) {
		return nil, fault.OnField(fault.ChannelNotAvailable, "currency",
			"the mandate's payment channel does not take this currency")
	}
	sub := &Subscription{ID: s.NewID(), AccessKeyID: key.ID, MandateID: m.ID, Status: Active,
		AmountMinor: in.AmountMinor, Currency: in.Currency, Interval: in.Interval, Anchor: anchor,
		CreatedAt: now, UpdatedAt: now}
	s.schedule(sub, m)
	if err := tx.CreateSubscription(ctx, sub); err != nil {
		return nil, err
	}
	return sub, s.changed(ctx, tx, sub)
}

// FindForKey is the key's subscription id (getSubscription (GET
// /subscriptions/{id})): another key's, or none, is 404.
func (s *Service) FindForKey(ctx context.Context, keyID, id string) (*Subscription, error) {
	sub, err := s.Store.FindSubscriptionForKey(ctx, keyID, id)
	return sub, fault.Missing(err, s.ErrNotFound, "no subscription with this id")
}

// FindMandateForKey is the key's mandate id (getMandate (GET
// /mandates/{id})): another key's, or none, is 404.
func (s *Service) FindMandateForKey(ctx context.Context, keyID, id string) (*Mandate, error) {
	m, err := s.Store.FindMandateForKey(ctx, keyID, id)
	return m, fault.Missing(err, s.ErrNotFound, "no mandate with this id")
}

// Act applies a merchant's pause, resume or cancel
// (pauseSubscription (POST /subscriptions/{id}/pause) and its siblings):
// 409 invalid_subscription_state in a status that does not allow it. The
// subscription is locked, so the call and a charge starting at the same
// moment happen one after the other. Resume moves to the first period due
// after now: the paused periods are never charged.
func (s *Service) Act(ctx context.Context, tx Tx, keyID, id string, a Action) (*Subscription, error) {
	sub, err := tx.LockSubscription(ctx, id)
	if errors.Is(err, s.ErrNotFound) || (err == nil && sub.AccessKeyID != keyID) {
		return nil, fault.New(fault.NotFound, "no subscription with this id")
	}
	if err != nil {
		return nil, err
	}
	to, ok := a.Allows(sub.Status)
	if !ok {
		return nil, fault.Newf(fault.InvalidSubscriptionState, "a subscription in status %s cannot be %s", sub.Status,
			map[Action]string{Pause: "paused", Resume: "resumed", Cancel: "canceled"}[a])
	}
	now := clock.Now(ctx, s.Now)
	sub.Status, sub.UpdatedAt = to, now
	m, err := tx.FindMandateByID(ctx, sub.MandateID)
	if err != nil {
		return nil, err
	}
	if a == Resume {
		sub.Period = FirstAfter(sub.Anchor, sub.Interval, sub.Period, now)
		sub.Attempt, sub.FailedAt = 0, nil
	}
	s.schedule(sub, m)
	return sub, s.save(ctx, tx, sub)
}
