package stripe_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/provider/stripe/stripetest"
)

func movements(t *testing.T, a *stripe.Adapter, from, to time.Time) []provider.Movement {
	t.Helper()
	var out []provider.Movement
	require.NoError(t, a.Movements(context.Background(), from, to, func(m provider.Movement) error {
		out = append(out, m)
		return nil
	}))
	return out
}

func byRef(ms []provider.Movement) map[string]provider.Movement {
	out := map[string]provider.Movement{}
	for _, m := range ms {
		out[m.Ref] = m
	}
	return out
}

// TestMovements: Stripe's balance transactions read as the seam's
// movements (docs/providers/stripe.md, "Reconciliation"): a direct charge
// is the pay operation's charge, a captured authorization the capture
// operation's capture (its hold and a cancel's release have none), a
// refund the refund operation's, each with its PaymentIntent, Stripe's
// fee, positive amounts and Paygate's upper-case currency; money moved
// behind Paygate's back carries no operation id and is matched by its
// PaymentIntent.
func TestMovements(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	require.ElementsMatch(t, []string{provider.MoveCharge, provider.MoveCapture, provider.MoveRefund}, a.RecordKinds())

	charged, err := a.Pay(ctx, pay("op_charge", card("4242424242424242")))
	require.NoError(t, err)
	auth := pay("op_auth", card("4242424242424242"))
	auth.Authorize = true
	held, err := a.Pay(ctx, auth)
	require.NoError(t, err)
	_, err = a.Capture(ctx, provider.CaptureRequest{OperationID: "op_capture", ProviderID: held.ProviderID, AmountMinor: 3000})
	require.NoError(t, err)
	_, err = a.Refund(ctx, provider.RefundRequest{OperationID: "op_refund", ProviderID: charged.ProviderID, AmountMinor: 1200})
	require.NoError(t, err)
	auth.OperationID = "op_auth_cancel"
	canceled, err := a.Pay(ctx, auth)
	require.NoError(t, err)
	_, err = a.Cancel(ctx, provider.CancelRequest{OperationID: "op_cancel", ProviderID: canceled.ProviderID})
	require.NoError(t, err)
	auth.OperationID = "op_auth_dashboard"
	dashboard, err := a.Pay(ctx, auth)
	require.NoError(t, err)
	behind := f.Plant(stripetest.Plant{AmountMinor: 4200, Currency: "usd"})
	captured := f.Plant(stripetest.Plant{PaymentIntent: dashboard.ProviderID, AmountMinor: 5000, Currency: "eur"})

	now := time.Now()
	got := movements(t, a, now.Add(-time.Hour), now.Add(time.Hour))
	require.Len(t, got, 5, "a charge, a capture, a refund and two planted: no hold, no release: %+v", got)
	want := map[string]provider.Movement{}
	for _, b := range f.Balances() {
		want[b.ID] = provider.Movement{Ref: b.ID, AmountMinor: b.AmountMinor, Currency: "EUR", FeeMinor: b.FeeMinor, At: b.At.UTC()}
	}
	set := func(ref, kind, op, pi string, amount int64) {
		m := want[ref]
		m.Kind, m.OperationID, m.PaymentRef, m.AmountMinor = kind, op, pi, amount
		want[ref] = m
	}
	for _, b := range f.Balances() {
		switch b.OperationID {
		case "op_charge":
			set(b.ID, provider.MoveCharge, "op_charge", charged.ProviderID, 5000)
		case "op_capture":
			set(b.ID, provider.MoveCapture, "op_capture", held.ProviderID, 3000)
		case "op_refund":
			set(b.ID, provider.MoveRefund, "op_refund", charged.ProviderID, 1200)
		}
	}
	set(captured, provider.MoveCapture, "", dashboard.ProviderID, 5000)
	m := want[behind]
	m.Kind, m.Currency, m.AmountMinor = provider.MoveCharge, "USD", 4200
	want[behind] = m
	gotRefs := byRef(got)
	for ref, w := range want {
		g, ok := gotRefs[ref]
		require.True(t, ok, "balance transaction %s read", ref)
		if ref == behind {
			require.NotEmpty(t, g.PaymentRef, "a charge behind Paygate's back: its PaymentIntent")
			w.PaymentRef = g.PaymentRef
		}
		require.Equal(t, w, g, ref)
	}
	require.Equal(t, stripetest.Fee(5000), gotRefs[want[captured].Ref].FeeMinor)
	require.Equal(t, int64(175), stripetest.Fee(5000), "2.9% + 30")
	for _, g := range got {
		if g.Kind == provider.MoveRefund {
			require.Zero(t, g.FeeMinor, "Stripe keeps a charge's fee on a refund")
		}
	}
}

// TestMovementsWindow: [from, to), read to the second, as Stripe's
// created is.
func TestMovementsWindow(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	from := time.Date(2026, 1, 14, 22, 0, 0, 0, time.UTC)
	to := from.Add(28 * time.Hour)
	at := map[string]time.Time{}
	for _, t := range []time.Time{from.Add(-time.Second), from, from.Add(time.Hour), to.Add(-time.Second), to, to.Add(time.Second)} {
		at[f.Plant(stripetest.Plant{AmountMinor: 100, Currency: "usd", At: t})] = t
	}
	read := func(from, to time.Time) []time.Time {
		var out []time.Time
		for _, m := range movements(t, a, from, to) {
			require.Equal(t, at[m.Ref], m.At)
			out = append(out, m.At)
		}
		slices.SortFunc(out, time.Time.Compare)
		return out
	}
	require.Equal(t, []time.Time{from, from.Add(time.Hour), to.Add(-time.Second)}, read(from, to))
	// A window that starts or ends within a second: 22:00:00.001 leaves
	// 22:00:00 out, …:59.999 keeps …:59 in.
	require.Equal(t, []time.Time{from.Add(time.Hour), to.Add(-time.Second)}, read(from.Add(time.Millisecond), to.Add(-time.Millisecond)))
}

// TestMovementsPages: a day longer than a page is read page by page
// (starting_after), each transaction once, and fn sees the first page
// before the next is asked for.
func TestMovementsPages(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	planted := map[string]bool{}
	for i := range 250 {
		planted[f.Plant(stripetest.Plant{AmountMinor: int64(100 + i), Currency: "usd", At: at.Add(time.Duration(i%7) * time.Minute)})] = true
	}
	for i := range 3 {
		id := f.Plant(stripetest.Plant{AmountMinor: 100, Currency: "usd", At: at})
		planted[f.Plant(stripetest.Plant{Type: "refund", PaymentIntent: paymentIntentOf(t, f, id), OperationID: fmt.Sprintf("op_r%d", i),
			AmountMinor: 50, Currency: "usd", At: at})] = true
		planted[id] = true
	}
	lists := func() int {
		return len(slices.DeleteFunc(f.Requests(), func(r string) bool { return r != "GET /v1/balance_transactions" }))
	}
	before := lists()
	got := movements(t, a, at.Add(-time.Hour), at.Add(time.Hour))
	require.Len(t, got, len(planted))
	seen := map[string]int{}
	for _, m := range got {
		seen[m.Ref]++
	}
	for ref := range planted {
		require.Equal(t, 1, seen[ref], ref)
	}
	// charge: 253 in pages of 100 (3); payment, refund, payment_refund: 1 each.
	require.Equal(t, 6, lists()-before)

	stop := errors.New("stop")
	before = lists()
	n := 0
	err := a.Movements(context.Background(), at.Add(-time.Hour), at.Add(time.Hour), func(provider.Movement) error {
		n++
		return stop
	})
	require.ErrorIs(t, err, stop, "fn's error ends the read")
	require.Equal(t, 1, n)
	require.Equal(t, 1, lists()-before, "one page asked for, not all of them first")
}

func paymentIntentOf(t *testing.T, f *stripetest.Fake, balance string) string {
	t.Helper()
	for _, b := range f.Balances() {
		if b.ID == balance {
			return b.PaymentIntent
		}
	}
	t.Fatalf("no balance transaction %s", balance)
	return ""
}
