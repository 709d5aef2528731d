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

// TestFailoverStripeBesideSandbox: Stripe (the fake) first, the sandbox
// second, behind one key. A decline Stripe marks reroutable is tried once
// on the sandbox; a card's decline is not; once Stripe goes down, new
// payments succeed on the sandbox, each charged once, with their attempts
// visible; a hold taken on Stripe before is still captured there, never on
// the sandbox (docs/design/decisions.md section 17).
func TestFailoverStripeBesideSandbox(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			fake := stripetest.NewFake(t)
			dir := t.TempDir()
			env := dbEnv(t, db, filepath.Join(dir, "data"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "sk"), []byte("sk_test_failover"), 0o600))
			srv := start(t, env)
			for _, args := range [][]string{
				{"providers", "add", "--name", "stripe", "--kind", "stripe", "--secret-key-file", filepath.Join(dir, "sk"), "--base-url", fake.URL},
				{"channels", "create", "--alias", "stripe-card", "--provider", "stripe", "--methods", "card", "--currencies", "USD"},
				{"channels", "assign", "--key", srv.accessKey, "--channel", "stripe-card", "--position", "1"},
				{"channels", "assign", "--key", srv.accessKey, "--channel", "sandbox", "--position", "2"},
			} {
				_, err := cli(t, env, args...)
				require.NoError(t, err, "%v", args)
			}
			c := client.New(srv.url, srv.accessKey, srv.secret)
			c.Retries = 0
			pay := func(number, mode string) (openapi.Payment, []openapi.PaymentAttempt) {
				t.Helper()
				body := fmt.Sprintf(`{"order_id":"fs-%d","amount_minor":2100,"currency":"USD","operation_mode":%q,%s,
					"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					time.Now().UnixNano(), mode, stripeCustomer, number, time.Now().Year()+2)
				var p openapi.Payment
				require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p))
				require.Eventually(t, func() bool {
					require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &p))
					return p.Final || p.Status == "authorized"
				}, 30*time.Second, 100*time.Millisecond)
				var list openapi.PaymentAttemptList
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID+"/attempts", nil, &list))
				return p, list.Items
			}
			// Until serve has read the account, payments go to the sandbox.
			var (
				p  openapi.Payment
				as []openapi.PaymentAttempt
			)
			require.Eventually(t, func() bool {
				p, as = pay("5555555555554444", "authorize")
				return as[0].Channel == "stripe-card"
			}, 20*time.Second, 300*time.Millisecond)
			require.Equal(t, "authorized", p.Status)
			require.Len(t, as, 1)
			held := p

			// A decline Stripe marks reroutable: once more on the sandbox.
			p, as = pay("4000000000000119", "charge")
			require.Len(t, as, 2, "%+v", as)
			require.Equal(t, "stripe-card", as[0].Channel)
			require.Equal(t, "soft_decline", as[0].Reason)
			require.Equal(t, "sandbox", as[1].Channel)
			// A card's decline: final at once.
			p, as = pay("4000000000000002", "charge")
			require.Equal(t, "declined", p.Status)
			require.Len(t, as, 1)

			// Stripe goes down: new payments succeed on the sandbox.
			charges := len(fake.Ledger())
			fake.Close()
			for range 3 {
				p, as = pay("5555555555554444", "charge")
				require.Equal(t, "succeeded", p.Status)
				require.Equal(t, "sandbox", as[len(as)-1].Channel)
				if len(as) == 2 {
					require.Equal(t, "provider_unreachable", as[0].Reason)
				}
			}
			require.Len(t, fake.Ledger(), charges, "nothing more moved at Stripe")

			// The hold taken on Stripe stays there: its capture waits for
			// Stripe, never goes to the sandbox.
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+held.PaymentID+"/capture", nil, &p))
			var after openapi.PaymentAttemptList
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+held.PaymentID+"/attempts", nil, &after))
			require.Len(t, after.Items, 1)
			require.Equal(t, "stripe-card", after.Items[0].Channel)
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+held.PaymentID, nil, &p))
			require.Equal(t, "authorized", p.Status, "the capture waits for its own acquirer")
		})
	}
}
