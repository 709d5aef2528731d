package stripe

import (
	"context"
	"strings"
	"time"

	sdk "github.com/stripe/stripe-go/v85"

	"github.com/paygate/paygate/internal/provider"
)

var (
	_ provider.Records     = (*Adapter)(nil)
	_ provider.RecordKinds = (*Adapter)(nil)
)

// recordTypes are the balance transaction types that are payment money
// (docs/providers/stripe.md, "Reconciliation"); each is listed on its
// own, so that the nested expansion of a charge's PaymentIntent is only
// asked of lists whose sources are charges. Payouts, transfers,
// adjustments, disputes, Stripe's own fees and the rest are not Paygate's
// movements and are not read.
var recordTypes = []struct {
	typ    sdk.BalanceTransactionType
	expand []string
}{
	{sdk.BalanceTransactionTypeCharge, []string{"data.source", "data.source.payment_intent"}},
	{sdk.BalanceTransactionTypePayment, []string{"data.source", "data.source.payment_intent"}},
	{sdk.BalanceTransactionTypeRefund, []string{"data.source"}},
	{sdk.BalanceTransactionTypePaymentRefund, []string{"data.source"}},
}

// RecordKinds implements provider.RecordKinds: a hold and its release
// move no balance at Stripe, so they have no balance transaction.
func (a *Adapter) RecordKinds() []string {
	return []string{provider.MoveCharge, provider.MoveCapture, provider.MoveRefund}
}

// Movements implements provider.Records from Stripe's balance
// transactions created in [from, to) (docs/design/decisions.md section
// 18), page by page: fn sees each transaction as its page arrives. A
// charge's source is read with its PaymentIntent: a PaymentIntent Paygate
// captured carries the capture's operation id, one charged at once the
// pay operation's; a refund carries its own in its metadata. A movement
// whose operation Stripe's records do not name is left to be matched by
// its PaymentIntent (PaymentRef).
func (a *Adapter) Movements(ctx context.Context, from, to time.Time, fn func(provider.Movement) error) error {
	ctx, o := observe(ctx)
	for _, rt := range recordTypes {
		p := &sdk.BalanceTransactionListParams{
			ListParams: sdk.ListParams{Context: ctx, Limit: sdk.Int64(100)},
			Type:       sdk.String(string(rt.typ)),
			// created is in whole seconds: s >= from and s < to exactly when
			// s >= ceil(from) and s < ceil(to).
			CreatedRange: &sdk.RangeQueryParams{GreaterThanOrEqual: ceilUnix(from), LesserThan: ceilUnix(to)},
		}
		for _, e := range rt.expand {
			p.AddExpand(e)
		}
		for bt, err := range a.api.V1BalanceTransactions.List(ctx, p).All(ctx) {
			if err != nil {
				return classify(err, o)
			}
			m, ok := movement(bt)
			if !ok {
				continue
			}
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// movement reads a balance transaction as the seam's movement; false for
// one that is not payment money Paygate could have moved.
func movement(bt *sdk.BalanceTransaction) (provider.Movement, bool) {
	m := provider.Movement{Ref: bt.ID, AmountMinor: abs(bt.Amount), Currency: strings.ToUpper(string(bt.Currency)),
		FeeMinor: bt.Fee, At: time.Unix(bt.Created, 0).UTC()}
	src := bt.Source
	if src == nil {
		return m, false
	}
	switch bt.Type {
	case sdk.BalanceTransactionTypeCharge, sdk.BalanceTransactionTypePayment:
		ch := src.Charge
		if ch == nil {
			return m, false
		}
		if bt.ExchangeRate != 0 { // settled in another currency: Paygate knows the charge's own
			m.AmountMinor, m.Currency = ch.AmountCaptured, strings.ToUpper(string(ch.Currency))
		}
		m.Kind, m.OperationID, m.PaymentRef = provider.MoveCharge, ch.Metadata[MetadataKey], ch.ID
		if pi := ch.PaymentIntent; pi != nil && pi.ID != "" {
			m.PaymentRef = pi.ID
			switch {
			case pi.Metadata[captureKey] != "":
				m.Kind, m.OperationID = provider.MoveCapture, pi.Metadata[captureKey]
			case pi.CaptureMethod == sdk.PaymentIntentCaptureMethodManual:
				// Captured, but not by Paygate's request (the dashboard):
				// matched by its PaymentIntent.
				m.Kind, m.OperationID = provider.MoveCapture, ""
			case pi.Metadata[MetadataKey] != "":
				m.OperationID = pi.Metadata[MetadataKey]
			}
		}
	case sdk.BalanceTransactionTypeRefund, sdk.BalanceTransactionTypePaymentRefund:
		rf := src.Refund
		if rf == nil {
			return m, false
		}
		if bt.ExchangeRate != 0 {
			m.AmountMinor, m.Currency = rf.Amount, strings.ToUpper(string(rf.Currency))
		}
		m.Kind, m.OperationID = provider.MoveRefund, rf.Metadata[MetadataKey]
		switch {
		case rf.PaymentIntent != nil && rf.PaymentIntent.ID != "":
			m.PaymentRef = rf.PaymentIntent.ID
		case rf.Charge != nil:
			m.PaymentRef = rf.Charge.ID
		}
	default:
		return m, false
	}
	return m, true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
