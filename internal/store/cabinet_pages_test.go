package store_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestPaymentPageQueries checks the cabinet's list and chart queries
// (docs/cabinet.md, "Payments") against the same selection made in Go, on
// every database: every keyset page of a search (three lookups) with and
// without other filters, payments sharing a created_at, another key's
// payments never listed, and the chart's counts per day and status over
// ranges that start and end inside a day.
func TestPaymentPageQueries(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			a, b, c := newKey(t, s, "a"), newKey(t, s, "b"), newChannel(t, s, "pages", "USD")
			statuses := []payment.Status{payment.Succeeded, payment.Declined, payment.Failed}
			var mine []*payment.Payment // key a's
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				for _, key := range []string{a.ID, b.ID} {
					for i := range 200 {
						p := &payment.Payment{ID: uuid.NewString(), AccessKeyID: key, ChannelID: c.ID,
							Kind: payment.KindDirect, Status: statuses[i%3], OrderID: fmt.Sprintf("o-%d", i),
							AmountMinor: 100, Currency: "USD", CustomerReference: fmt.Sprintf("c-%d", i),
							Locale: "en", OperationMode: payment.ModeCharge,
							// Two payments share each created_at: the id breaks the tie.
							CreatedAt: t0.Add(time.Duration(i/2) * 37 * time.Minute)}
						p.UpdatedAt = p.CreatedAt
						switch {
						case i%4 == 0:
							p.CustomerReference = "frequent"
						case i%50 == 1:
							p.OrderID = "frequent" // an order id equal to the searched customer
						case i == 11 && key == a.ID:
							p.ID = "frequent" // and a payment id
						}
						if err := tx.CreatePayment(ctx, p); err != nil {
							return err
						}
						if key == a.ID {
							mine = append(mine, p)
						}
					}
				}
				return nil
			}))
			slices.SortFunc(mine, func(x, y *payment.Payment) int {
				return cmp.Or(y.CreatedAt.Compare(x.CreatedAt), cmp.Compare(y.ID, x.ID))
			})
			from, before := t0.Add(10*time.Hour), t0.Add(50*time.Hour)
			for _, f := range []payment.Filter{
				{},
				{Status: "declined"},
				{CreatedGTE: &from, CreatedLT: &before},
				{Search: "frequent"},
				{Search: "frequent", Status: "succeeded"},
				{Search: "frequent", Status: "declined", CreatedGTE: &from, CreatedLT: &before},
				{Search: "o-7"},
				{Search: "nothing"},
			} {
				var want []string
				for _, p := range mine {
					if (f.Status == "" || string(p.Status) == f.Status) &&
						(f.CreatedGTE == nil || !p.CreatedAt.Before(*f.CreatedGTE)) &&
						(f.CreatedLT == nil || p.CreatedAt.Before(*f.CreatedLT)) &&
						(f.Search == "" || p.ID == f.Search || p.OrderID == f.Search || p.CustomerReference == f.Search) {
						want = append(want, p.ID)
					}
				}
				var got []string
				f.Limit = 7
				for range 100 {
					page, err := s.ListPayments(ctx, a.ID, f)
					require.NoError(t, err)
					for _, p := range page {
						got = append(got, p.ID)
					}
					if len(page) < f.Limit {
						break
					}
					last := page[len(page)-1]
					f.AfterCreated, f.AfterID = &last.CreatedAt, last.ID
				}
				require.Equal(t, want, got, "filter %+v", f)
			}

			// The chart: [from, to) inside days, with and without a status.
			for _, status := range []string{"", "succeeded"} {
				from, to := t0.Add(90*time.Minute), t0.Add(49*time.Hour+5*time.Minute)
				want := map[string]int{}
				for _, p := range mine {
					if !p.CreatedAt.Before(from) && p.CreatedAt.Before(to) && (status == "" || string(p.Status) == status) {
						want[p.CreatedAt.UTC().Format("2006-01-02")+" "+string(p.Status)]++
					}
				}
				days, err := s.PaymentsPerDay(ctx, a.ID, status, from, to)
				require.NoError(t, err)
				got := map[string]int{}
				for i, d := range days {
					got[d.Day.Format("2006-01-02")+" "+d.Status] = d.Count
					if i > 0 {
						prev := days[i-1]
						require.True(t, prev.Day.Before(d.Day) || (prev.Day.Equal(d.Day) && prev.Status < d.Status), "oldest day first, then status")
					}
				}
				require.Equal(t, want, got, "status %q", status)
			}
		})
	}
}
