package payment

import (
	"context"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/circuit"
)

// Attempt is one try of a payment on one channel (docs/design/decisions.md
// section 17). The earlier ones are stored when the payment moves to
// another channel; the current one is the payment itself.
type Attempt struct {
	OperationID string
	PaymentID   string
	ChannelID   string
	Channel     string // its alias, as read
	// Status is the attempt's own outcome in the payment's words
	// (declined, failed, …); DeclineCode the acquirer's, if it gave one.
	Status      Status
	DeclineCode string
	// Reason is why the next attempt was made: provider_unreachable,
	// circuit_open or soft_decline.
	Reason    string
	CreatedAt time.Time
	EndedAt   time.Time
}

// Why the next attempt was made.
const (
	ReasonUnreachable = "provider_unreachable"
	ReasonCircuitOpen = "circuit_open"
	ReasonSoftDecline = "soft_decline"
)

// DefaultMaxAttempts: a payment is tried on at most one more channel
// (serve --max-attempts).
const DefaultMaxAttempts = 2

// RerouteTx is what moving a payment to its next channel writes, in the
// transaction that records its attempt's end.
type RerouteTx interface {
	WriteTx
	operation.QueueTx
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	OperationSecret(ctx context.Context, operationID string) ([]byte, error)
	ChannelsForKey(ctx context.Context, keyID string) ([]merchant.Channel, error)
	CreatePaymentAttempt(ctx context.Context, a Attempt) error
	PaymentAttempts(ctx context.Context, paymentID string) ([]Attempt, error)
	// The BIN base, for the card conditions of the next candidates.
	cardinfo.Matcher
}

// reasonOf names why a failed call lets the payment try another channel.
func reasonOf(err error) string {
	if errors.Is(err, circuit.ErrOpen) {
		return ReasonCircuitOpen
	}
	return ReasonUnreachable
}

// reroute moves a payment whose pay operation op ended without moving money
// to its next candidate channel, in tx (docs/design/decisions.md section
// 17): the attempt is recorded, and a new pay operation, with its own id
// and the same card data sealed anew, is queued on the next channel.
// It does so only when it is safe: a first-time customer payment (not a
// merchant-initiated charge, not a saved card, which belongs to its
// acquirer), no step of the payer's yet, attempts left, and another
// candidate. false: the caller ends the payment as it would have.
func (e *Engine) reroute(ctx context.Context, tx RerouteTx, op *Operation, p *Payment, ch merchant.Channel, status Status, declineCode, reason string) (bool, error) {
	if op.Kind != OpPay || p.Kind == KindRecurring || p.SavedCardID != "" || p.Status != Processing ||
		p.NextActionType != "" || p.SubscriptionPeriod != nil {
		return false, nil
	}
	prior, err := tx.PaymentAttempts(ctx, p.ID)
	if err != nil {
		return false, err
	}
	limit := e.MaxAttempts
	if limit == 0 {
		limit = DefaultMaxAttempts
	}
	if len(prior)+1 >= limit {
		return false, nil
	}
	sealed, err := tx.OperationSecret(ctx, op.ID)
	if err != nil || sealed == nil {
		return false, err
	}
	plain, err := e.Service.Sealer.Open(sealed, operation.AAD(op.ID))
	if err != nil {
		return false, err
	}
	var sec Secret
	if err := sec.decode(plain); err != nil {
		return false, err
	}
	channels, err := tx.ChannelsForKey(ctx, p.AccessKeyID)
	if err != nil {
		return false, err
	}
	tried := map[string]bool{p.ChannelID: true}
	for _, a := range prior {
		tried[a.ChannelID] = true
	}
	need := p.capabilities(sec)
	// The card conditions apply as they did when the payment was accepted:
	// its issuing country is read again from the BIN base (the card is in
	// the operation's sealed data).
	pay := merchant.Payment{AmountMinor: p.AmountMinor, CardKnown: sec.Card != nil, Scheme: p.CardScheme}
	if sec.Card != nil && e.Service.BINs != nil {
		if info, ok := e.Service.BINs.ClassifyIn(ctx, tx, sec.Card.Number); ok {
			pay.Country = info.CountryCode
		}
	}
	cands := merchant.Candidates(channels, pay, func(c merchant.Channel) bool {
		// A hosted payment's card was entered on Paygate's own page: only
		// a channel that takes cards that way.
		if p.Kind == KindHosted && c.CheckoutMode != merchant.CheckoutPlatform {
			return false
		}
		return !tried[c.ID] && c.Serves(p.Method, p.Currency) && e.Service.Providers.Available(c.Provider) &&
			e.Service.channelHas(c, need) == nil
	}, p.ID)
	if len(cands) == 0 {
		return false, nil
	}
	now := e.Service.now(ctx)
	if err := tx.CreatePaymentAttempt(ctx, Attempt{OperationID: op.ID, PaymentID: p.ID, ChannelID: p.ChannelID,
		Status: status, DeclineCode: declineCode, Reason: reason, CreatedAt: op.CreatedAt, EndedAt: now}); err != nil {
		return false, err
	}
	next := &Operation{ID: e.Service.NewID(), Resource: Resource, ResourceID: p.ID, Kind: OpPay,
		AmountMinor: op.AmountMinor, CreatedAt: now, UpdatedAt: now}
	if err := operation.QueueSecret(ctx, tx, e.Service.Sealer, next, plain); err != nil {
		return false, err
	}
	// The next attempt is the acquirer's new payment: none yet.
	p.ChannelID, p.ProviderPaymentID, p.UpdatedAt = cands[0].ID, "", now
	if err := e.Service.save(ctx, tx, p); err != nil {
		return false, err
	}
	if e.Observe != nil {
		e.Observe.Attempt(ch.Alias, ch.Provider, string(status))
		e.Observe.Reroute(ch.Alias, ch.Provider, reason)
	}
	e.Log.Info("payment moved to its next channel", "payment_id", p.ID, "operation_id", op.ID,
		"next_operation_id", next.ID, "channel", cands[0].Alias, "reason", reason)
	return true, nil
}

// capabilities is what the payment needs of a channel: the same as when
// it was accepted (NewDirect.capabilities), read from the payment and its
// secret.
func (p *Payment) capabilities(sec Secret) []provider.Capability {
	need := []provider.Capability{provider.Charge}
	if p.OperationMode == ModeAuthorize {
		need = []provider.Capability{provider.Authorize}
	}
	switch {
	case sec.Wallet != nil && sec.Wallet.Mode == "direct":
		need = append(need, provider.WalletDirect)
	case sec.Wallet != nil:
		need = append(need, provider.WalletToken)
	case sec.Phone != "":
		need = append(need, provider.Mobile)
	}
	if p.SavePaymentMethod || p.Subscription != nil {
		need = append(need, provider.SavedCards)
	}
	return need
}
