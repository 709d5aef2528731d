package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestSessionTermsRules: a hosted payment with subscription terms must
// leave a card to charge later (docs/subscriptions.md, "Terms";
// docs/design/decisions.md section 5). The page refuses a wallet or a
// phone on the method, as it shows its other errors, and charges nothing;
// createPaymentSession (POST /payment-sessions) refuses terms on a channel
// that cannot keep cards, and a first_charge_at more than a day past.
func TestSessionTermsRules(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		first := e.clock.Now().Add(24 * time.Hour)
		terms := func(at time.Time) string {
			return fmt.Sprintf(`,"customer_reference":"payer-terms","subscription":{"interval_unit":"month",
				"interval_count":1,"first_charge_at":%q,"disclosure_version":"v9","consent":true}`, at.Format(time.RFC3339))
		}

		t.Run("a wallet or a phone is refused on the page", func(t *testing.T) {
			s := e.session(t, terms(first))
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			for _, form := range []url.Values{
				{"method": {"google_pay"}, "wallet_token": {"sandbox_success"}, "consent": {"yes"}},
				{"method": {"mobile"}, "phone": {"+12025550100"}, "consent": {"yes"}},
			} {
				r := pr.submit(pg, form)
				require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", form.Get("method"), r.body)
				require.Contains(t, r.body, "Payment method must be a card: the recurring payments are charged to the card you pay with now.")
				require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status)
				pg = r
			}
			require.Zero(t, chargesFor(e, s.PaymentID), "nothing went to the provider")
			r := pr.submit(pg, mergeForm(cardForm("4242424242424242"), url.Values{"consent": {"yes"}}))
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			require.Equal(t, "active", e.subscription(e.a, s.SubscriptionID).Status)
		})

		t.Run("first_charge_at more than a day past", func(t *testing.T) {
			body := fmt.Sprintf(visaSession, 0, terms(e.clock.Now().Add(-25*time.Hour)))
			resp := e.post(e.a, "/api/v1/payment-sessions", body)
			require.Equal(t, http.StatusBadRequest, resp.Status, "%s", resp.Body)
			er := decodeError(t, resp.Body).Error
			require.Equal(t, "validation_error", er.Code)
			require.Equal(t, "subscription.first_charge_at", *er.Field)
			body = fmt.Sprintf(visaSession, 0, terms(e.clock.Now().Add(-23*time.Hour)))
			require.Equal(t, http.StatusCreated, e.post(e.a, "/api/v1/payment-sessions", body).Status, "a little late is fine")
		})

		t.Run("a channel without saved cards", func(t *testing.T) {
			// A profile of the sandbox that cannot keep cards, on a channel
			// of its own, the only one of a new key.
			sb, err := e.app.Providers.Provider(sandbox.Name)
			require.NoError(t, err)
			sb.(*sandbox.Adapter).Profiles["nosave"] = provider.Capabilities{provider.Charge, provider.HostedPage}
			_, err = e.store.EnsureChannel(ctx, merchant.Channel{ID: uuid.NewString(), Alias: "sandbox-nosave",
				Provider: sandbox.Name, Profile: "nosave", PaymentMethods: []string{"card"}, Currencies: []string{"USD"},
				CheckoutMode: merchant.CheckoutPlatform, CreatedAt: e.clock.Now()})
			require.NoError(t, err)
			c, k := e.newClient("no-saved-cards")
			require.NoError(t, e.merchants.Unassign(ctx, k.AccessKey, "sandbox"))
			require.NoError(t, e.merchants.Assign(ctx, k.AccessKey, "sandbox-nosave"))

			for _, extra := range []string{terms(first), `,"customer_reference":"payer-terms","save_payment_method":true`} {
				resp := e.post(c, "/api/v1/payment-sessions", fmt.Sprintf(visaSession, 0, extra))
				require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s", resp.Body)
				require.Equal(t, "capability_not_supported", decodeError(t, resp.Body).Error.Code)
			}
			resp := e.post(c, "/api/v1/payment-sessions", fmt.Sprintf(visaSession, 0, ""))
			require.Equal(t, http.StatusCreated, resp.Status, "a session that keeps no card: %s", resp.Body)
		})
	})
}
