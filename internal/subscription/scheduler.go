package subscription

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/payment"
)

// What one step of the scheduler did, as the sandbox clock counts it
// (docs/design/decisions.md section 14: ran.subscription_charges, retries,
// expirations).
const (
	RanCharge     = clock.RanSubscriptionCharges
	RanRetry      = clock.RanRetries
	RanExpiration = clock.RanExpirations
)

// Step is what the scheduler did with one subscription.
type Step struct {
	Ran         string // RanCharge, RanRetry or RanExpiration; "" for nothing
	PaymentID   string // the charge made
	OperationID string // its provider call
}

// step does what is due for one subscription at its key's time now, in tx
// (docs/design/decisions.md section 11): nothing if it is not due or a
// charge is in flight; completed when the card expires before the period;
// canceled when the mandate's card was deleted; otherwise it starts the
// charge of (period, attempt). The subscription is locked and marked as
// charging in the same transaction as the payment's creation, and the
// database holds one payment per (subscription, period, attempt): two
// schedulers, or a scheduler and a crash, can never charge a period twice.
func (s *Service) step(ctx context.Context, tx ChargeTx, id string, now time.Time) (Step, error) {
	sub, err := tx.LockSubscription(ctx, id)
	if err != nil {
		return Step{}, err
	}
	if (sub.Status != Active && sub.Status != PastDue) || sub.ChargingPaymentID != "" ||
		sub.NextRunAt == nil || sub.NextRunAt.After(now) {
		return Step{}, nil
	}
	m, err := tx.FindMandateByID(ctx, sub.MandateID)
	if err != nil {
		return Step{}, err
	}
	sub.UpdatedAt = now
	due := Due(sub.Anchor, sub.Interval, sub.Period)
	if sub.Attempt == 0 && !due.Before(CardExpiryEnd(m.CardExpMonth, m.CardExpYear)) {
		sub.Status, sub.NextRunAt = Completed, nil
		return Step{Ran: RanExpiration}, s.save(ctx, tx, sub)
	}
	card, err := tx.FindSavedCardForCharge(ctx, m.AccessKeyID, m.SavedCardID)
	if err != nil {
		return Step{}, err
	}
	if card.DeletedAt != nil {
		// The merchant deleted the card the mandate charges: nothing can
		// be charged any more (docs/subscriptions.md, "Mandates").
		sub.Status, sub.NextRunAt, sub.LastDeclineCode = Canceled, nil, "saved_card_deleted"
		return Step{Ran: RanExpiration}, s.save(ctx, tx, sub)
	}
	ran := RanCharge
	if sub.Attempt > 0 {
		ran = RanRetry
	}
	payID := s.NewID()
	sub.ChargingPaymentID = payID
	if err := s.save(ctx, tx, sub); err != nil {
		return Step{}, err
	}
	p, opID, err := s.Payments.CreateCharge(ctx, tx, payment.Charge{ID: payID, KeyID: sub.AccessKeyID,
		ChannelID: m.ChannelID, MandateID: m.ID, SubscriptionID: sub.ID, SavedCardID: card.ID,
		MaskedCard: card.MaskedCard, Scheme: card.Scheme, CustomerReference: m.CustomerReference,
		Period: sub.Period, Attempt: sub.Attempt, AmountMinor: sub.AmountMinor, Currency: sub.Currency, At: now})
	if err != nil {
		return Step{}, err
	}
	return Step{Ran: ran, PaymentID: p.ID, OperationID: opID}, nil
}

// stepAt runs step in its own transaction at the subscription's key's
// time (the process's time plus the key's sandbox offset). A lost race
// (another scheduler's charge, a concurrent change) is not an error: the
// subscription is simply not due any more.
func (s *Service) stepAt(ctx context.Context, id string, at func(tx ChargeTx, keyID string) (time.Time, error)) (Step, error) {
	var st Step
	err := s.Transact(ctx, func(tx ChargeTx) error {
		st = Step{}
		sub, err := tx.LockSubscription(ctx, id)
		if err != nil {
			return err
		}
		now, err := at(tx, sub.AccessKeyID)
		if err != nil {
			return err
		}
		st, err = s.step(clock.With(ctx, now.Sub(s.Now())), tx, id, now)
		return err
	})
	if errors.Is(err, ErrConflict) || errors.Is(err, payment.ErrDuplicateCharge) {
		return Step{}, nil
	}
	return st, err
}

// Tick charges what is due now, by each key's clock: at most limit
// subscriptions, earliest first. It returns how many it looked at; a full
// batch means more may be waiting.
func (s *Service) Tick(ctx context.Context, limit int) (int, error) {
	ids, err := s.Store.DueSubscriptions(ctx, s.Now(), limit)
	if err != nil {
		return 0, err
	}
	failed := 0
	for _, id := range ids {
		_, err := s.stepAt(ctx, id, func(tx ChargeTx, keyID string) (time.Time, error) {
			off, err := tx.KeyClockOffset(ctx, keyID)
			if err != nil {
				return time.Time{}, err
			}
			return clock.Now(clock.With(ctx, off), s.Now), nil
		})
		if err != nil {
			// One subscription that fails must not hold up the others'
			// charges: it is logged and tried again at the next tick.
			if ctx.Err() != nil {
				return 0, err
			}
			failed++
			s.Log.Warn("subscription scheduler: a step failed", "subscription_id", id, "error", err.Error())
		}
	}
	if failed == len(ids) && failed > 0 {
		return 0, fmt.Errorf("subscription scheduler: all %d due subscriptions failed", failed)
	}
	return len(ids), nil
}

// Run is the scheduler: it ticks every `every` until ctx ends, at once
// again after a full batch (a backlog after downtime is worked off oldest
// first). Every worker process runs one; the database keeps them from
// charging anything twice.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	const batch = 100
	for {
		n, err := s.Tick(ctx, batch)
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("subscription scheduler", "error", err.Error())
		}
		if err == nil && n == batch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// ClockSource is the subscriptions' part of a sandbox clock advance
// (docs/design/decisions.md section 14): each charge, retry and expiry
// falls due in turn, and the advance waits for each charge's outcome.
func (s *Service) ClockSource() clock.Source { return clockSource{s} }

type clockSource struct{ s *Service }

// NextDue implements clock.Source.
func (c clockSource) NextDue(ctx context.Context, keyID string, upTo time.Time) (*clock.Due, error) {
	id, at, err := c.s.Store.NextSubscriptionDue(ctx, keyID, upTo)
	if errors.Is(err, c.s.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &clock.Due{At: at, Run: func(ctx context.Context) (string, error) {
		st, err := c.s.stepAt(ctx, id, func(ChargeTx, string) (time.Time, error) {
			return clock.Now(ctx, c.s.Now), nil
		})
		if err != nil || st.OperationID == "" {
			return st.Ran, err
		}
		return st.Ran, c.s.await(ctx, st)
	}}, nil
}

// awaitLimit bounds how long an advance waits for one charge's outcome:
// a provider that does not answer leaves the charge in flight (it is not
// due again until it has an outcome) and the advance goes on.
const awaitLimit = 20 * time.Second

// await runs a charge's provider call at once, in this process, and waits
// until the payment has an outcome. The charge's job is queued too: if
// this run fails, a worker's retry carries on with the same operation id.
func (s *Service) await(ctx context.Context, st Step) error {
	if s.Ops != nil {
		// Its second run, as the engine counts: the charge's queued job may
		// run at the same time (operation.Engine.Run).
		if err := s.Ops.Run(ctx, st.OperationID, 2, 40); err != nil {
			s.Log.Info("clock advance: the charge's run here did not finish; waiting for the worker",
				"payment_id", st.PaymentID, "error", err.Error())
		}
	}
	deadline := time.Now().Add(awaitLimit)
	for {
		p, err := s.Store.FindPaymentByID(ctx, st.PaymentID)
		if err != nil {
			return err
		}
		switch p.Status {
		case payment.Processing:
		default:
			return nil // an outcome, or a state that waits for someone (manual_review)
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
