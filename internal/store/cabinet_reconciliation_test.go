package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// accountChannel stores a channel on the provider account and assigns it
// to the keys.
func accountChannel(t *testing.T, s *store.Store, account string, keys ...merchant.Key) merchant.Channel {
	t.Helper()
	ctx := context.Background()
	c, err := s.EnsureChannel(ctx, merchant.Channel{ID: uuid.NewString(), Alias: account + "-card", Provider: account,
		Profile: "default", PaymentMethods: []string{"card"}, Currencies: []string{"USD"},
		CheckoutMode: merchant.CheckoutPlatform, CreatedAt: t0})
	require.NoError(t, err)
	for _, k := range keys {
		require.NoError(t, s.AssignChannel(ctx, k.ID, c.ID, t0))
	}
	return c
}

// brk is a break of the key with Paygate's side (and the acquirer's when
// provider is not "").
func brk(kind, keyID, paymentID string, amount int64, provider string) reconcile.Break {
	b := reconcile.Break{Kind: kind, Key: uuid.NewString(), PaymentID: paymentID, AccessKeyID: keyID,
		Paygate: &reconcile.Side{Kind: "charge", AmountMinor: amount, Currency: "USD", At: t0}}
	if provider != "" {
		b.Provider = &reconcile.Side{Kind: provider, AmountMinor: amount + 1, Currency: "USD", At: t0.Add(time.Second), Ref: "ch_1"}
	}
	return b
}

// TestKeyReconciliation checks what the cabinet reads of stored runs
// (docs/reconciliation.md, "In the cabinet") on every database: a key
// sees the runs of the accounts its channels are on and those holding a
// break of its own, never another account's; its breaks by kind, never
// another key's nor an orphan; its breaks in order, a payout's marked;
// keyset pages of both.
func TestKeyReconciliation(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			a, b, c := newKey(t, s, "a"), newKey(t, s, "b"), newKey(t, s, "c")
			acq := accountChannel(t, s, "acq", a, b)
			accountChannel(t, s, "other", c)
			po := &payout.Payout{ID: uuid.NewString(), AccessKeyID: a.ID, ChannelID: acq.ID, OrderID: "po-1",
				Status: payout.Succeeded, AmountMinor: 500, Currency: "USD", Method: "card", CardMask: "424242******4242",
				CreatedAt: t0, UpdatedAt: t0}
			require.NoError(t, s.CreatePayout(ctx, po))
			finished := t0.Add(time.Hour)

			orphan := reconcile.Break{Kind: reconcile.MissingInPaygate,
				Provider: &reconcile.Side{Kind: "charge", AmountMinor: 999, Currency: "USD", At: t0, Ref: "ch_orphan"}}
			aMissing := brk(reconcile.MissingAtProvider, a.ID, "pay-a1", 100, "")
			bAmount := brk(reconcile.AmountMismatch, b.ID, "pay-b1", 200, "charge")
			aAmount := brk(reconcile.AmountMismatch, a.ID, "pay-a2", 300, "charge")
			aPayout := brk(reconcile.MissingAtProvider, a.ID, po.ID, 500, "")
			storetest.PlantReconciliation(t, s, storetest.Run{Account: "acq", Day: "2026-11-20", StartedAt: t0, FinishedAt: &finished,
				Paygate: 40, AtProvider: 41, Matched: 37}, aMissing, orphan, bAmount, aAmount, aPayout)
			storetest.PlantReconciliation(t, s, storetest.Run{Account: "acq", Day: "2026-11-21", StartedAt: t0, FinishedAt: &finished},
				bAmount)
			storetest.PlantReconciliation(t, s, storetest.Run{Account: "acq", Day: "2026-11-22", Status: "running", StartedAt: t0})
			storetest.PlantReconciliation(t, s, storetest.Run{Account: "other", Day: "2026-11-21", StartedAt: t0, FinishedAt: &finished},
				brk(reconcile.MissingAtProvider, c.ID, "pay-c1", 100, ""))
			// An account key a's channels are no longer on, holding one of
			// its breaks; and one holding none.
			left := brk(reconcile.StatusMismatch, a.ID, "pay-a3", 700, "hold")
			storetest.PlantReconciliation(t, s, storetest.Run{Account: "left", Day: "2026-11-19", StartedAt: t0, FinishedAt: &finished}, left)
			storetest.PlantReconciliation(t, s, storetest.Run{Account: "left", Day: "2026-11-18", StartedAt: t0, FinishedAt: &finished})

			days, err := s.KeyReconciledDays(ctx, a.ID, "", "", 10)
			require.NoError(t, err)
			type seen struct {
				account, day, status string
				breaks               map[string]int
			}
			var got []seen
			for _, d := range days {
				got = append(got, seen{d.Account, d.Day, d.Status, d.Breaks})
			}
			require.Equal(t, []seen{
				{"acq", "2026-11-22", "running", map[string]int{}},
				{"acq", "2026-11-21", "done", map[string]int{}},
				{"acq", "2026-11-20", "done", map[string]int{reconcile.MissingAtProvider: 2, reconcile.AmountMismatch: 1}},
				{"left", "2026-11-19", "done", map[string]int{reconcile.StatusMismatch: 1}},
			}, got)
			require.Equal(t, finished, *days[1].FinishedAt)
			require.Nil(t, days[0].FinishedAt)

			// Keyset pages of one run.
			var paged []string
			afterDay, afterAccount := "", ""
			for {
				page, err := s.KeyReconciledDays(ctx, b.ID, afterDay, afterAccount, 1)
				require.NoError(t, err)
				if len(page) == 0 {
					break
				}
				require.Len(t, page, 1)
				paged = append(paged, page[0].Account+"/"+page[0].Day)
				afterDay, afterAccount = page[0].Day, page[0].Account
			}
			require.Equal(t, []string{"acq/2026-11-22", "acq/2026-11-21", "acq/2026-11-20"}, paged)

			// Key c sees its account only.
			days, err = s.KeyReconciledDays(ctx, c.ID, "", "", 10)
			require.NoError(t, err)
			require.Len(t, days, 1)
			require.Equal(t, "other", days[0].Account)
			require.Equal(t, map[string]int{reconcile.MissingAtProvider: 1}, days[0].Breaks)

			d, err := s.KeyReconciledDay(ctx, b.ID, "acq", "2026-11-20")
			require.NoError(t, err)
			require.Equal(t, map[string]int{reconcile.AmountMismatch: 1}, d.Breaks)
			for _, q := range [][3]string{{c.ID, "acq", "2026-11-20"}, {a.ID, "other", "2026-11-21"}, {b.ID, "left", "2026-11-19"},
				{a.ID, "acq", "2026-11-23"}, {a.ID, "left", "2026-11-18"}, {"", "acq", "2026-11-20"}} {
				d, err := s.KeyReconciledDay(ctx, q[0], q[1], q[2])
				require.NoError(t, err)
				require.Nil(t, d, "%v", q)
			}

			breaks, err := s.KeyBreaks(ctx, a.ID, "acq", "2026-11-20", 0, 10)
			require.NoError(t, err)
			require.Len(t, breaks, 3)
			for i, want := range []reconcile.Break{aMissing, aAmount, aPayout} {
				require.Equal(t, want, breaks[i].Break)
				require.Equal(t, i == 2, breaks[i].Payout)
			}
			require.Equal(t, []int{1, 4, 5}, []int{breaks[0].Seq, breaks[1].Seq, breaks[2].Seq})
			page, err := s.KeyBreaks(ctx, a.ID, "acq", "2026-11-20", 1, 1)
			require.NoError(t, err)
			require.Len(t, page, 1)
			require.Equal(t, aAmount, page[0].Break)
			none, err := s.KeyBreaks(ctx, "", "acq", "2026-11-20", 0, 10)
			require.NoError(t, err)
			require.Empty(t, none)
		})
	}
}
