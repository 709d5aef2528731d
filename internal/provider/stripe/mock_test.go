package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/provider/stripe/stripetest"
)

// TestStripeMockAcceptsEveryRequest sends every request the adapter can
// send to stripe-mock, which answers 400 to any request Stripe's published
// OpenAPI document does not allow (docs/design/decisions.md section 16):
// no call may come back Invalid. stripe-mock keeps no state, so the
// results themselves are not checked here (the fake's tests do that).
func TestStripeMockAcceptsEveryRequest(t *testing.T) {
	t.Parallel()
	a := stripe.New("mock", stripetest.StartMock(t), "sk_test_123", &http.Client{Timeout: 30 * time.Second})
	ctx := context.Background()
	card := provider.Instrument{Card: &provider.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2040, CVV: "123", Holder: "Ann Example"}}
	accepted := func(t *testing.T, what string, err error) {
		t.Helper()
		if err != nil {
			require.NotEqual(t, provider.Invalid, provider.KindOf(err), "%s: stripe-mock refused the request: %v", what, err)
		}
	}
	pay := provider.PayRequest{OperationID: "op_mock_1", AmountMinor: 1999, Currency: "USD", OrderID: "o-1",
		Description: "Mock order", Instrument: card, ReturnURL: "https://pay.example/return", Profile: "default"}
	for _, c := range []struct {
		name string
		edit func(r *provider.PayRequest)
	}{
		{"charge", func(*provider.PayRequest) {}},
		{"authorize", func(r *provider.PayRequest) { r.Authorize = true }},
		{"save the card for a payer", func(r *provider.PayRequest) { r.SaveCard, r.Payer = true, "0123456789abcdef" }},
		{"save the card, no payer", func(r *provider.PayRequest) { r.SaveCard = true }},
		{"a saved card, off session", func(r *provider.PayRequest) {
			r.Instrument, r.OffSession = provider.Instrument{SavedToken: "cus_123/pm_123"}, true
		}},
		{"a wallet token", func(r *provider.PayRequest) {
			r.Instrument = provider.Instrument{Wallet: &provider.Wallet{Type: "google_pay", Mode: "token",
				Payload: json.RawMessage(`{"paymentMethodData":{"tokenizationData":{"token":"{\"id\":\"tok_visa\"}"}}}`)}}
		}},
	} {
		r := pay
		c.edit(&r)
		_, err := a.Pay(ctx, r)
		accepted(t, "pay: "+c.name, err)
	}
	_, err := a.Capture(ctx, provider.CaptureRequest{OperationID: "op_mock_2", ProviderID: "pi_123", AmountMinor: 500})
	accepted(t, "capture", err)
	_, err = a.Cancel(ctx, provider.CancelRequest{OperationID: "op_mock_3", ProviderID: "pi_123"})
	accepted(t, "cancel", err)
	_, err = a.Refund(ctx, provider.RefundRequest{OperationID: "op_mock_4", ProviderID: "pi_123", AmountMinor: 100})
	accepted(t, "refund", err)
	_, err = a.Confirm(ctx, provider.ConfirmRequest{OperationID: "op_mock_5", ProviderID: "pi_123"})
	accepted(t, "confirm", err)
	_, err = a.Status(ctx, provider.StatusRequest{OperationID: "op_mock_6"})
	accepted(t, "status by search", err)
	_, err = a.Status(ctx, provider.StatusRequest{OperationID: "op_mock_7", ProviderID: "pi_123"})
	accepted(t, "status of a follow-up", err)
	_, err = a.Status(ctx, provider.StatusRequest{OperationID: "op_mock_8", ProviderID: "cs_123"})
	accepted(t, "status of a hosted page", err)
	err = a.Movements(ctx, time.Date(2026, 1, 14, 22, 0, 0, 0, time.UTC), time.Date(2026, 1, 16, 2, 0, 0, 0, time.UTC),
		func(provider.Movement) error { return nil })
	accepted(t, "balance transactions", err)
	for _, auth := range []bool{false, true} {
		_, err = a.HostedSession(ctx, provider.HostedSessionRequest{OperationID: "op_mock_9", AmountMinor: 1999, Currency: "EUR",
			OrderID: "o-2", Locale: "ru", ReturnURL: "https://pay.example/return", Authorize: auth})
		accepted(t, "hosted session", err)
	}
}

// TestStripeMockRefuses proves the check above can fail: stripe-mock
// answers 400 to a request Stripe's document does not allow.
func TestStripeMockRefuses(t *testing.T) {
	t.Parallel()
	base := stripetest.StartMock(t)
	req, err := http.NewRequest(http.MethodPost, base+"/v1/payment_intents", strings.NewReader("amount=100&currency=usd&not_a_stripe_field=1"))
	require.NoError(t, err)
	req.SetBasicAuth("sk_test_123", "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)

}
