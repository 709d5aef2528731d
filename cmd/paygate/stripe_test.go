package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/stripe/stripetest"
	"github.com/paygate/paygate/internal/store/storetest"
)

const stripeCustomer = `"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com",
	"billing_address":{"country":"GB","line1":"1 Street"}}`

// TestStripeEndToEnd puts a Stripe account (the fake, every answer
// validated against Stripe's document) behind a key with the three
// commands of docs/providers/stripe.md and takes payments through the
// unchanged client API, on both databases: a direct payment with 3DS
// finished by Stripe's notification (no poll awaited), authorize → partial
// capture → partial refund, a hosted payment on a provider_redirect
// channel, a lost answer that ends in one charge, and notifications that
// cannot be trusted (unsigned, forged, stale) refused with nothing done
// (docs/design/decisions.md section 16).
func TestStripeEndToEnd(t *testing.T) {
	v, err := stripetest.NewValidator()
	require.NoError(t, err)
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			fake := stripetest.NewFake(t)
			fake.Answered = func(method, path string, status int, body []byte) {
				if err := v.Check(method, path, status, body); err != nil {
					t.Errorf("the fake drifted from Stripe: %v", err)
				}
			}
			dir := t.TempDir()
			env := dbEnv(t, db, filepath.Join(dir, "data"))
			const whsec = "whsec_e2e_secret"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "sk"), []byte("sk_test_e2e_secret_key\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "whsec"), []byte(whsec), 0o600))
			srv := start(t, env)

			// The three commands: an account, a channel, the key's first.
			out, err := cli(t, env, "providers", "add", "--name", "stripe", "--kind", "stripe", "--secret-key-file",
				filepath.Join(dir, "sk"), "--webhook-secret-file", filepath.Join(dir, "whsec"), "--base-url", fake.URL)
			require.NoError(t, err)
			require.NotContains(t, out, "sk_test_e2e_secret_key")
			_, err = cli(t, env, "channels", "create", "--alias", "stripe-card", "--provider", "stripe",
				"--methods", "card", "--currencies", "USD,EUR")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "create", "--alias", "stripe-hosted", "--provider", "stripe",
				"--methods", "card", "--currencies", "USD", "--checkout-mode", "provider_redirect")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "create", "--alias", "stripe-kwd", "--provider", "stripe",
				"--methods", "card", "--currencies", "KWD")
			require.ErrorContains(t, err, "KWD", "a currency Stripe cannot take exactly is refused")
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "1")
			require.NoError(t, err)
			// The Stripe channel alone, until the routing rules below: a
			// channel whose account this process has not read yet is no
			// candidate, and the payment would go to the next.
			_, err = cli(t, env, "channels", "unassign", "--key", srv.accessKey, "--channel", "sandbox")
			require.NoError(t, err)

			c := client.New(srv.url, srv.accessKey, srv.secret)
			c.Retries = 0
			// Every process sees an account within seconds (the registry's
			// refresh): wait for this one's.
			var channels openapi.PaymentChannelList
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &channels))
			require.Equal(t, "stripe-card", channels.Items[0].Alias)
			require.Len(t, channels.Items, 1)
			get := func(id string) openapi.Payment {
				var p openapi.Payment
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+id, nil, &p))
				return p
			}
			await := func(id string, status string) openapi.Payment {
				t.Helper()
				var p openapi.Payment
				require.Eventually(t, func() bool { p = get(id); return p.Status == status }, time.Minute, 20*time.Millisecond,
					"payment %s never became %s", id, status)
				return p
			}
			direct := func(order, number, extra string) openapi.Payment {
				t.Helper()
				body := fmt.Sprintf(`{"order_id":%q,"amount_minor":5000,"currency":"USD",%s,"return_url":"https://shop.example/back",%s
					"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					order, stripeCustomer, extra, number, time.Now().Year()+2)
				var p openapi.Payment
				var last error
				require.Eventually(t, func() bool {
					last = c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p)
					// Until this process has read the account (every 2 s),
					// its channel is no candidate: 422.
					return !client.IsCode(last, "channel_not_available")
				}, 10*time.Second, 50*time.Millisecond, "%v", last)
				require.NoError(t, last)
				return p
			}

			// 3DS, finished by the notification.
			p := direct("s-3ds", "4000002500003155", "")
			p = await(p.PaymentID, "requires_action")
			require.NotNil(t, p.NextAction)
			require.True(t, strings.HasPrefix(p.NextAction.URL, fake.URL+"/3ds/"), p.NextAction.URL)
			pi := strings.TrimPrefix(p.NextAction.URL, fake.URL+"/3ds/")
			require.NoError(t, fake.Authenticate(pi, true))
			events := fake.Events()
			notify := srv.url + "/providers/stripe/webhooks"

			// Untrusted notifications change nothing.
			last := events[len(events)-1]
			for name, sig := range map[string]string{
				"unsigned": "",
				"forged":   stripetest.Sign(last, "whsec_not_ours", time.Now()),
				"stale":    stripetest.Sign(last, whsec, time.Now().Add(-10*time.Minute)),
			} {
				req, _ := http.NewRequest(http.MethodPost, notify, strings.NewReader(string(last)))
				if sig != "" {
					req.Header.Set("Stripe-Signature", sig)
				}
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				res.Body.Close()
				require.Equal(t, http.StatusBadRequest, res.StatusCode, name)
				require.Equal(t, "requires_action", get(p.PaymentID).Status, name)
			}
			status, err := fake.Notify(notify, whsec, last)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, "succeeded", get(p.PaymentID).Status, "applied within the notification's request, no poll awaited")
			status, err = fake.Notify(notify, whsec, last)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status, "a replay is harmless")
			require.Equal(t, 1, fake.Moves(pi))

			// Authorize, capture part, refund part of that.
			p = direct("s-auth", "5555555555554444", `"operation_mode":"authorize",`)
			p = await(p.PaymentID, "authorized")
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+p.PaymentID+"/capture", json.RawMessage(`{"amount_minor":3000}`), &p))
			p = await(p.PaymentID, "succeeded")
			require.EqualValues(t, 3000, *p.CapturedAmountMinor)
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+p.PaymentID+"/refunds", json.RawMessage(`{"amount_minor":1000}`), &p))
			p = await(p.PaymentID, "partially_refunded")
			var refunds struct {
				Items []struct {
					AmountMinor int64  `json:"amount_minor"`
					Status      string `json:"status"`
				} `json:"items"`
			}
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID+"/refunds", nil, &refunds))
			require.Len(t, refunds.Items, 1)
			require.EqualValues(t, 1000, refunds.Items[0].AmountMinor)
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+p.PaymentID+"/refunds", nil, &p))
			p = await(p.PaymentID, "refunded")

			// A lost answer ends in one charge.
			fake.Inject(stripetest.Fault{Path: "/v1/payment_intents", Times: 1, Mode: stripetest.LoseAnswer})
			p = direct("s-lost", "5555555555554444", "")
			p = await(p.PaymentID, "succeeded")
			charges := 0
			for _, m := range fake.Ledger() {
				if m.Kind == "charge" && m.AmountMinor == 5000 {
					charges++
				}
			}
			require.Equal(t, 2, charges, "the 3DS payment and the lost one, once (the authorized one was a hold)")

			// Routing rules: the Stripe channel takes only Visa cards now;
			// a Mastercard payment goes to the next channel, the sandbox.
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "sandbox")
			require.NoError(t, err)
			out, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "1",
				"--schemes", "visa")
			require.NoError(t, err)
			out, err = cli(t, env, "channels", "list", "--key", srv.accessKey)
			require.NoError(t, err)
			require.Regexp(t, `1\s+stripe-card\s+stripe/default.*enabled\s+schemes visa`, out)
			before := len(fake.Ledger())
			p = direct("s-routed", "5555555555554444", "")
			p = await(p.PaymentID, "succeeded")
			require.Len(t, fake.Ledger(), before, "the Mastercard payment went to the sandbox")
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "1")
			require.NoError(t, err)

			// A decline is the payment's decline code.
			p = direct("s-declined", "4000000000009995", "")
			p = await(p.PaymentID, "declined")
			require.Equal(t, "insufficient_funds", p.Decline.Code)

			// A hosted payment on a provider_redirect channel.
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-hosted", "--position", "1")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "2")
			require.NoError(t, err)
			var sess openapi.Payment
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payment-sessions",
				json.RawMessage(`{"order_id":"s-hosted","amount_minor":2500,"currency":"USD","locale":"en","return_url":"https://shop.example/back"}`), &sess))
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := noRedirect.Get(sess.CheckoutURL)
			require.NoError(t, err)
			res.Body.Close()
			to := res.Header.Get("Location")
			require.Equal(t, http.StatusSeeOther, res.StatusCode,
				"an account added while serve runs is among the page's origins within seconds")
			require.True(t, strings.HasPrefix(to, fake.URL+"/pay/cs_"), "the checkout sends the payer to Stripe's page: %d %s", res.StatusCode, to)
			back, err := fake.PaySession(strings.TrimPrefix(to, fake.URL+"/pay/"), "4242424242424242")
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(back, srv.url), back)
			events = fake.Events()
			status, err = fake.Notify(notify, whsec, events[len(events)-1])
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, "succeeded", get(sess.PaymentID).Status)

			// A subscription on Stripe: the consent payment saves the card on
			// the payer's Customer; the next period is charged off session.
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "1")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "stripe-hosted", "--position", "3")
			require.NoError(t, err)
			firstAt := time.Now().Add(time.Hour).UTC()
			p = direct("s-sub", "5555555555554444", fmt.Sprintf(`"customer_reference":"payer-1","subscription":{"interval_unit":"day",
				"interval_count":1,"first_charge_at":%q,"disclosure_version":"v1"},`, firstAt.Format(time.RFC3339)))
			p = await(p.PaymentID, "succeeded")
			require.NotEmpty(t, p.SubscriptionID)
			// A 3DS step nobody finishes: the advance below takes it past
			// its hour, and the PaymentIntent is canceled at Stripe before
			// the payment expires (docs/payments.md, "The payer's step
			// expires").
			left := await(direct("s-abandon", "4000002500003155", "").PaymentID, "requires_action")
			leftPI := strings.TrimPrefix(left.NextAction.URL, fake.URL+"/3ds/")
			advance := map[string]any{"to": firstAt.Add(time.Hour).Format(time.RFC3339)}
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/sandbox/clock/advance", advance, nil))
			var sub openapi.Subscription
			require.Eventually(t, func() bool {
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/subscriptions/"+p.SubscriptionID, nil, &sub))
				return sub.NextPeriod == 1
			}, time.Minute, 20*time.Millisecond)
			require.Equal(t, "active", sub.Status)
			var list openapi.PaymentList
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments?customer_reference=payer-1", nil, &list))
			charged := 0
			for _, q := range list.Items {
				if q.SubscriptionPeriod != nil {
					require.Equal(t, "succeeded", q.Status)
					charged++
				}
			}
			require.Equal(t, 1, charged, "period 0, charged once, off session")
			await(left.PaymentID, "expired")
			require.Contains(t, fake.Requests(), "POST /v1/payment_intents/"+leftPI+"/cancel")
			require.Error(t, fake.Authenticate(leftPI, true), "the payer coming back finds the PaymentIntent canceled")
			require.Zero(t, fake.Moves(leftPI))

			// No secret of the account, no card number, anywhere: the
			// server's log (debug), the database.
			text := srv.stdout.String() + srv.stderr.String() + databaseText(t, db.Name, env)
			for _, secret := range []string{"sk_test_e2e_secret_key", whsec, "5555555555554444", "4000002500003155", "4000000000009995"} {
				require.NotContains(t, text, secret)
			}
		})
	}
}
