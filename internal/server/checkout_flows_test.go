package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

func TestCheckoutFlows(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()

		t.Run("3DS deny, then another card", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pr.submit(pr.get(e.url+"/checkout/"+s.SessionID), cardForm("4000000000003220"))
			challenge := pr.awaitRedirect(s.SessionID, e.acqURL)
			back := pr.post(pr.get(challenge), challenge, url.Values{"outcome": {"deny"}})
			pr.follow(back.location)
			pg := pr.settle(s.SessionID)
			require.Contains(t, pg.body, "The payer did not pass authentication.")
			pr.submit(pg, cardForm("4242424242424242"))
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			require.Equal(t, 1, chargesFor(e, s.PaymentID))
		})

		t.Run("customer fields are asked only when the merchant did not send them", func(t *testing.T) {
			fields := []string{"first_name", "last_name", "email", "country", "line1"}
			none := createSession(t, e.a, `{"order_id":"f-1","amount_minor":500,"currency":"EUR"}`)
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + none.SessionID)
			for _, f := range fields {
				require.Contains(t, pg.body, `name="`+f+`"`, f)
			}
			require.Contains(t, pg.body, "Visa cards need all of these; Mastercard cards need the email only.")
			require.Contains(t, pg.body, `data-for="visa mastercard"`)

			full := e.session(t, "")
			pg2 := newPayer(t, e).get(e.url + "/checkout/" + full.SessionID)
			for _, f := range fields {
				require.NotContains(t, pg2.body, `name="`+f+`"`, f)
			}
			emailOnly := createSession(t, e.a, `{"order_id":"f-2","amount_minor":500,"currency":"EUR","customer":{"email":"a@b.example"}}`)
			pg3 := newPayer(t, e).get(e.url + "/checkout/" + emailOnly.SessionID)
			require.Contains(t, pg3.body, `name="first_name"`)
			require.NotContains(t, pg3.body, `name="email"`)

			// A Visa without them is refused on the first one missing; the
			// payer's own details come back, the card does not.
			r := pr.submit(pg, mergeForm(cardForm("4242424242424242"), url.Values{"email": {"ada@example.com"}}))
			require.Equal(t, http.StatusUnprocessableEntity, r.status)
			require.Contains(t, r.body, "First name is required for a Visa card.")
			require.Contains(t, r.body, `value="ada@example.com"`)
			require.False(t, pr.saw("4242424242424242"))
			r = pr.submit(r, mergeForm(cardForm("4242424242424242"), url.Values{"email": {"ada@example.com"},
				"first_name": {"Ada"}, "last_name": {"Lovelace"}, "country": {"gb"}, "line1": {"1 Street"}}))
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, pr.settle(none.SessionID).body, "Payment successful")

			// A Mastercard needs the email only.
			mc := createSession(t, e.a, `{"order_id":"f-3","amount_minor":500,"currency":"EUR"}`)
			pr = newPayer(t, e)
			r = pr.submit(pr.get(e.url+"/checkout/"+mc.SessionID), cardForm("5555555555554444"))
			require.Contains(t, r.body, "Email is required for a Mastercard card.")
			r = pr.submit(r, mergeForm(cardForm("5555555555554444"), url.Values{"email": {"m@c.example"}}))
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, pr.settle(mc.SessionID).body, "Payment successful")
		})

		t.Run("saved card", func(t *testing.T) {
			first := e.session(t, `,"customer_reference":"payer-7","save_payment_method":true`)
			pr := newPayer(t, e)
			pr.submit(pr.get(e.url+"/checkout/"+first.SessionID), cardForm("4242424242424242"))
			pr.settle(first.SessionID)
			saved := e.payment(t, first.PaymentID).SavedCardID
			require.NotEmpty(t, saved)

			s := e.session(t, `,"customer_reference":"payer-7"`)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Contains(t, pg.body, `name="saved_card_id" value="`+saved+`"`)
			require.Contains(t, pg.body, "•••• 4242")
			require.Contains(t, pg.body, "Use a new card")
			both := mergeForm(cardForm("5555555555554444"), url.Values{"saved_card_id": {saved}})
			r := pr.submit(pg, both)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "a saved card and a typed one")
			r = pr.submit(r, url.Values{"method": {"card"}, "saved_card_id": {saved}})
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			got := e.payment(t, s.PaymentID)
			require.Equal(t, "succeeded", got.Status)
			require.Equal(t, saved, got.SavedCardID)
			require.Equal(t, "424242******4242", got.MaskedCard)

			other := e.session(t, `,"customer_reference":"payer-8"`)
			require.NotContains(t, newPayer(t, e).get(e.url+"/checkout/"+other.SessionID).body, saved, "another payer's cards")
		})

		t.Run("subscription consent must be ticked", func(t *testing.T) {
			s := e.session(t, `,"subscription":{"interval_unit":"month","interval_count":1,
				"first_charge_at":"2030-01-01T00:00:00Z","disclosure_version":"terms-v7","consent":true}`)
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Contains(t, pg.body, "Terms version terms-v7")
			require.Contains(t, pg.body, "USD 19.99 every month</strong>, starting 1 January 2030")
			require.Contains(t, pg.body, `<input type="checkbox" id="consent" name="consent" value="yes">`, "unticked")
			r := pr.submit(pg, cardForm("4242424242424242"))
			require.Equal(t, http.StatusUnprocessableEntity, r.status)
			require.Contains(t, r.body, "Tick the box to agree to the recurring payments.")
			require.Contains(t, r.body, `aria-invalid="true" aria-describedby="consent-error"`)
			r = pr.submit(r, mergeForm(cardForm("4242424242424242"), url.Values{"consent": {"yes"}}))
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			p, err := e.store.FindPaymentByID(ctx, s.PaymentID)
			require.NoError(t, err)
			require.NotNil(t, p.ConsentAt)
			require.Equal(t, "terms-v7", p.Subscription.DisclosureVersion)
		})

		t.Run("mobile payment with a one-time code", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pr.submit(pr.get(e.url+"/checkout/"+s.SessionID), url.Values{"method": {"mobile"}, "phone": {"+44 7700 900123"}})
			pg := pr.settle(s.SessionID)
			require.Contains(t, pg.body, "Enter the code we sent you")
			r := pr.submit(pg, url.Values{"value": {"12x"}})
			require.Equal(t, http.StatusUnprocessableEntity, r.status)
			r = pr.submit(r, url.Values{"value": {"123456"}})
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			require.False(t, pr.saw("7700 900123") || pr.saw("7700900123"), "the phone never comes back")
		})

		t.Run("sandbox wallet", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Contains(t, pg.body, `value="google_pay"`)
			pr.submit(pg, url.Values{"method": {"google_pay"}, "wallet_token": {"sandbox_success"}})
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
		})

		t.Run("provider_redirect: the sandbox's own page, in the session's locale", func(t *testing.T) {
			c, k := e.newClient("redirect-shop")
			require.NoError(t, e.merchants.Unassign(ctx, k.AccessKey, "sandbox"))
			require.NoError(t, e.merchants.Assign(ctx, k.AccessKey, "sandbox-redirect"))
			for locale, title := range map[string]string{"ru": "Оплата картой", "en": "Pay by card", "ua": "Оплата карткою"} {
				s := createSession(t, c, `{"order_id":"r-`+locale+`","amount_minor":700,"currency":"EUR","locale":"`+locale+`"}`)
				pg := newPayer(t, e).get(e.url + "/checkout/" + s.SessionID)
				require.Equal(t, http.StatusSeeOther, pg.status)
				require.True(t, strings.HasPrefix(pg.location, e.acqURL+"/checkout/"), pg.location)
				require.Contains(t, newPayer(t, e).get(pg.location).body, title, locale)
			}

			s := createSession(t, c, `{"order_id":"r-pay","amount_minor":700,"currency":"EUR","locale":"en",
				"return_url":"https://shop.example/done"}`)
			pr := newPayer(t, e)
			at := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Equal(t, at.location, pr.get(e.url+"/checkout/"+s.SessionID).location, "one provider page per attempt")
			require.Equal(t, "requires_action", e.paymentOf(t, c, s.PaymentID).Status)
			back := pr.post(pr.get(at.location), at.location, cardForm("4000000000000002"))
			require.True(t, strings.HasPrefix(back.location, e.url+"/checkout/"+s.SessionID+"/return"), back.location)
			pr.follow(back.location)
			retry := pr.settle(s.SessionID)
			require.Contains(t, retry.body, "The card was declined.")
			again := pr.submit(retry, nil)
			require.Equal(t, http.StatusSeeOther, again.status)
			require.NotEqual(t, at.location, again.location, "a new page for the new attempt")
			back = pr.post(pr.get(again.location), again.location, cardForm("4242424242424242"))
			pr.follow(back.location)
			end := pr.settle(s.SessionID)
			require.Equal(t, "https://shop.example/done?payment_id="+s.PaymentID+"&status=succeeded", end.location)
			got := e.paymentOf(t, c, s.PaymentID)
			require.Equal(t, "succeeded", got.Status)
			require.Equal(t, 1, chargesFor(e, s.PaymentID))
			require.False(t, pr.saw("4242424242424242"))
		})

		t.Run("provider_redirect: the outcome is found without the payer", func(t *testing.T) {
			c, k := e.newClient("redirect-shop-2")
			require.NoError(t, e.merchants.Unassign(ctx, k.AccessKey, "sandbox"))
			require.NoError(t, e.merchants.Assign(ctx, k.AccessKey, "sandbox-redirect"))
			s := createSession(t, c, `{"order_id":"r-poll","amount_minor":700,"currency":"EUR"}`)
			pr := newPayer(t, e)
			at := pr.get(e.url + "/checkout/" + s.SessionID)
			pr.post(pr.get(at.location), at.location, cardForm("4242424242424242")) // the payer never comes back
			got := e.settle(c, s.PaymentID, "requires_action")
			require.Equal(t, "succeeded", got.Status)
		})
	})
}

// paymentOf reads a payment with key c.
func (e *env) paymentOf(t *testing.T, c *client.Client, id string) openapi.Payment {
	t.Helper()
	var p openapi.Payment
	require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payments/"+id, nil, &p))
	return p
}

func mergeForm(a, b url.Values) url.Values {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// awaitRedirect reloads the session's page until it redirects to prefix
// (a 3DS or provider page), and returns where.
func (p *payer) awaitRedirect(sessionID, prefix string) string {
	p.t.Helper()
	var location string
	p.e.await(0, func() error {
		pg := p.get(p.e.url + "/checkout/" + sessionID)
		if !strings.HasPrefix(pg.location, prefix) {
			return fmt.Errorf("session %s never sent the payer to %s (last: %d %s)", sessionID, prefix, pg.status, pg.location)
		}
		location = pg.location
		return nil
	})
	return location
}
