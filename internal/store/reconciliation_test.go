package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestStagedKeys: a run reads its staged rows back a key at a time, each
// key whole and once, across pages of any shape: keys cut by a page's
// end, one key larger than a page; a movement of the acquirer's with no
// operation id is matched to Paygate's by the acquirer's payment id and
// kind, or keyed alone; staging a day again starts it anew (on both
// databases).
func TestStagedKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	at := day.Add(12 * time.Hour)
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			c := reconcile.Claim{Provider: "acq", Day: day, Started: day.Add(27 * time.Hour)}
			require.NoError(t, s.ClearStaged(ctx, c))
			// 3,001 keys of three movements each, then one key of 7,000:
			// pages of 5,000 rows end inside keys, and one key fills more
			// than a page.
			var ms []provider.Movement
			for i := range 3001 {
				for j := range 3 {
					ms = append(ms, provider.Movement{Kind: provider.MoveCharge, OperationID: fmt.Sprintf("op-%05d", i),
						Ref: fmt.Sprintf("r-%d-%d", i, j), AmountMinor: int64(i), Currency: "USD", At: at})
				}
			}
			for j := range 7000 {
				ms = append(ms, provider.Movement{Kind: provider.MoveRefund, OperationID: "op-zzz", Ref: fmt.Sprint(j),
					AmountMinor: 1, Currency: "USD", At: at})
			}
			// No operation id: one matched by its payment id and kind, one
			// of another kind, one of an unknown payment.
			ms = append(ms,
				provider.Movement{Kind: provider.MoveCharge, PaymentRef: "pi_known", AmountMinor: 5, Currency: "USD", At: at},
				provider.Movement{Kind: provider.MoveRefund, PaymentRef: "pi_known", AmountMinor: 5, Currency: "USD", At: at},
				provider.Movement{Kind: provider.MoveCharge, PaymentRef: "pi_unknown", AmountMinor: 5, Currency: "USD", At: at})
			for i := 0; i < len(ms); i += 1000 {
				require.NoError(t, s.StageProvider(ctx, c, i, ms[i:min(i+1000, len(ms))]))
			}
			require.NoError(t, s.StageProvider(ctx, reconcile.Claim{Provider: "other", Day: day, Started: c.Started}, 0, ms[:10]),
				"another account's rows are not read")
			require.NoError(t, s.StageProvider(ctx, reconcile.Claim{Provider: "acq", Day: day, Started: day}, 0, ms[:10]),
				"nor another run's of the day")
			// Paygate's charge of pi_known, staged as a run stages it.
			_, err := s.DB().ExecContext(ctx, `INSERT INTO reconciliation_staged (provider, day, match_key, side, operation_id,
				payment_id, access_key_id, kind, amount_minor, currency, at, ref, payment_ref, fee_minor)
				VALUES ('acq', $1, 'op-known', 0, 'op-known', 'pay-1', 'key-1', 'charge', 5, 'USD', 0, '', 'pi_known', 0)`, c.Stage())
			require.NoError(t, err)
			require.NoError(t, s.MatchStaged(ctx, c))

			seen := map[string]int{}
			var known []provider.Movement
			lone := 0
			require.NoError(t, s.StagedKeys(ctx, c, func(ours []reconcile.Movement, theirs []provider.Movement) error {
				key := ""
				switch {
				case len(ours) > 0:
					key = ours[0].Key
				case theirs[0].OperationID != "":
					key = theirs[0].OperationID
				default:
					lone++
					require.Len(t, theirs, 1, "a movement matched by nothing is compared alone")
					return nil
				}
				require.Zero(t, seen[key], "key %s read once", key)
				seen[key] = len(ours) + len(theirs)
				if key == "op-known" {
					known = theirs
				}
				return nil
			}))
			require.Len(t, seen, 3001+2)
			require.Equal(t, 3, seen["op-01234"])
			require.Equal(t, 7000, seen["op-zzz"], "a key larger than a page, whole")
			require.Len(t, known, 1, "matched by payment id and kind")
			require.Equal(t, provider.MoveCharge, known[0].Kind)
			require.Equal(t, 2, lone, "the refund of pi_known and the charge of pi_unknown")

			require.NoError(t, s.ClearStaged(ctx, reconcile.Claim{Provider: "acq", Day: day, Started: day.Add(30 * time.Hour)}),
				"a later run clears every earlier run's rows of the day")
			require.NoError(t, s.StagedKeys(ctx, c, func([]reconcile.Movement, []provider.Movement) error {
				t.Fatal("nothing staged after ClearStaged")
				return nil
			}))
		})
	}
}

// TestReconciliationClaim: a run whose day was taken over (it ran past
// StaleAfter) neither stores its result nor marks the new run's day
// failed; the new run finishes with its own staged breaks, however many
// one call stages (on both databases).
func TestReconciliationClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			a := reconcile.Claim{Provider: "acq", Day: day, Started: day.Add(27 * time.Hour)}
			b := reconcile.Claim{Provider: "acq", Day: day, Started: a.Started.Add(2 * time.Hour)}
			got, err := s.BeginReconciliation(ctx, a, a.Started.Add(-reconcile.StaleAfter))
			require.NoError(t, err)
			require.True(t, got)
			got, err = s.BeginReconciliation(ctx, b, a.Started.Add(-time.Minute))
			require.NoError(t, err)
			require.False(t, got, "a's claim is fresh")
			got, err = s.BeginReconciliation(ctx, b, b.Started.Add(-reconcile.StaleAfter))
			require.NoError(t, err)
			require.True(t, got, "a's claim is stale: taken over")

			many := make([]reconcile.Break, 3000) // more than one statement takes
			for i := range many {
				many[i] = reconcile.Break{Kind: reconcile.MissingInPaygate, Provider: &reconcile.Side{Kind: provider.MoveCharge,
					AmountMinor: int64(i), Currency: "USD", At: day.Add(time.Duration(i) * time.Second), Ref: fmt.Sprint(i)}}
			}
			require.NoError(t, s.StageBreaks(ctx, b, many))
			require.NoError(t, s.StageBreaks(ctx, a, many[:5]))
			res := reconcile.Result{Provider: "acq", Day: day, ByKind: map[string]int{reconcile.MissingInPaygate: 5}}
			require.ErrorIs(t, s.FinishReconciliation(ctx, a, res, a.Started), reconcile.ErrClaimLost)
			require.NoError(t, s.AbandonReconciliation(ctx, a))
			res.ByKind[reconcile.MissingInPaygate] = 3000
			require.NoError(t, s.FinishReconciliation(ctx, b, res, b.Started), "b still holds the day")
			stored, err := s.ReconciliationBreaks(ctx, "acq", day)
			require.NoError(t, err)
			require.Len(t, stored, 3000, "b's breaks only")
			require.Equal(t, int64(0), stored[0].Provider.AmountMinor, "in time order")
			require.Equal(t, int64(2999), stored[2999].Provider.AmountMinor)
			done, err := s.ReconciliationDone(ctx, "acq", day)
			require.NoError(t, err)
			require.True(t, done)
		})
	}
}
