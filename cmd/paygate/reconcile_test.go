package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/account"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
)

// TestReconcile: a day of real payments on a standalone sandbox account
// reconciles clean (exit 0); a day with every kind of break planted on
// both sides (behind Paygate's back at the acquirer, and in Paygate's own
// records) finds each, with both sides, and an entry across midnight
// pending, not a break (exit 1); a day run again replaces its result; two
// runs never hold one day at once (docs/design/decisions.md section 18).
func TestReconcile(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			env := dbEnv(t, db, filepath.Join(dir, "data"))
			srv := start(t, env)
			acq, err := acquirer.Start(acquirer.Config{})
			require.NoError(t, err)
			t.Cleanup(func() { acq.Close() })
			keyFile := filepath.Join(dir, "key")
			require.NoError(t, os.WriteFile(keyFile, []byte(acq.APIKey), 0o600))
			_, err = cli(t, env, "providers", "add", "--name", "acq", "--kind", "sandbox", "--url", acq.URL, "--api-key-file", keyFile)
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "create", "--alias", "acq-card", "--provider", "acq", "--methods", "card", "--currencies", "USD,EUR")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "assign", "--key", srv.accessKey, "--channel", "acq-card", "--position", "1")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "unassign", "--key", srv.accessKey, "--channel", "sandbox")
			require.NoError(t, err)

			// A charge, a hold captured in part, a hold canceled.
			c := client.New(srv.url, srv.accessKey, srv.secret)
			c.Retries = 0
			pay := func(order, mode string) openapi.Payment {
				body := fmt.Sprintf(`{"order_id":%q,"amount_minor":1500,"currency":"USD","operation_mode":%q,%s,
					"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					order, mode, stripeCustomer, time.Now().Year()+2)
				var p openapi.Payment
				var last error
				require.Eventually(t, func() bool {
					last = c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p)
					return !client.IsCode(last, "channel_not_available") // until serve has read the account
				}, 10*time.Second, 100*time.Millisecond)
				require.NoError(t, last)
				return p
			}
			await := func(id, status string) {
				var p openapi.Payment
				require.Eventually(t, func() bool {
					require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+id, nil, &p))
					return p.Status == status
				}, 30*time.Second, 100*time.Millisecond)
			}
			charged := pay("r-charge", "charge")
			held := pay("r-capture", "authorize")
			canceled := pay("r-cancel", "authorize")
			await(charged.PaymentID, "succeeded")
			await(held.PaymentID, "authorized")
			await(canceled.PaymentID, "authorized")
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+held.PaymentID+"/capture", json.RawMessage(`{"amount_minor":1000}`), nil))
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/"+canceled.PaymentID+"/cancel", nil, nil))
			await(held.PaymentID, "succeeded")
			await(canceled.PaymentID, "canceled")

			today := time.Now().UTC().Format(time.DateOnly)
			out, err := cli(t, env, "reconcile", "--provider", "acq", "--date", today, "--json")
			require.NoError(t, err, "a clean day: exit 0\n%s", out)
			var clean report
			require.NoError(t, json.Unmarshal([]byte(out), &clean))
			require.Equal(t, 5, clean.Matched, "a charge, two holds, a capture and a release: %s", out)
			require.Empty(t, clean.Breaks)
			_, err = cli(t, env, "reconcile", "--provider", "sandbox", "--date", today)
			require.Error(t, err, "the built-in sandbox lives inside serve: nothing to read from here")
			_, err = cli(t, env, "reconcile", "--provider", "acq", "--date", "15-01-2026")
			require.ErrorAs(t, err, new(usageError))

			// A planted day.
			require.NoError(t, srv.stop())
			st, err := store.Open(ctx, store.Config{DatabaseURL: env["PAYGATE_DATABASE_URL"],
				SQLitePath: filepath.Join(env["PAYGATE_DATA_DIR"], "paygate.db")})
			require.NoError(t, err)
			defer st.Close()
			key, err := st.FindKeyByAccessKey(ctx, srv.accessKey)
			require.NoError(t, err)
			ch, err := st.FindChannelByAlias(ctx, "acq-card")
			require.NoError(t, err)
			// Tomorrow: the latest day reconciled, after the daily job's
			// yesterday.
			day := reconcile.Day(time.Now().Add(24 * time.Hour))
			dayText := day.Format(time.DateOnly)
			noon := day.Add(12 * time.Hour)
			ours := func(op, kind string, amount int64, currency string, at time.Time) {
				p := &payment.Payment{ID: uuid.NewString(), AccessKeyID: key.ID, ChannelID: ch.ID, Kind: payment.KindDirect,
					Status: payment.Succeeded, OrderID: "planted-" + op, AmountMinor: amount, Currency: currency, Locale: "en",
					OperationMode: payment.ModeCharge, Method: "card", CreatedAt: at, UpdatedAt: at}
				require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
					if err := tx.CreatePayment(ctx, p); err != nil {
						return err
					}
					return tx.CreateOperation(ctx, &operation.Operation{ID: op, Resource: payment.Resource, ResourceID: p.ID,
						Kind: kind, State: operation.Done, Result: "succeeded", AmountMinor: amount, CreatedAt: at, UpdatedAt: at}, nil)
				}))
			}
			ledger := sandbox.NewAdapter(acq.URL, acq.APIKey, nil)
			theirs := func(op, kind string, amount int64, currency string, at time.Time) {
				_, err := ledger.Plant(ctx, wire.Entry{Kind: kind, OperationID: op, ResourceID: "planted", AmountMinor: amount,
					Currency: currency, At: at, CardMask: "555555******4444"})
				require.NoError(t, err)
			}
			ours("op-match", payment.OpPay, 900, "USD", noon)
			theirs("op-match", wire.EntryCharge, 900, "USD", noon)
			ours("op-missing", payment.OpPay, 900, "USD", noon)
			ours("op-amount", payment.OpPay, 900, "USD", noon)
			theirs("op-amount", wire.EntryCharge, 901, "USD", noon)
			ours("op-currency", payment.OpPay, 900, "USD", noon)
			theirs("op-currency", wire.EntryCharge, 900, "EUR", noon)
			ours("op-status", payment.OpPay, 900, "USD", noon)
			theirs("op-status", wire.EntryHold, 900, "USD", noon)
			ours("op-dup", payment.OpPay, 900, "USD", noon)
			theirs("op-dup", wire.EntryCharge, 900, "USD", noon)
			theirs("op-dup", wire.EntryCharge, 900, "USD", noon.Add(time.Minute))
			theirs("op-behind-our-back", wire.EntryCharge, 4200, "USD", noon)
			ours("op-midnight", payment.OpPay, 700, "USD", day.Add(23*time.Hour+50*time.Minute))
			theirs("op-midnight", wire.EntryCharge, 700, "USD", day.Add(24*time.Hour+5*time.Minute))

			var planted report
			for range 2 { // run again: the day's result is replaced, not added to
				out, err = cli(t, env, "reconcile", "--provider", "acq", "--date", dayText, "--json")
				require.ErrorAs(t, err, new(breaksFound), "breaks: exit 1")
				require.NoError(t, json.Unmarshal([]byte(out), &planted))
			}
			require.Equal(t, map[string]int{"missing_at_provider": 1, "missing_in_paygate": 1, "amount_mismatch": 1,
				"currency_mismatch": 1, "status_mismatch": 1, "duplicate_at_provider": 1}, planted.ByKind)
			require.Equal(t, 1, planted.Matched)
			require.Equal(t, 1, planted.Pending, "the entry across midnight")
			for _, b := range planted.Breaks {
				switch b.Kind {
				case "missing_at_provider":
					require.Nil(t, b.Provider)
					require.Equal(t, "op-missing", b.OperationID)
					require.NotEmpty(t, b.PaymentID, "linked to its payment")
				case "missing_in_paygate":
					require.Nil(t, b.Paygate)
					require.Equal(t, int64(4200), b.Provider.AmountMinor)
				case "amount_mismatch":
					require.Equal(t, int64(900), b.Paygate.AmountMinor)
					require.Equal(t, int64(901), b.Provider.AmountMinor)
				}
			}
			require.NotContains(t, out, "4444", "no card data in a report")
			stored, err := st.ReconciliationBreaks(ctx, "acq", day)
			require.NoError(t, err)
			require.Len(t, stored, 6, "the day's breaks, stored once")

			// The metrics count the latest reconciliation's breaks by kind.
			metrics := start(t, env)
			res, err := http.Get(metrics.url + "/metrics")
			require.NoError(t, err)
			text, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Contains(t, string(text), `paygate_reconciliation_breaks{day="`+dayText+`",kind="duplicate_at_provider",provider="acq"} 1`)
			require.Contains(t, string(text), `paygate_reconciliation_breaks{day="`+dayText+`",kind="missing_in_paygate",provider="acq"} 1`)
			require.NoError(t, metrics.stop())

			// The daily job reconciles each account's last closed day, once.
			kr, err := vault.Load(filepath.Join(env["PAYGATE_DATA_DIR"], "master.key"))
			require.NoError(t, err)
			reg := account.NewRegistry(nil, st, kr, app.Kinds(), http.DefaultClient, nil, slog.New(slog.DiscardHandler))
			require.NoError(t, reg.Reload(ctx))
			daily := &reconcile.DailyWorker{Service: reconcile.NewService(st, reg, time.Now), Accounts: st, Done: st}
			require.NoError(t, daily.Due(ctx))
			closed := reconcile.Day(time.Now().Add(-24*time.Hour - reconcile.Lag))
			done, err := st.ReconciliationDone(ctx, "acq", closed)
			require.NoError(t, err)
			require.True(t, done, "the daily reconciliation of %s", closed.Format(time.DateOnly))
			require.NoError(t, daily.Due(ctx), "once: a day done is not run again")

			// Two runs never hold one day at once.
			other := day.Add(24 * time.Hour)
			var wg sync.WaitGroup
			var mu sync.Mutex
			got := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					now := time.Now()
					ok, err := st.BeginReconciliation(ctx, reconcile.Claim{Provider: "acq", Day: other, Started: now}, now.Add(-time.Hour))
					require.NoError(t, err)
					if ok {
						mu.Lock()
						got++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			require.Equal(t, 1, got, "one claim of the day")
			_, err = cli(t, env, "reconcile", "--provider", "acq", "--date", other.Format(time.DateOnly))
			require.ErrorContains(t, err, "another run is reconciling this day now")
			require.False(t, strings.Contains(out, "5555555555554444"))
		})
	}
}
