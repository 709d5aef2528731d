package stripe_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/account"
	"github.com/paygate/paygate/internal/provider/circuit"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/provider/stripe/stripetest"
)

// newFake starts the fake with every answer validated against Stripe's
// published document: a fake that drifts from Stripe fails the test.
func newFake(t *testing.T) *stripetest.Fake {
	t.Helper()
	v, err := stripetest.NewValidator()
	require.NoError(t, err)
	f := stripetest.NewFake(t)
	f.Answered = func(method, path string, status int, body []byte) {
		if err := v.Check(method, path, status, body); err != nil {
			t.Errorf("the fake drifted from Stripe: %v", err)
		}
	}
	return f
}

func card(number string) provider.Instrument {
	return provider.Instrument{Card: &provider.Card{Number: number, ExpMonth: 12, ExpYear: 2040, CVV: "123"}}
}

// TestConformance: the Stripe adapter passes the seam's conformance suite,
// as the sandbox's does, against the fake.
func TestConformance(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	succeeds, declines, challenge := card("4242424242424242"), card("4000000000000002"), card("4000002500003155")
	providertest.Run(t, func(t *testing.T) provider.Provider {
		return stripe.New("stripe-test", f.URL, "sk_test_conformance", nil)
	}, providertest.Config{
		Profile: "default", Currency: "USD", AmountMinor: 1999,
		Succeeds: &succeeds, Declines: &declines, Challenge: &challenge,
		Moves: func(t *testing.T, id string) int { return f.Moves(id) },
	})
}

func pay(op string, in provider.Instrument) provider.PayRequest {
	return provider.PayRequest{OperationID: op, AmountMinor: 5000, Currency: "EUR", OrderID: "o-" + op,
		Instrument: in, ReturnURL: "https://pay.example/return", Profile: "default"}
}

func TestDeclines(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	for number, want := range map[string]string{
		"4000000000000002": "card_declined",
		"4000000000009995": "insufficient_funds",
		"4000000000000069": "expired_card",
		"4000000000000119": "processing_error",
		"4100000000000019": "do_not_retry",
		"4242424242424241": "incorrect_number", // fails Luhn: refused at the PaymentMethod
	} {
		res, err := a.Pay(ctx, pay("op_decline_"+number, card(number)))
		require.NoError(t, err, number)
		require.Equal(t, provider.StatusDeclined, res.Status, number)
		require.Equal(t, want, res.DeclineCode, number)
		require.NotEmpty(t, res.DeclineMessage)
		require.Zero(t, f.Moves("op_decline_"+number))
	}
}

// TestThreeDS: a challenge leads the payer to Stripe's page; its outcome is
// read back by Confirm; off session a card that always asks is declined.
func TestThreeDS(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	res, err := a.Pay(ctx, pay("op_3ds_ok", card("4000002500003155")))
	require.NoError(t, err)
	require.Equal(t, provider.StatusRequiresAction, res.Status)
	require.True(t, strings.HasPrefix(res.NextAction.URL, f.URL+"/3ds/"))
	require.NoError(t, f.Authenticate(res.ProviderID, true))
	done, err := a.Confirm(ctx, provider.ConfirmRequest{OperationID: "op_3ds_ok_c", ProviderID: res.ProviderID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, done.Status)
	require.Equal(t, int64(5000), done.CapturedAmountMinor)

	res, err = a.Pay(ctx, pay("op_3ds_no", card("4000002500003155")))
	require.NoError(t, err)
	require.NoError(t, f.Authenticate(res.ProviderID, false))
	done, err = a.Confirm(ctx, provider.ConfirmRequest{OperationID: "op_3ds_no_c", ProviderID: res.ProviderID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusDeclined, done.Status)
	require.Equal(t, "authentication_failed", done.DeclineCode)
	require.Zero(t, f.Moves(res.ProviderID))
	_, err = a.Confirm(ctx, provider.ConfirmRequest{OperationID: "op_otp", ProviderID: res.ProviderID, Code: "1234"})
	require.Equal(t, provider.Unsupported, provider.KindOf(err), "Stripe asks for no one-time code")
}

// TestSavedCardsOffSession: a card saved for a payer is a token of its
// Customer and PaymentMethod; a later charge off session needs no payer;
// the payer's next saved card goes to the same Customer.
func TestSavedCardsOffSession(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	first := pay("op_save_1", card("4242424242424242"))
	first.SaveCard, first.Payer = true, "payer-0001"
	res, err := a.Pay(ctx, first)
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, res.Status)
	customer, method, ok := strings.Cut(res.CardToken, "/")
	require.True(t, ok, res.CardToken)
	require.True(t, strings.HasPrefix(customer, "cus_") && strings.HasPrefix(method, "pm_"))
	require.Equal(t, "visa", res.CardScheme)
	require.Equal(t, 12, res.CardExpMonth)

	again := pay("op_save_2", provider.Instrument{SavedToken: res.CardToken})
	again.OffSession = true
	res2, err := a.Pay(ctx, again)
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, res2.Status)
	require.Equal(t, 1, f.Moves("op_save_2"))

	second := pay("op_save_3", card("5555555555554444"))
	second.SaveCard, second.Payer = true, "payer-0001"
	res3, err := a.Pay(ctx, second)
	require.NoError(t, err)
	c3, _, _ := strings.Cut(res3.CardToken, "/")
	require.Equal(t, customer, c3, "one Customer per payer")

	// A card that always asks for 3DS cannot be charged off session.
	ask := pay("op_save_4", card("4000002760003184"))
	ask.SaveCard, ask.Payer = true, "payer-0002"
	res4, err := a.Pay(ctx, ask)
	require.NoError(t, err)
	require.Equal(t, provider.StatusRequiresAction, res4.Status)
	require.NoError(t, f.Authenticate(res4.ProviderID, true))
	res4, err = a.Confirm(ctx, provider.ConfirmRequest{OperationID: "op_save_4c", ProviderID: res4.ProviderID})
	require.NoError(t, err)
	require.NotEmpty(t, res4.CardToken)
	off := pay("op_save_5", provider.Instrument{SavedToken: res4.CardToken})
	off.OffSession = true
	res5, err := a.Pay(ctx, off)
	require.NoError(t, err)
	require.Equal(t, provider.StatusDeclined, res5.Status)
	require.Equal(t, "authentication_failed", res5.DeclineCode)
}

// TestLostAnswers: an answer lost after Stripe carried the request out is
// found by Status (search, or the PaymentIntent and its Refunds), and
// sending the operation again is a replay: one charge, one capture, one
// refund.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()

	f.Inject(stripetest.Fault{Path: "/v1/payment_intents", Times: 1, Mode: stripetest.LoseAnswer})
	r := pay("op_lost_pay", card("4242424242424242"))
	r.Authorize = true
	_, err := a.Pay(ctx, r)
	require.Equal(t, provider.OutcomeUnknown, provider.KindOf(err), "%v", err)
	st, err := a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusAuthorized, st.Status)
	again, err := a.Pay(ctx, r)
	require.NoError(t, err)
	require.Equal(t, st.ProviderID, again.ProviderID)
	require.Equal(t, 1, f.Moves(r.OperationID), "held once")

	f.Inject(stripetest.Fault{Path: "/v1/payment_intents/", Times: 1, Mode: stripetest.LoseAnswer})
	c := provider.CaptureRequest{OperationID: "op_lost_capture", ProviderID: st.ProviderID, AmountMinor: 3000}
	_, err = a.Capture(ctx, c)
	require.Equal(t, provider.OutcomeUnknown, provider.KindOf(err))
	got, err := a.Status(ctx, provider.StatusRequest{OperationID: c.OperationID, ProviderID: st.ProviderID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, got.Status)
	require.Equal(t, int64(3000), got.CapturedAmountMinor, "a partial capture")
	require.Equal(t, 1, f.Moves(c.OperationID))

	rf := provider.RefundRequest{OperationID: "op_lost_refund", ProviderID: st.ProviderID, AmountMinor: 1000}
	_, err = a.Status(ctx, provider.StatusRequest{OperationID: rf.OperationID, ProviderID: st.ProviderID})
	require.Equal(t, provider.NotFound, provider.KindOf(err), "a refund never sent")
	f.Inject(stripetest.Fault{Path: "/v1/refunds", Times: 1, Mode: stripetest.LoseAnswer})
	_, err = a.Refund(ctx, rf)
	require.Equal(t, provider.OutcomeUnknown, provider.KindOf(err))
	got, err = a.Status(ctx, provider.StatusRequest{OperationID: rf.OperationID, ProviderID: st.ProviderID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, got.Status)
	require.Equal(t, int64(1000), got.RefundedAmountMinor)
	res, err := a.Refund(ctx, rf)
	require.NoError(t, err, "sent again: a replay")
	require.Equal(t, int64(1000), res.RefundedAmountMinor)
	require.Equal(t, 1, f.Moves(rf.OperationID))
	res, err = a.Refund(ctx, provider.RefundRequest{OperationID: "op_refund_rest", ProviderID: st.ProviderID, AmountMinor: 2000})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, res.Status)
	_, err = a.Refund(ctx, provider.RefundRequest{OperationID: "op_refund_more", ProviderID: st.ProviderID, AmountMinor: 1})
	require.Equal(t, provider.Invalid, provider.KindOf(err), "nothing is left to refund")

	// A lost answer of a payment never made is NotFound: sending it is safe.
	_, err = a.Status(ctx, provider.StatusRequest{OperationID: "op_never"})
	require.Equal(t, provider.NotFound, provider.KindOf(err))
}

// TestFaults: each way a call can fail maps to the seam's kind.
func TestFaults(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	f.Inject(stripetest.Fault{Path: "/v1/payment_methods", Times: 1, Mode: stripetest.Unavailable})
	_, err := a.Pay(ctx, pay("op_503", card("4242424242424242")))
	require.Equal(t, provider.Transient, provider.KindOf(err), "%v", err)
	require.Zero(t, f.Moves("op_503"))

	f.Inject(stripetest.Fault{Path: "/v1/payment_intents", Times: 1, Mode: stripetest.Garbage})
	_, err = a.Pay(ctx, pay("op_garbage", card("4242424242424242")))
	require.Equal(t, provider.Unreadable, provider.KindOf(err), "%v", err)
	require.NotContains(t, err.Error(), "upstream hiccup", "Stripe's body is never quoted")

	// Nobody listens: Stripe surely never received it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	ln.Close()
	_, err = stripe.New("s", closed, "sk_test_x", nil).Pay(ctx, pay("op_refused", card("4242424242424242")))
	require.Equal(t, provider.Transient, provider.KindOf(err), "%v", err)

	// No answer in time: unknown.
	slow := &http.Client{Timeout: 50 * time.Millisecond}
	hang := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang })}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(hang); srv.Close() })
	_, err = stripe.New("s", "http://"+ln.Addr().String(), "sk_test_x", slow).Pay(ctx, pay("op_slow", card("4242424242424242")))
	require.Equal(t, provider.OutcomeUnknown, provider.KindOf(err), "%v", err)

	_, err = stripe.New("s", f.URL, "pk_test_nope", nil).Pay(ctx, pay("op_key", card("4242424242424242")))
	require.Equal(t, provider.Invalid, provider.KindOf(err), "a refused key: %v", err)
	for _, e := range []error{err} {
		require.NotContains(t, e.Error(), "4242424242424242")
	}
	_, err = a.Pay(ctx, pay("op_mobile", provider.Instrument{Phone: "+15555550100"}))
	require.Equal(t, provider.Unsupported, provider.KindOf(err))
}

// TestHostedPage: a Checkout Session is the payer's page; Status of its
// operation, by the session, is pending until the payer pays, then the
// PaymentIntent's outcome.
func TestHostedPage(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	r := provider.HostedSessionRequest{OperationID: "op_hosted", AmountMinor: 2500, Currency: "USD", OrderID: "o-h",
		Locale: "en", ReturnURL: "https://pay.example/back", Authorize: true}
	page, err := a.HostedSession(ctx, r)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(page.ProviderID, "cs_"))
	st, err := a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID, ProviderID: page.ProviderID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusPending, st.Status)
	to, err := f.PaySession(page.ProviderID, "4242424242424242")
	require.NoError(t, err)
	require.Equal(t, r.ReturnURL, to)
	st, err = a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID, ProviderID: page.ProviderID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusAuthorized, st.Status)
	require.True(t, strings.HasPrefix(st.ProviderID, "pi_"))
	found, err := a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
	require.NoError(t, err, "the PaymentIntent carries the operation id")
	require.Equal(t, st.ProviderID, found.ProviderID)
}

// TestKind: the environment rules of docs/design/decisions.md section 16.
func TestKind(t *testing.T) {
	t.Parallel()
	k := stripe.Kind()
	for _, c := range []struct {
		env, base string
		creds     account.Credentials
		want      string
	}{
		{merchant.Production, "", account.Credentials{SecretKey: "sk_test_1"}, "refuses Stripe test keys"},
		{merchant.Production, "", account.Credentials{SecretKey: "rk_test_1"}, "refuses Stripe test keys"},
		{merchant.Sandbox, "", account.Credentials{SecretKey: "sk_live_1"}, "refuses Stripe live keys"},
		{merchant.Sandbox, "", account.Credentials{SecretKey: "rk_live_1"}, "refuses Stripe live keys"},
		{merchant.Sandbox, "", account.Credentials{SecretKey: "pk_test_1"}, "not a publishable key"},
		{merchant.Sandbox, "", account.Credentials{}, "--secret-key-file is required"},
		{merchant.Sandbox, "", account.Credentials{SecretKey: "sk_test_1", WebhookSecret: "nope"}, "whsec_"},
		{merchant.Production, "http://stripe.internal", account.Credentials{SecretKey: "sk_live_1"}, "must be https"},
		{merchant.Production, "", account.Credentials{SecretKey: "sk_live_1"}, ""},
		{merchant.Sandbox, "http://127.0.0.1:1", account.Credentials{SecretKey: "sk_test_1", WebhookSecret: "whsec_1"}, ""},
	} {
		err := k.Check(c.env, c.base, c.creds)
		if c.want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), c.creds.SecretKey+"x")
	}
	require.Error(t, stripe.Currency("KWD"))
	require.Error(t, stripe.Currency("isk"))
	require.NoError(t, stripe.Currency("JPY"))
	require.NoError(t, stripe.Currency("USD"))
}

// TestValidatorRefuses proves the fake's check can fail: an answer
// Stripe's document does not allow is refused.
func TestValidatorRefuses(t *testing.T) {
	t.Parallel()
	v, err := stripetest.NewValidator()
	require.NoError(t, err)
	good := `{"id":"pi_1","object":"payment_intent","status":"succeeded","created":1,"livemode":false,"amount":5}`
	require.NoError(t, v.Check("GET", "/v1/payment_intents/pi_1", 200, []byte(good)))
	for _, bad := range []string{
		`{"id":"pi_1","object":"payment_intent","status":"bogus","created":1,"livemode":false}`,
		`{"id":"pi_1","object":"payment_intent","status":"succeeded","livemode":false}`,
		`{"id":"pi_1","object":"payment_intent","status":"succeeded","created":1,"livemode":false,"amount":"5"}`,
	} {
		require.Error(t, v.Check("GET", "/v1/payment_intents/pi_1", 200, []byte(bad)), bad)
	}
	require.Error(t, v.Check("POST", "/v1/refunds", 200, []byte(`{"id":"re_1","object":"refund"}`)), "required fields")
	require.Error(t, v.Check("GET", "/v1/no_such_thing", 200, []byte(`{}`)))
}

// TestLostAnswerWhileSearchLags: Stripe's search lags its writes, so a lost
// answer may not be found at once; sending the operation again reuses its
// Idempotency-Key and Stripe replays what it did: one charge, and, for a
// card saved for a payer, the same Customer (docs/design/decisions.md
// section 16).
func TestLostAnswerWhileSearchLags(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	a := stripe.New("s", f.URL, "sk_test_x", nil)
	ctx := context.Background()
	f.SearchLag = true
	r := pay("op_lag", card("4242424242424242"))
	r.SaveCard, r.Payer = true, "payer-lag"
	f.Inject(stripetest.Fault{Path: "/v1/payment_intents", Times: 1, Mode: stripetest.LoseAnswer})
	_, err := a.Pay(ctx, r)
	require.Equal(t, provider.OutcomeUnknown, provider.KindOf(err))
	_, err = a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
	require.Equal(t, provider.NotFound, provider.KindOf(err), "the search does not see it yet")
	res, err := a.Pay(ctx, r)
	require.NoError(t, err, "sent again: replayed, not refused")
	require.Equal(t, provider.StatusSucceeded, res.Status)
	require.Equal(t, 1, f.Moves(r.OperationID), "one charge")

	// The payer's next card, while the search still lags: the same
	// Customer, made under the payer's own Idempotency-Key.
	second := pay("op_lag_2", card("5555555555554444"))
	second.SaveCard, second.Payer = true, "payer-lag"
	res2, err := a.Pay(ctx, second)
	require.NoError(t, err)
	c1, _, _ := strings.Cut(res.CardToken, "/")
	c2, _, _ := strings.Cut(res2.CardToken, "/")
	require.Equal(t, c1, c2)

	// The same key with other parameters: an unknown outcome, to be asked
	// about, never a failure of its own.
	other := r
	other.AmountMinor++
	_, err = a.Pay(ctx, other)
	require.Equal(t, provider.OutcomeUnknown, provider.KindOf(err), "%v", err)
	require.Equal(t, 1, f.Moves(r.OperationID))
}

// TestCircuitOpen: a call an open circuit refuses is sent nowhere and
// reads as a call that did nothing, naming the circuit.
func TestCircuitOpen(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	b := circuit.New(time.Now)
	a := stripe.New("s", f.URL, "sk_test_x", b.Client("s", nil))
	for range circuit.Threshold {
		f.Inject(stripetest.Fault{Path: "/v1/payment_methods", Times: 1, Mode: stripetest.Unavailable})
		_, err := a.Pay(context.Background(), pay("op_c", card("4242424242424242")))
		require.Equal(t, provider.Transient, provider.KindOf(err))
	}
	before := len(f.Requests())
	_, err := a.Pay(context.Background(), pay("op_c2", card("4242424242424242")))
	require.True(t, provider.IsUnsent(err))
	require.ErrorIs(t, err, circuit.ErrOpen)
	require.Len(t, f.Requests(), before, "nothing sent")
}
