package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/stripe/stripetest"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestReconcileStripe: a day of real payments on a Stripe account (the
// fake, every answer validated against Stripe's document) reconciles
// against Stripe's balance transactions: a charge, an authorization
// captured in part, a refund and a canceled authorization match, their
// holds and release not compared (Stripe has no balance transaction for
// them); then every break planted at Stripe behind Paygate's back is
// found with both sides: a charge Paygate never made, a duplicate, an
// amount and a currency that differ, a capture Stripe does not have
// (docs/design/decisions.md section 18; docs/providers/stripe.md,
// "Reconciliation").
func TestReconcileStripe(t *testing.T) {
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
			require.NoError(t, os.WriteFile(filepath.Join(dir, "sk"), []byte("sk_test_reconcile\n"), 0o600))
			srv := start(t, env)
			for _, args := range [][]string{
				{"providers", "add", "--name", "stripe", "--kind", "stripe", "--secret-key-file", filepath.Join(dir, "sk"), "--base-url", fake.URL},
				{"channels", "create", "--alias", "stripe-card", "--provider", "stripe", "--methods", "card", "--currencies", "USD"},
				{"channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "1"},
				{"channels", "unassign", "--key", srv.accessKey, "--channel", "sandbox"},
			} {
				_, err := cli(t, env, args...)
				require.NoError(t, err, "%v", args)
			}

			c := client.New(srv.url, srv.accessKey, srv.secret)
			c.Retries = 0
			const number = "4242424242424242"
			await := func(id, status string) {
				t.Helper()
				var p openapi.Payment
				require.Eventually(t, func() bool {
					require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+id, nil, &p))
					return p.Status == status
				}, 30*time.Second, 50*time.Millisecond, "payment %s never became %s", id, status)
			}
			pay := func(order, mode string, amount int64) openapi.Payment {
				t.Helper()
				body := fmt.Sprintf(`{"order_id":%q,"amount_minor":%d,"currency":"USD","operation_mode":%q,%s,
					"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					order, amount, mode, stripeCustomer, number, time.Now().Year()+2)
				var p openapi.Payment
				var last error
				require.Eventually(t, func() bool {
					last = c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p)
					return !client.IsCode(last, "channel_not_available") // until serve has read the account
				}, 10*time.Second, 100*time.Millisecond)
				require.NoError(t, last)
				return p
			}
			// Each payment's amount is its own, so that its balance
			// transactions are found by amount.
			charged := pay("rs-charge", "charge", 1500)
			held := pay("rs-capture", "authorize", 2500)
			canceled := pay("rs-cancel", "authorize", 3500)
			await(charged.PaymentID, "succeeded")
			await(held.PaymentID, "authorized")
			await(canceled.PaymentID, "authorized")
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+held.PaymentID+"/capture", json.RawMessage(`{"amount_minor":1000}`), nil))
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+charged.PaymentID+"/refunds", json.RawMessage(`{"amount_minor":500}`), nil))
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+canceled.PaymentID+"/cancel", nil, nil))
			await(held.PaymentID, "succeeded")
			await(charged.PaymentID, "partially_refunded")
			await(canceled.PaymentID, "canceled")
			balance := func(amount int64) stripetest.Balance {
				t.Helper()
				for _, b := range fake.Balances() {
					if b.AmountMinor == amount {
						return b
					}
				}
				t.Fatalf("Stripe has no balance transaction of %d: %+v", amount, fake.Balances())
				return stripetest.Balance{}
			}
			require.Len(t, fake.Balances(), 3, "a charge, a capture, a refund: a hold and its release move no balance")
			charge, capture := balance(1500), balance(1000)
			require.Equal(t, int64(-500), balance(-500).AmountMinor)

			today := time.Now().UTC().Format(time.DateOnly)
			run := func() (report, string, error) {
				t.Helper()
				out, err := cli(t, env, "reconcile", "--provider", "stripe", "--date", today, "--json")
				var r report
				require.NoError(t, json.Unmarshal([]byte(out), &r), out)
				require.NotContains(t, out, number, "no card number in a report")
				require.NotContains(t, out, number[:6]+"******"+number[12:])
				return r, out, err
			}

			first, out, err := run()
			require.Equal(t, 3, first.Matched, "the charge, the capture and the refund match Stripe's: %s", out)
			require.Equal(t, stripetest.Fee(1500)+stripetest.Fee(1000), first.FeesMinor, "Stripe's fees, reported")
			require.Zero(t, first.ByKind["missing_in_paygate"], out)
			// Holds and the release move no balance at Stripe: not compared.
			require.NoError(t, err, "a clean day: exit 0\n%s", out)
			require.Empty(t, first.Breaks, out)
			require.Equal(t, 3, first.AtProvider)
			require.Equal(t, 3, first.Paygate, "the charge, the capture and the refund; no hold, no release")

			// Breaks planted at Stripe behind Paygate's back.
			amount := pay("rs-amount", "charge", 1700)
			currency := pay("rs-currency", "charge", 1900)
			await(amount.PaymentID, "succeeded")
			await(currency.PaymentID, "succeeded")
			behind := fake.Plant(stripetest.Plant{AmountMinor: 4200, Currency: "usd"})
			duplicate := fake.Plant(stripetest.Plant{PaymentIntent: charge.PaymentIntent, AmountMinor: 1500, Currency: "usd"})
			was := balance(1700)
			require.True(t, fake.Drop(was.ID))
			differs := fake.Plant(stripetest.Plant{PaymentIntent: was.PaymentIntent, AmountMinor: 1701, Currency: "usd"})
			was = balance(1900)
			require.True(t, fake.Drop(was.ID))
			other := fake.Plant(stripetest.Plant{PaymentIntent: was.PaymentIntent, AmountMinor: 1900, Currency: "eur"})
			require.True(t, fake.Drop(capture.ID))

			planted, out, err := run()
			require.ErrorAs(t, err, new(breaksFound), "breaks: exit 1\n%s", out)
			found := map[string]breakRow{}
			for _, b := range planted.Breaks {
				_, twice := found[b.Kind]
				require.False(t, twice, "one %s: %s", b.Kind, out)
				found[b.Kind] = b
			}
			require.Len(t, found, 5, out)
			b := found["missing_in_paygate"]
			require.Nil(t, b.Paygate)
			require.Equal(t, sideView{Kind: "charge", AmountMinor: 4200, Currency: "USD", At: b.Provider.At, Ref: behind}, *b.Provider)
			b = found["duplicate_at_provider"]
			require.Equal(t, charged.PaymentID, b.PaymentID, "linked to its payment")
			require.Equal(t, "charge", b.Paygate.Kind)
			require.Equal(t, int64(1500), b.Paygate.AmountMinor)
			require.Contains(t, []string{charge.ID, duplicate}, b.Provider.Ref)
			require.Equal(t, int64(1500), b.Provider.AmountMinor)
			b = found["amount_mismatch"]
			require.Equal(t, amount.PaymentID, b.PaymentID)
			require.Equal(t, int64(1700), b.Paygate.AmountMinor)
			require.Equal(t, sideView{Kind: "charge", AmountMinor: 1701, Currency: "USD", At: b.Provider.At, Ref: differs}, *b.Provider)
			b = found["currency_mismatch"]
			require.Equal(t, currency.PaymentID, b.PaymentID)
			require.Equal(t, "USD", b.Paygate.Currency)
			require.Equal(t, sideView{Kind: "charge", AmountMinor: 1900, Currency: "EUR", At: b.Provider.At, Ref: other}, *b.Provider)
			b = found["missing_at_provider"]
			require.Equal(t, held.PaymentID, b.PaymentID, "Paygate's capture, missing at Stripe")
			require.Equal(t, "capture", b.Paygate.Kind)
			require.Equal(t, int64(1000), b.Paygate.AmountMinor)
			require.Nil(t, b.Provider)
			require.Equal(t, map[string]int{"missing_at_provider": 1, "missing_in_paygate": 1, "amount_mismatch": 1,
				"currency_mismatch": 1, "status_mismatch": 0, "duplicate_at_provider": 1}, planted.ByKind, out)
			require.Equal(t, 1, planted.Matched, "the refund: the rest are breaks")
		})
	}
}
