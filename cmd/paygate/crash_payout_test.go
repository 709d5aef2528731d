package main

import (
	"context"
	"fmt"
	"net/http"
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

// TestPayoutCrashBeforeCall kills the real binary after a payout's commit
// and before its provider call (PAYGATE_CRASH_AT=before_call). After a
// restart the payout succeeds with exactly one transfer in the acquirer's
// ledger: the operation engine carries payouts as it carries payments.
func TestPayoutCrashBeforeCall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := buildBinary(t)
	_, acqOut, acqURL := spawn(t, bin, nil, `listening on (http://\S+)`, "sandbox-acquirer", "--addr", "127.0.0.1:0")
	acqKey := regexp.MustCompile(`api key (\S+)`).FindStringSubmatch(acqOut.String())[1]
	ledger := sandbox.NewAdapter(acqURL, acqKey, http.DefaultClient)
	for i, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
				"--sandbox-url", acqURL, "--sandbox-key", acqKey,
				"--provider-timeout", "1s", "--job-timeout", "2s", "--rescue-after", "3s"}
			if db.Name == "postgres" {
				args = append(args, "--database-url", storetest.NewPostgresDatabase(t))
			}
			amount := int64(4300 + i)
			listening := `listening on (http://\S+)`
			cmd, out, url := spawn(t, bin, []string{"PAYGATE_CRASH_AT=before_call"}, listening, args...)
			m := regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`).FindStringSubmatch(out.String())
			require.NotNil(t, m)
			c := client.New(url, m[1], m[2])
			body := fmt.Sprintf(`{"order_id":"crash-payout","amount_minor":%d,"currency":"USD","account":"main",
				"customer":{"email":"a@b.example"},
				"payout_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d}}}`,
				amount, time.Now().Year()+1)
			var p openapi.Payout
			post := postThroughCrash(t, "/api/v1/payouts", body, &p)
			post(c)
			require.Error(t, cmd.Wait(), "the process was killed")

			_, _, url = spawn(t, bin, nil, listening, args...)
			c = client.New(url, m[1], m[2])
			post(c)
			require.Equal(t, "processing", p.Status)
			var got openapi.Payout
			require.Eventually(t, func() bool {
				got = openapi.Payout{}
				require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payouts/"+p.PayoutID, nil, &got))
				return got.Final
			}, 120*time.Second, 100*time.Millisecond)
			require.Equal(t, "succeeded", got.Status)

			entries, err := ledger.Ledger(context.Background())
			require.NoError(t, err)
			transfers := 0
			for _, e := range entries {
				if e.Kind == acquirer.EntryTransfer && e.AmountMinor == amount {
					transfers++
				}
			}
			require.Equal(t, 1, transfers, "exactly one transfer for the payout")
		})
	}
}
