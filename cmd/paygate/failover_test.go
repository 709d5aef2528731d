package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/circuit"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestFailover: with two acquirers behind a key, a payment whose first
// acquirer cannot be reached, or declines for a reason another may not
// share, is tried once more on the next channel, each attempt visible;
// a decline of the card is final at once; after Threshold unreachable
// calls the first acquirer's circuit opens and new payments go straight
// to the next (docs/design/decisions.md section 17).
func TestFailover(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			env := dbEnv(t, db, filepath.Join(dir, "data"))
			srv := start(t, env)
			c := client.New(srv.url, srv.accessKey, srv.secret)
			c.Retries = 0

			// A standalone sandbox acquirer, and one nobody listens for.
			second, err := acquirer.Start(acquirer.Config{})
			require.NoError(t, err)
			t.Cleanup(func() { second.Close() })
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			down := "http://" + ln.Addr().String()
			ln.Close()
			keyFile := filepath.Join(dir, "key")
			require.NoError(t, os.WriteFile(keyFile, []byte(second.APIKey), 0o600))
			for name, url := range map[string]string{"down": down, "second": second.URL} {
				_, err := cli(t, env, "providers", "add", "--name", name, "--kind", "sandbox", "--url", url, "--api-key-file", keyFile)
				require.NoError(t, err)
				_, err = cli(t, env, "channels", "create", "--alias", name+"-card", "--provider", name, "--methods", "card", "--currencies", "USD")
				require.NoError(t, err)
			}

			attempts := func(id string) []openapi.PaymentAttempt {
				t.Helper()
				var list openapi.PaymentAttemptList
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+id+"/attempts", nil, &list))
				return list.Items
			}
			pay := func(number string) (openapi.Payment, []openapi.PaymentAttempt) {
				t.Helper()
				body := fmt.Sprintf(`{"order_id":"f-%d","amount_minor":700,"currency":"USD",%s,
					"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					time.Now().UnixNano(), stripeCustomer, number, time.Now().Year()+2)
				var p openapi.Payment
				require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p))
				require.Eventually(t, func() bool {
					require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &p))
					return p.Final
				}, 30*time.Second, 100*time.Millisecond)
				return p, attempts(p.PaymentID)
			}
			// tried: a payment that went to the first channel (its account
			// read by this process, every 2 s).
			firstTried := func(number, first string) (openapi.Payment, []openapi.PaymentAttempt) {
				t.Helper()
				var (
					p  openapi.Payment
					as []openapi.PaymentAttempt
				)
				require.Eventually(t, func() bool {
					p, as = pay(number)
					return as[0].Channel == first
				}, 20*time.Second, 300*time.Millisecond, "%s", srv.stderr.String())
				return p, as
			}

			// The first acquirer cannot be reached: the next one takes it.
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "down-card", "--position", "1")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "sandbox", "--position", "2")
			require.NoError(t, err)
			p, as := firstTried("5555555555554444", "down-card")
			require.Equal(t, "succeeded", p.Status)
			require.Len(t, as, 2)
			require.Equal(t, "down-card", as[0].Channel)
			require.Equal(t, "failed", as[0].Status)
			require.Equal(t, "provider_unreachable", as[0].Reason)
			require.Equal(t, "sandbox", as[1].Channel)
			require.Equal(t, "succeeded", as[1].Status)
			require.Empty(t, as[1].Reason, "no reason on the last attempt")

			// Unreachable again and again: the circuit opens, and new
			// payments go straight to the next channel.
			reroutes := 1
			for reroutes < circuit.Threshold {
				_, as := pay("5555555555554444")
				require.Len(t, as, 2, "%s", srv.stderr.String())
				reroutes++
			}
			p, as = pay("5555555555554444")
			require.Equal(t, "succeeded", p.Status)
			require.Len(t, as, 1, "the open circuit skips the channel: %+v", as)
			require.Equal(t, "sandbox", as[0].Channel)

			// The metrics show it, per channel and its account.
			res, err := http.Get(srv.url + "/metrics")
			require.NoError(t, err)
			metrics, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Contains(t, string(metrics), `paygate_payment_reroutes_total{channel="down-card",provider="down",reason="provider_unreachable"} 5`)
			require.Contains(t, string(metrics), `paygate_provider_circuit_open{provider="down"} 1`)
			require.Contains(t, string(metrics), `paygate_channel_circuit_open{channel="down-card",provider="down"} 1`)
			require.Contains(t, string(metrics), `paygate_channel_circuit_open{channel="second-card",provider="second"} 0`)
			require.Regexp(t, `paygate_payment_attempts_total\{channel="sandbox",outcome="succeeded",provider="sandbox"\} \d+`, string(metrics))
			require.Contains(t, string(metrics), `paygate_payment_attempts_total{channel="down-card",outcome="failed",provider="down"} 5`)

			// A decline another acquirer may not share (the sandbox's
			// processing_error) is tried once more; a card's decline is final.
			_, err = cli(t, env, "channels", "unassign", "--key", srv.accessKey, "--channel", "down-card")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "second-card", "--position", "1")
			require.NoError(t, err)
			// The next channel takes only cards issued in the US, as the
			// BIN base says the test cards are: its conditions apply to
			// the second attempt as to a first.
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "sandbox", "--position", "2", "--card-countries", "US")
			require.NoError(t, err)
			p, as = firstTried("4000000000000119", "second-card")
			require.Equal(t, "failed", p.Status)
			require.Len(t, as, 2, "at most one more attempt")
			require.Equal(t, "soft_decline", as[0].Reason)
			require.Equal(t, "processing_error", as[0].DeclineCode)
			require.Equal(t, "sandbox", as[1].Channel)
			// A channel whose conditions refuse the card is no next channel.
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "sandbox", "--position", "2", "--card-countries", "GB")
			require.NoError(t, err)
			p, as = pay("4000000000000119")
			require.Equal(t, "failed", p.Status)
			require.Len(t, as, 1, "the sandbox channel takes GB cards only: %+v", as)
			require.Equal(t, "second-card", as[0].Channel)
			p, as = pay("4000000000000002")
			require.Equal(t, "declined", p.Status)
			require.Len(t, as, 1, "a card's decline is not tried elsewhere")
			require.Equal(t, "second-card", as[0].Channel)
			p, as = pay("4242424242424242")
			require.Equal(t, "succeeded", p.Status)
			require.Len(t, as, 1)
			require.Equal(t, "second-card", as[0].Channel)

			// A saved card belongs to the account that issued its token: a
			// payout to it goes there, though another channel comes first.
			body := fmt.Sprintf(`{"order_id":"f-save","amount_minor":600,"currency":"USD","customer_reference":"payee-1",
				"save_payment_method":true,%s,
				"payment_method":{"type":"card","card":{"number":"4242424242424242","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
				stripeCustomer, time.Now().Year()+2)
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p))
			require.Eventually(t, func() bool {
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &p))
				return p.Final
			}, 30*time.Second, 100*time.Millisecond)
			require.Equal(t, "succeeded", p.Status)
			require.NotEmpty(t, p.SavedCardID)
			as = attempts(p.PaymentID)
			require.Equal(t, "second-card", as[0].Channel)
			for _, a := range [][]string{{"sandbox", "1"}, {"second-card", "2"}} {
				_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", a[0], "--position", a[1])
				require.NoError(t, err)
			}
			var po openapi.Payout
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payouts", json.RawMessage(`{"order_id":"f-po","amount_minor":500,
				"currency":"USD","account":"main","payout_method":{"type":"card","saved_card_id":"`+p.SavedCardID+`"}}`), &po))
			require.Eventually(t, func() bool {
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payouts/"+po.PayoutID, nil, &po))
				return po.Final
			}, 30*time.Second, 100*time.Millisecond)
			require.Equal(t, "succeeded", po.Status)
			for _, a := range [][]string{{"second-card", "1"}, {"sandbox", "2"}} {
				_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", a[0], "--position", a[1])
				require.NoError(t, err)
			}

			// Follow-ups stay with the attempt that was accepted.
			body = fmt.Sprintf(`{"order_id":"f-auth","amount_minor":900,"currency":"USD","operation_mode":"authorize",%s,
				"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
				stripeCustomer, time.Now().Year()+2)
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p))
			require.Eventually(t, func() bool {
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &p))
				return p.Status == "authorized"
			}, time.Minute, 100*time.Millisecond)
			_, err = cli(t, env, "providers", "disable", "second")
			require.NoError(t, err)
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+p.PaymentID+"/capture", nil, &p))
			require.Eventually(t, func() bool {
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &p))
				return p.Status == "succeeded"
			}, time.Minute, 20*time.Millisecond, "captured on its own, disabled, account")
			entries, err := sandbox.NewAdapter(second.URL, second.APIKey, nil).Ledger(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, entries)
		})
	}
}
