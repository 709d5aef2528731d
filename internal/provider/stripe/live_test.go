package stripe_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/stripe"
)

// TestStripeTestMode runs the conformance suite against Stripe's real test
// mode when PAYGATE_STRIPE_TEST_KEY holds a test secret key (sk_test_…),
// and skips otherwise (docs/providers/stripe.md, "Testing"). Its cards are
// Stripe's test tokens, so the account needs no raw card data access.
func TestStripeTestMode(t *testing.T) {
	key := os.Getenv("PAYGATE_STRIPE_TEST_KEY")
	if key == "" {
		t.Skip("PAYGATE_STRIPE_TEST_KEY is not set: Stripe's test mode is not tried")
	}
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "rk_test_") {
		t.Fatal("PAYGATE_STRIPE_TEST_KEY must be a test key (sk_test_… or rk_test_…)")
	}
	token := func(tok string) *provider.Instrument {
		payload, _ := json.Marshal(tok)
		return &provider.Instrument{Wallet: &provider.Wallet{Type: "google_pay", Mode: "token", Payload: payload}}
	}
	providertest.Run(t, func(t *testing.T) provider.Provider {
		return stripe.New("stripe-test-mode", "", key, &http.Client{Timeout: 30 * time.Second})
	}, providertest.Config{
		Profile: "default", Currency: "USD", AmountMinor: 1999,
		Succeeds: token("tok_visa"), Declines: token("tok_chargeDeclined"), Challenge: token("tok_threeDSecure2Required"),
	})
}
