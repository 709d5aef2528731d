package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/savedcard"
)

// declineMessages are payer-safe texts for decline codes, written by
// Paygate (never a provider's own text).
var declineMessages = map[string]string{
	"card_declined":         "The card was declined.",
	"insufficient_funds":    "The card has insufficient funds.",
	"expired_card":          "The card has expired.",
	"authentication_failed": "The payer did not pass authentication.",
	"processing_error":      "The payment could not be processed.",
	"provider_unavailable":  "The payment provider could not be reached.",
	"do_not_retry":          "The card was declined.",
}

func declineMessage(code string) string {
	if m, ok := declineMessages[code]; ok {
		return m
	}
	return "The payment was declined."
}

// Apply implements operation.Handler: it records an outcome on the
// payment, in the engine's transaction: the payment's new status (if the
// life cycle allows it) with a card it saved, any follow-up job, and a
// refund's result. The engine marks the operation done and deletes its
// secret in the same transaction.
func (h handler[R, T]) Apply(ctx context.Context, tx T, op *Operation, o operation.Outcome) error {
	e := h.e
	out, ok := o.(Outcome)
	if !ok {
		return fmt.Errorf("payment: an outcome of type %T", o)
	}
	res := out.PayResult
	p, ch, err := tx.FindPaymentWithChannel(ctx, op.ResourceID)
	if err != nil {
		return err
	}
	now := e.Service.now(ctx)
	if res.ProviderID != "" {
		p.ProviderPaymentID = res.ProviderID
	}
	if res.BankReference != nil {
		p.BankReference = &BankReference{PaymentID: res.BankReference.PaymentID, Name: res.BankReference.Name}
	}
	if t := res.AuthorizationExpiresAt; t != nil {
		// The provider's time is the process's: the hold ends on the key's
		// clock that much later (docs/design/decisions.md section 14).
		at := t.Add(clock.Offset(ctx)).UTC().Truncate(time.Microsecond)
		res.AuthorizationExpiresAt = &at
	}
	if op.Kind == OpPay && res.Reroutable && (res.Status == provider.StatusDeclined || res.Status == provider.StatusFailed) {
		// A decline another acquirer may not share: the next channel, if
		// the payment has one (docs/design/decisions.md section 17).
		st := Declined
		if res.Status == provider.StatusFailed {
			st = Failed
		}
		ok, err := e.reroute(ctx, tx, op, p, ch, st, res.DeclineCode, ReasonSoftDecline)
		if err != nil || ok {
			return err
		}
	}
	if op.Kind == OpAbandon && (out.GaveUp || res.Status != provider.StatusCanceled) {
		// Not canceled: the payer finished first (the acquirer refused
		// the cancel), or the acquirer still waits for them, or the engine
		// gave up. The poll reads the step's outcome and records it on the
		// operation that started it, as in time, or abandons the payment
		// again (docs/payments.md, "The payer's step expires").
		return e.pollAgain(ctx, tx, p, now)
	}
	next, follow := e.outcome(ctx, op, p, res, now)
	if next != "" && CanMove(p.Status, next) {
		if e.Observe != nil && (op.Kind == OpPay || op.Kind == OpConfirm || op.Kind == OpAbandon) && next != RequiresAction {
			e.Observe.Attempt(ch.Alias, ch.Provider, string(next))
		}
		if next != RequiresAction {
			p.NextActionType, p.NextActionURL = "", ""
		}
		p.Status, p.UpdatedAt = next, now
		// The card is saved before the status is written, so the
		// event of this change shows saved_card_id as GET does from
		// now on (docs/design/decisions.md section 6: data.object is the
		// resource as GET returns it).
		if err := e.saveCard(ctx, tx, out.Provider, p, res, now); err != nil {
			return err
		}
		if err := e.Service.save(ctx, tx, p); err != nil {
			return err
		}
		for _, j := range follow {
			if err := tx.Enqueue(ctx, j.args, j.opts); err != nil {
				return err
			}
		}
	} else if next != "" {
		e.Log.Info("outcome not applied: the payment moved on", "payment_id", p.ID, "from", string(p.Status), "to", string(next))
	}
	if op.Ref != "" {
		r := &Refund{ID: op.Ref, Status: RefundFailed, CompletedAt: &now}
		if res.Status == provider.StatusSucceeded {
			r.Status = RefundSucceeded
		}
		return tx.CompleteRefund(ctx, r)
	}
	return nil
}

// pollAgain queues the poll of a payment still waiting for its payer's
// step, for the step's pay operation.
func (e *Engine) pollAgain(ctx context.Context, tx EngineTx, p *Payment, now time.Time) error {
	pay, err := tx.LatestOperation(ctx, p.ID, OpPay)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, PollArgs{PaymentID: p.ID, OperationID: pay.ID},
		&river.InsertOpts{ScheduledAt: clock.Process(ctx, now.Add(e.PollEvery))})
}

type followUp struct {
	args river.JobArgs
	opts *river.InsertOpts
}

// outcome maps a result to the payment's next status and fields.
// now is the key's time (ctx's clock); the follow-up jobs are scheduled
// on the process's.
func (e *Engine) outcome(ctx context.Context, op *Operation, p *Payment, res provider.PayResult, now time.Time) (Status, []followUp) {
	decline := func(s Status) (Status, []followUp) {
		code := res.DeclineCode
		if code == "" {
			code = "processing_error"
		}
		p.DeclineCode, p.DeclineMessage = code, declineMessage(code)
		if p.Kind == KindHosted && p.ExpiresAt != nil && now.Before(*p.ExpiresAt) {
			// The payer may try again (another card) while the session is
			// open; the decline stays visible until the next attempt.
			p.MaskedCard, p.CardScheme = "", ""
			return AwaitingPaymentData, nil
		}
		return s, nil
	}
	if op.Kind == OpAbandon && res.Status == provider.StatusCanceled {
		// Canceled at the acquirer: nothing moved, and the payer's step
		// is gone.
		p.NextActionType, p.NextActionURL = "", ""
		return Expired, nil
	}
	switch op.Kind {
	case OpPay, OpConfirm:
		switch res.Status {
		case provider.StatusSucceeded:
			p.CapturedAmountMinor = p.AmountMinor
			return Succeeded, nil
		case provider.StatusAuthorized:
			p.AuthorizationExpiresAt = res.AuthorizationExpiresAt
			var f []followUp
			if res.AuthorizationExpiresAt != nil {
				f = append(f, followUp{ExpireAuthorizationArgs{PaymentID: p.ID}, &river.InsertOpts{ScheduledAt: clock.Process(ctx, *res.AuthorizationExpiresAt)}})
			}
			return Authorized, f
		case provider.StatusDeclined:
			return decline(Declined)
		case provider.StatusFailed:
			return decline(Failed)
		case provider.StatusCanceled:
			// Canceled at the acquirer while Paygate waited or asked (an
			// abandon whose answer was lost, or a cancel made in the
			// acquirer's dashboard): nothing moved, and nothing will.
			p.NextActionType, p.NextActionURL = "", ""
			return Expired, nil
		case provider.StatusRequiresAction:
			if res.NextAction == nil {
				return decline(Failed)
			}
			p.NextActionType, p.NextActionURL = res.NextAction.Type, res.NextAction.URL
			// Polled until the payer's step ends, or expired after
			// ActionLifetime (a one-time code's too: it is not asked about).
			return RequiresAction, []followUp{{PollArgs{PaymentID: p.ID, OperationID: op.ID},
				&river.InsertOpts{ScheduledAt: clock.Process(ctx, now.Add(e.PollEvery))}}}
		}
	case OpCapture:
		if res.Status == provider.StatusSucceeded {
			p.CapturedAmountMinor = op.AmountMinor
			if res.CapturedAmountMinor > 0 {
				p.CapturedAmountMinor = res.CapturedAmountMinor
			}
			return Succeeded, nil
		}
		return e.holdStands(ctx, p)
	case OpCancel:
		if res.Status == provider.StatusCanceled || res.Status == provider.StatusSucceeded {
			return Canceled, nil
		}
		return e.holdStands(ctx, p)
	case OpRefund:
		if res.Status == provider.StatusSucceeded {
			p.RefundedAmountMinor += op.AmountMinor
			if p.RefundedAmountMinor >= p.CapturedAmountMinor {
				return Refunded, nil
			}
			return PartiallyRefunded, nil
		}
	}
	return "", nil // a failed refund leaves the payment as it was
}

// holdStands is the outcome of a capture or cancel that failed: the
// payment stays as it was, and one that went to manual_review while its
// answer could not be read is authorized again, its expiry job queued
// anew (the one queued before found it in manual_review and ended).
func (e *Engine) holdStands(ctx context.Context, p *Payment) (Status, []followUp) {
	if p.Status != ManualReview {
		return "", nil
	}
	var f []followUp
	if p.AuthorizationExpiresAt != nil {
		f = append(f, followUp{ExpireAuthorizationArgs{PaymentID: p.ID}, &river.InsertOpts{ScheduledAt: clock.Process(ctx, *p.AuthorizationExpiresAt)}})
	}
	return Authorized, f
}

// saveCard keeps the provider's card token after a successful payment that
// asked for it (docs/design/decisions.md section 5) and sets p.SavedCardID;
// the caller writes p. It runs inside the outcome's transaction: it must not
// use e.Store.
func (e *Engine) saveCard(ctx context.Context, tx EngineTx, providerName string, p *Payment, res provider.PayResult, now time.Time) error {
	if !p.SavesCard() || res.CardToken == "" || p.SavedCardID != "" ||
		(p.Status != Succeeded && p.Status != Authorized) {
		return nil
	}
	c, err := savedcard.New(e.Service.Sealer, savedcard.Card{ID: e.Service.NewID(), AccessKeyID: p.AccessKeyID,
		CustomerReference: p.CustomerReference, Provider: providerName, MaskedCard: p.MaskedCard, Scheme: p.CardScheme,
		ExpMonth: res.CardExpMonth, ExpYear: res.CardExpYear, CreatedAt: now}, res.CardToken)
	if err != nil {
		return err
	}
	if err := tx.CreateSavedCard(ctx, c); err != nil {
		return err
	}
	p.SavedCardID = c.ID
	return nil
}
