package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestProviderFaults: with timeouts, 5xx and unreadable answers on every
// kind of call (charge, hold, capture, status), each payment still ends
// with exactly what it asked for in the acquirer's ledger: one charge, or
// one hold and one capture — never two.
func TestProviderFaults(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true, faults: acquirer.Faults{
			Seed: 11, TimeoutRate: 0.25, ServerErrorRate: 0.1, UnreadableRate: 0.1,
		}})
		type pay struct{ id, mode string }
		var pays []pay
		for i := range 12 {
			mode := "charge"
			if i%2 == 0 {
				mode = "authorize"
			}
			p := e.direct(e.a, cardBody("4242424242424242", `,"operation_mode":"`+mode+`"`))
			pays = append(pays, pay{p.PaymentID, mode})
		}
		for _, p := range pays {
			got := e.settle(e.a, p.id, "processing", "manual_review")
			if p.mode == "charge" {
				require.Equal(t, "succeeded", got.Status)
				continue
			}
			require.Equal(t, "authorized", got.Status)
			var resp = e.post(e.a, "/api/v1/payments/"+p.id+"/capture", ``)
			for resp.Status == http.StatusConflict { // a retryable conflict is possible while the engine writes
				resp = e.post(e.a, "/api/v1/payments/"+p.id+"/capture", ``)
			}
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			require.Equal(t, "succeeded", e.settle(e.a, p.id, "authorized", "manual_review").Status)
		}
		var retried int
		require.NoError(t, e.store.DB().QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM river_job WHERE kind = 'operation.run' AND attempt > 1`).Scan(&retried))
		require.Positive(t, retried, "the faults did hit: some operations needed more than one attempt")
		for _, p := range pays {
			var payOp string
			require.NoError(t, e.store.DB().QueryRowContext(context.Background(),
				`SELECT id FROM operations WHERE resource = 'payment' AND resource_id = $1 AND kind = 'pay'`, p.id).Scan(&payOp))
			if p.mode == "charge" {
				require.Equal(t, 1, e.acquirer.Count(acquirer.EntryCharge, payOp), p.id)
				require.Equal(t, 0, e.acquirer.Count(acquirer.EntryHold, payOp), p.id)
			} else {
				require.Equal(t, 1, e.acquirer.Count(acquirer.EntryHold, payOp), p.id)
				require.Equal(t, 1, e.acquirer.Count(acquirer.EntryCapture, payOp), p.id)
				require.Equal(t, 0, e.acquirer.Count(acquirer.EntryCharge, payOp), p.id)
			}
		}
	})
}
