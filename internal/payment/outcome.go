package payment

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
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
}

func declineMessage(code string) string {
	if m, ok := declineMessages[code]; ok {
		return m
	}
	return "The payment was declined."
}

// apply records a provider outcome for an operation in one transaction:
// the payment's new status (if the life cycle allows it), the operation
// done, its secret deleted, and any follow-up job.
func (e *Engine) apply(ctx context.Context, opID string, ch merchant.Channel, res provider.PayResult) error {
	var snooze time.Duration
	err := e.Transact(ctx, func(tx EngineTx) error {
		op, err := tx.FindOperation(ctx, opID)
		if err != nil {
			return err
		}
		p, err := tx.FindPaymentByID(ctx, op.PaymentID)
		if err != nil {
			return err
		}
		if op.State == OpDone && op.Kind != OpPay && op.Kind != OpConfirm {
			return nil // applied already; only a 3DS or redirect outcome arrives after its operation
		}
		now := e.Service.Now().UTC().Truncate(time.Microsecond)
		if res.Status == provider.StatusPending {
			// Accepted, not finished: ask again later.
			op.State, op.Result, op.UpdatedAt = OpInquiring, string(res.Status), now
			snooze = e.PollEvery
			return tx.UpdateOperation(ctx, op)
		}
		if res.ProviderID != "" {
			p.ProviderPaymentID = res.ProviderID
		}
		if res.BankReference != nil {
			p.BankReference = &BankReference{PaymentID: res.BankReference.PaymentID, Name: res.BankReference.Name}
		}
		next, follow := e.outcome(op, p, res, now)
		if next != "" && CanMove(p.Status, next) {
			if next != RequiresAction {
				p.NextActionType, p.NextActionURL = "", ""
			}
			p.Status, p.UpdatedAt = next, now
			// The card is saved before the status is written, so the
			// event of this change shows saved_card_id as GET does from
			// now on (decisions 6: data.object is the resource as GET
			// returns it).
			if err := e.saveCard(ctx, tx, ch.Provider, p, res, now); err != nil {
				return err
			}
			if err := tx.UpdatePayment(ctx, p); err != nil {
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
		if op.RefundID != "" {
			r := &Refund{ID: op.RefundID, Status: RefundFailed, CompletedAt: &now}
			if res.Status == provider.StatusSucceeded {
				r.Status = RefundSucceeded
			}
			if err := tx.CompleteRefund(ctx, r); err != nil {
				return err
			}
		}
		op.State, op.Result, op.UpdatedAt = OpDone, string(res.Status), now
		if err := tx.UpdateOperation(ctx, op); err != nil {
			return err
		}
		// The provider has seen the card data, wallet payload, phone or code:
		// nothing of it is kept (decisions 8).
		return tx.DeleteOperationSecret(ctx, op.ID)
	})
	if errors.Is(err, ErrConflict) {
		return err // River runs the job again; the provider answers the same
	}
	if err == nil && snooze > 0 {
		return river.JobSnooze(snooze)
	}
	return err
}

type followUp struct {
	args river.JobArgs
	opts *river.InsertOpts
}

// outcome maps a result to the payment's next status and fields.
func (e *Engine) outcome(op *Operation, p *Payment, res provider.PayResult, now time.Time) (Status, []followUp) {
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
				f = append(f, followUp{ExpireAuthorizationArgs{PaymentID: p.ID}, &river.InsertOpts{ScheduledAt: *res.AuthorizationExpiresAt}})
			}
			return Authorized, f
		case provider.StatusDeclined:
			return decline(Declined)
		case provider.StatusFailed:
			return decline(Failed)
		case provider.StatusRequiresAction:
			if res.NextAction == nil {
				return decline(Failed)
			}
			p.NextActionType, p.NextActionURL = res.NextAction.Type, res.NextAction.URL
			var f []followUp
			if res.NextAction.Type != "otp" {
				f = append(f, followUp{PollArgs{PaymentID: p.ID, OperationID: op.ID}, &river.InsertOpts{ScheduledAt: now.Add(e.PollEvery)}})
			}
			return RequiresAction, f
		}
	case OpCapture:
		if res.Status == provider.StatusSucceeded {
			p.CapturedAmountMinor = op.AmountMinor
			if res.CapturedAmountMinor > 0 {
				p.CapturedAmountMinor = res.CapturedAmountMinor
			}
			return Succeeded, nil
		}
	case OpCancel:
		if res.Status == provider.StatusCanceled || res.Status == provider.StatusSucceeded {
			return Canceled, nil
		}
	case OpRefund:
		if res.Status == provider.StatusSucceeded {
			p.RefundedAmountMinor += op.AmountMinor
			if p.RefundedAmountMinor >= p.CapturedAmountMinor {
				return Refunded, nil
			}
			return PartiallyRefunded, nil
		}
	}
	return "", nil // a failed capture, cancel or refund leaves the payment as it was
}

// SavedCardAAD binds a saved card's sealed token to the card.
func SavedCardAAD(id string) []byte { return []byte("saved_card_token:" + id) }

// saveCard keeps the provider's card token after a successful payment that
// asked for it (decisions 5) and sets p.SavedCardID; the caller writes p.
// It runs inside the outcome's transaction: it must not use e.Store.
func (e *Engine) saveCard(ctx context.Context, tx EngineTx, providerName string, p *Payment, res provider.PayResult, now time.Time) error {
	if !p.SavePaymentMethod || res.CardToken == "" || p.SavedCardID != "" ||
		(p.Status != Succeeded && p.Status != Authorized) {
		return nil
	}
	var err error
	c := &SavedCard{ID: e.Service.NewID(), AccessKeyID: p.AccessKeyID, CustomerReference: p.CustomerReference,
		Provider: providerName, MaskedCard: p.MaskedCard, Scheme: p.CardScheme, ExpMonth: res.CardExpMonth,
		ExpYear: res.CardExpYear, CreatedAt: now}
	if c.TokenSealed, err = e.Service.Sealer.Seal([]byte(res.CardToken), SavedCardAAD(c.ID)); err != nil {
		return err
	}
	if err := tx.CreateSavedCard(ctx, c); err != nil {
		return err
	}
	p.SavedCardID = c.ID
	return nil
}
