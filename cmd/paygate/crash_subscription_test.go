package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestSubscriptionCrashes kills the real binary (SIGKILL, from inside) at
// subscription charges only, between the commit of a period's payment and
// the provider call (PAYGATE_CRASH_AT=before_call:recurring) and between
// the provider's answer and its record (after_call:recurring), again at
// each restart, then lets a restart without the hook finish. Each period
// has exactly one succeeded payment and exactly one charge in the
// acquirer's ledger, and each subscription is active on the next period
// (docs/design/decisions.md section 11: a crash between the charge and its
// record charges nothing twice).
func TestSubscriptionCrashes(t *testing.T) {
	t.Parallel() // mostly waits (restarts, River's rescue window): runs beside the other binary tests
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := buildBinary(t)
	_, acqOut, acqURL := spawn(t, bin, nil, `listening on (http://\S+)`, "sandbox-acquirer", "--addr", "127.0.0.1:0")
	acqKey := regexp.MustCompile(`api key (\S+)`).FindStringSubmatch(acqOut.String())[1]
	ledger := sandbox.NewAdapter(acqURL, acqKey, http.DefaultClient)

	for d, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			for i, point := range []string{"before_call", "after_call"} {
				t.Run(point, func(t *testing.T) {
					t.Parallel()
					args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
						"--sandbox-url", acqURL, "--sandbox-key", acqKey, "--scheduler-every", "100ms",
						"--provider-timeout", "1s", "--job-timeout", "2s", "--rescue-after", "3s"}
					if db.Name == "postgres" {
						args = append(args, "--database-url", storetest.NewPostgresDatabase(t))
					}
					// Amounts tell the subscriptions apart in the shared ledger.
					crashSubscriptions(t, bin, args, point+":recurring", int64(6100+100*d+10*i), ledger)
				})
			}
		})
	}
}

// crashSubscriptions makes subs daily subscriptions, advances the key's
// sandbox clock so that `periods` periods of each are due, and lets them
// be charged through kills kills at point, then a clean restart.
func crashSubscriptions(t *testing.T, bin string, args []string, point string, amount int64, ledger *sandbox.Adapter) {
	const subs, periods, kills = 3, 4, 3
	listening := `listening on (http://\S+)`
	cmd, out, base := spawn(t, bin, []string{"PAYGATE_CRASH_AT=" + point}, listening, args...)
	m := regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m)
	c := client.New(base, m[1], m[2])
	c.Retries = 0
	ctx := context.Background()

	// The consent payments (direct, not recurring: the hook spares them),
	// each the first of a subscription due first in an hour.
	first := time.Now().Add(time.Hour).UTC()
	ids := make([]string, subs)
	for s := range subs {
		body := fmt.Sprintf(`{"order_id":"consent-%d","amount_minor":%d,"currency":"USD","customer":{"email":"a@b.example"},
			"customer_reference":"payer-%d","payment_method":{"type":"card","card":{"number":"5555555555554444",
			"expire_month":12,"expire_year":%d,"cvv":"123"}},"subscription":{"interval_unit":"day","interval_count":1,
			"first_charge_at":%q,"disclosure_version":"v1"}}`, s, amount+int64(s), s, time.Now().Year()+2,
			first.Format(time.RFC3339))
		var p openapi.Payment
		require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p))
		require.Eventually(t, func() bool {
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &p))
			return p.Final
		}, time.Minute, 20*time.Millisecond)
		require.Equal(t, "succeeded", p.Status)
		ids[s] = p.SubscriptionID
	}

	// The key's clock moves past periods 0 … periods-1: the advance (in
	// the API) and the scheduler (in the worker) charge them, and the
	// process kills itself at the first charge's call. Each restart with
	// the hook dies at the next: a new period's, or the interrupted one
	// taken up again.
	advance := map[string]any{"to": first.Add(time.Duration(periods-1)*24*time.Hour + time.Hour).Format(time.RFC3339)}
	require.Error(t, c.JSON(ctx, "POST", "/api/v1/sandbox/clock/advance", advance, nil), "the advance's process died")
	require.Error(t, cmd.Wait(), "the process was killed")
	for k := 1; k < kills; k++ {
		dies(t, bin, []string{"PAYGATE_CRASH_AT=" + point}, args)
	}

	// A clean restart: the interrupted charges finish (SQLite: requeued at
	// the start; PostgreSQL: River's rescuer), the merchant's advance is
	// sent again, and the scheduler charges what remains due.
	_, _, base = spawn(t, bin, nil, listening, args...)
	c = client.New(base, m[1], m[2])
	require.NoError(t, c.JSON(ctx, "POST", "/api/v1/sandbox/clock/advance", advance, nil))
	var got openapi.Subscription
	for _, id := range ids {
		require.Eventually(t, func() bool {
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/subscriptions/"+id, nil, &got))
			return got.NextPeriod == periods
		}, 3*time.Minute, 100*time.Millisecond, "subscription %s: %+v", id, got)
		require.Equal(t, "active", got.Status)
	}

	entries, err := ledger.Ledger(ctx)
	require.NoError(t, err)
	for s, id := range ids {
		var page openapi.PaymentList
		q := url.Values{"customer_reference": {fmt.Sprintf("payer-%d", s)}, "limit": {"100"}}
		require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments?"+q.Encode(), nil, &page))
		charged := map[int64]int{}
		for _, p := range page.Items {
			if p.SubscriptionPeriod == nil {
				continue // the consent payment
			}
			require.Equal(t, id, p.SubscriptionID)
			require.Equal(t, "succeeded", p.Status, "period %d", *p.SubscriptionPeriod)
			charged[*p.SubscriptionPeriod]++
		}
		for n := range int64(periods) {
			require.Equal(t, 1, charged[n], "subscription %d period %d: one payment", s, n)
		}
		require.Len(t, charged, periods, "subscription %d: no other period", s)
		at := 0
		for _, e := range entries {
			if e.Kind == acquirer.EntryCharge && e.AmountMinor == amount+int64(s) {
				at++
			}
		}
		require.Equal(t, periods+1, at, "subscription %d: the consent and one charge per period at the acquirer", s)
	}
}

// dies starts the binary and waits until it has killed itself (a crash
// hook): at the interrupted charge taken up again (on SQLite at the
// start, on PostgreSQL once River's rescuer hands it over) or at a new one.
func dies(t *testing.T, bin string, env, args []string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.Error(t, err, "the process was killed:\n%s", out.String())
		require.Contains(t, out.String(), "crashing on purpose", "killed by its hook")
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the process did not crash:\n%s", out.String())
	}
}
