package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
)

// The provider_redirect checkout (docs/checkout.md, "Provider redirect
// mode"): checkout_url sends the payer to the provider's own hosted page,
// and the provider sends them back to Paygate's return page. The payment
// meanwhile is requires_action with next_action redirect, so the outcome
// arrives the way a 3DS outcome does: the poll job asks the provider, and
// the return page (confirm without a code) asks at once. Both record the
// answer through the operation engine.
//
// The operation behind the provider's page is an OpPay operation that is
// never sent: it is created in state OpInquiring, its id is the provider's
// idempotency key for the hosted session, and provider.Status(id) reports
// the payment made on the page (pending until the payer pays).

// RedirectResult marks the operation of a provider_redirect step, in
// Operation.Result while the payer is away.
const RedirectResult = "redirect"

// ErrSessionNotOpen: the session cannot take a payment now (it is paid,
// processing, expired or canceled); show it as it is.
var ErrSessionNotOpen = errors.New("the checkout session is not open for payment")

// RedirectTx is what the provider_redirect checkout needs in its
// transactions.
type RedirectTx interface {
	CheckoutTx
	UpdateOperation(ctx context.Context, op *Operation) error
}

// returnURL is where a provider sends the payer after a 3DS or redirect
// step: for a hosted payment Paygate's own page, which asks the provider at
// once and then shows the outcome or sends the payer to the merchant's
// return_url (docs/design/decisions.md section 9); for a direct payment the
// merchant's return_url.
func (e *Engine) returnURL(p *Payment) string {
	if p.Kind == KindHosted && p.SessionID != "" && e.PublicURL != "" {
		return e.PublicURL + "/checkout/" + p.SessionID + "/return"
	}
	return p.ReturnURL
}

// StartRedirect sends the payer of a provider_redirect session to the
// provider's own checkout and returns its URL. transact runs a function in
// one database transaction of the caller's store.
//
// No transaction is open during the provider call (SQLite has one
// connection): the operation is committed first, so that a crash or a
// timeout leaves an operation whose id the next attempt sends again, and
// the provider answers the same page. A session already at the provider
// answers its stored URL without a call.
func (e *Engine) StartRedirect(ctx context.Context, transact func(context.Context, func(RedirectTx) error) error, sessionID string) (string, error) {
	var (
		p   *Payment
		ch  merchant.Channel
		op  *Operation
		url string
	)
	err := transact(ctx, func(tx RedirectTx) error {
		var err error
		if p, err = tx.FindSessionByID(ctx, sessionID); err != nil {
			return err
		}
		ctx, err := clock.OfKey(ctx, tx, p.AccessKeyID)
		if err != nil {
			return err
		}
		now := e.Service.now(ctx)
		if stored, ok := atProvider(p, now); ok {
			url = stored
			return nil
		}
		if st := p.Observe(now).Status; st != Created && st != AwaitingPaymentData {
			return ErrSessionNotOpen
		}
		if ch, err = tx.FindChannelByID(ctx, p.ChannelID); err != nil {
			return err
		}
		if ch.CheckoutMode != merchant.CheckoutProviderRedirect {
			return fmt.Errorf("channel %s does not redirect to the provider", ch.Alias)
		}
		if op, err = redirectOperation(ctx, tx, p.ID); err != nil || op != nil {
			return err // an earlier attempt's operation: the provider replays its page
		}
		op = &Operation{ID: e.Service.NewID(), Resource: Resource, ResourceID: p.ID, Kind: OpPay, State: OpInquiring,
			AmountMinor: p.AmountMinor, Result: RedirectResult, CreatedAt: now, UpdatedAt: now}
		return tx.CreateOperation(ctx, op, nil)
	})
	if err != nil || url != "" {
		return url, err
	}

	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return "", err
	}
	page, err := provider.HostedPagesOf(prov).HostedSession(ctx, provider.HostedSessionRequest{
		OperationID: op.ID, AmountMinor: p.AmountMinor, Currency: p.Currency, OrderID: p.OrderID,
		Description: p.Description, Locale: p.Locale, ReturnURL: e.returnURL(p),
		Authorize: p.OperationMode == ModeAuthorize, Profile: ch.Profile,
		// The page closes before the payment expires here (ActionLifetime
		// after the payer is sent there), so that nothing is paid on a
		// payment Paygate has given up.
		ExpiresAt: e.Service.Now().Add(ActionLifetime - pageMargin),
	})
	if err != nil {
		return "", err
	}

	err = transact(ctx, func(tx RedirectTx) error {
		cur, err := tx.FindSessionByID(ctx, sessionID)
		if err != nil {
			return err
		}
		ctx, err := clock.OfKey(ctx, tx, cur.AccessKeyID)
		if err != nil {
			return err
		}
		now := e.Service.now(ctx)
		if stored, ok := atProvider(cur, now); ok {
			url = stored
			if stored != page.URL {
				// Another request sent the payer to another page first:
				// this operation's page is never used.
				op.State, op.Result, op.UpdatedAt = OpDone, "superseded", now
				return tx.UpdateOperation(ctx, op)
			}
			return nil
		}
		if st := cur.Observe(now).Status; st != Created && st != AwaitingPaymentData {
			return ErrSessionNotOpen
		}
		// awaiting_payment_data → processing → requires_action, in one step:
		// the payer is at the provider, as during a 3DS challenge.
		cur.Status, cur.UpdatedAt = RequiresAction, now
		cur.NextActionType, cur.NextActionURL = RedirectResult, page.URL
		// The provider's id of its page until the payment is made there:
		// Status finds the page's outcome by it.
		cur.ProviderPaymentID = page.ProviderID
		cur.DeclineCode, cur.DeclineMessage = "", ""
		if len(ch.PaymentMethods) == 1 {
			cur.Method = ch.PaymentMethods[0]
		}
		if err := e.Service.save(ctx, tx, cur); err != nil {
			return err
		}
		url = page.URL
		return tx.Enqueue(ctx, PollArgs{PaymentID: cur.ID, OperationID: op.ID},
			&river.InsertOpts{ScheduledAt: clock.Process(ctx, now.Add(e.PollEvery))})
	})
	return url, err
}

// pageMargin is how much sooner a provider's page closes than the payment
// waiting for it expires.
const pageMargin = 5 * time.Minute

// atProvider reports the provider page a payer was already sent to.
func atProvider(p *Payment, now time.Time) (string, bool) {
	if p.Observe(now).Status == RequiresAction && p.NextActionType == RedirectResult && p.NextActionURL != "" {
		return p.NextActionURL, true
	}
	return "", false
}

// redirectOperation finds the open operation of a provider_redirect step.
func redirectOperation(ctx context.Context, tx OperationTx, paymentID string) (*Operation, error) {
	ops, err := tx.OpenOperations(ctx, paymentID)
	if err != nil {
		return nil, err
	}
	for i := range ops {
		if ops[i].Kind == OpPay && ops[i].State == OpInquiring && ops[i].Result == RedirectResult {
			return &ops[i], nil
		}
	}
	return nil, nil
}

// confirmRedirect is Confirm without a code after a provider_redirect step
// (docs/design/decisions.md section 4: it asks the provider for the outcome):
// the step's own operation is asked again at once, by its id. ok is false
// when p is not waiting for such a step, and Confirm goes on as usual.
func (s *Service) confirmRedirect(ctx context.Context, tx OperationTx, p *Payment, code string) (q *Payment, ok bool, err error) {
	if code != "" || p.Status != RequiresAction || p.NextActionType != RedirectResult {
		return nil, false, nil
	}
	op, err := redirectOperation(ctx, tx, p.ID)
	if err != nil || op == nil {
		return nil, err != nil, err
	}
	p.Status, p.UpdatedAt = Processing, s.now(ctx)
	if err := s.save(ctx, tx, p); err != nil {
		return nil, true, err
	}
	return p, true, operation.Enqueue(ctx, tx, op)
}
