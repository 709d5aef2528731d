package storetest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store"
)

// Run is a stored reconciliation run as a test plants it: what the
// reconciler leaves in reconciliation_runs (docs/reconciliation.md, Runs).
type Run struct {
	Account, Day, Status                       string // Status "" is done
	StartedAt                                  time.Time
	FinishedAt                                 *time.Time
	Paygate, AtProvider, Matched, Pending, Fee int64
}

// PlantReconciliation stores a run and its breaks (numbered from 1) with
// SQL, as the reconciler stores them, without running it: the cabinet's
// tests are about what is shown of a stored run.
func PlantReconciliation(t testing.TB, s *store.Store, r Run, breaks ...reconcile.Break) {
	t.Helper()
	ctx := context.Background()
	if r.Status == "" {
		r.Status = "done"
	}
	micros := func(t time.Time) int64 { return t.UTC().UnixMicro() }
	finished := sql.NullInt64{}
	if r.FinishedAt != nil {
		finished = sql.NullInt64{Int64: micros(*r.FinishedAt), Valid: true}
	}
	err := s.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO reconciliation_runs (provider, day, status, started_at, finished_at,
			paygate_count, provider_count, matched, pending, breaks, fees_minor) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			r.Account, r.Day, r.Status, micros(r.StartedAt), finished, r.Paygate, r.AtProvider, r.Matched, r.Pending,
			len(breaks), r.Fee); err != nil {
			return err
		}
		for i, b := range breaks {
			side := func(sd *reconcile.Side) []any {
				if sd == nil {
					return []any{nil, nil, nil, nil}
				}
				return []any{sd.Kind, sd.AmountMinor, sd.Currency, micros(sd.At)}
			}
			ref := any(nil)
			if b.Provider != nil {
				ref = b.Provider.Ref
			}
			args := append([]any{r.Account, r.Day, i + 1, b.Kind, b.Key, b.PaymentID, b.AccessKeyID}, side(b.Paygate)...)
			args = append(append(args, side(b.Provider)...), ref)
			if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO reconciliation_breaks (provider, day, seq, kind, operation_id,
				payment_id, access_key_id, paygate_kind, paygate_amount, paygate_currency, paygate_at, provider_kind,
				provider_amount, provider_currency, provider_at, provider_ref)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
