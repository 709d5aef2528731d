package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestSavedCardDeletion runs the cabinet's saved-card SQL
// (docs/design/decisions.md section 13) on every database: the key's page
// is newest first with and without a payer, a deleted card is gone from
// every reader of usable cards but still readable for a payment accepted
// with it, and of concurrent deletions exactly one succeeds.
func TestSavedCardDeletion(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			a, b := newKey(t, s, "tokens-a"), newKey(t, s, "tokens-b")
			save := func(key, customerRef string, at time.Time) savedcard.Card {
				c := savedcard.Card{ID: uuid.NewString(), AccessKeyID: key, CustomerReference: customerRef,
					Provider: "sandbox", TokenSealed: []byte("sealed"), MaskedCard: "424242******4242",
					Scheme: "visa", ExpMonth: 7, ExpYear: 2031, CreatedAt: at}
				require.NoError(t, s.CreateSavedCard(ctx, &c))
				return c
			}
			c1 := save(a.ID, "cust-1", t0)
			c2 := save(a.ID, "cust-2", t0.Add(time.Minute))
			c3 := save(a.ID, "cust-1", t0.Add(2*time.Minute))
			save(b.ID, "cust-1", t0.Add(3*time.Minute))

			page, err := s.ListSavedCardsPage(ctx, a.ID, savedcard.Filter{Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []savedcard.Card{c3, c2}, page)
			page, err = s.ListSavedCardsPage(ctx, a.ID, savedcard.Filter{Limit: 2, AfterCreated: &c2.CreatedAt, AfterID: c2.ID})
			require.NoError(t, err)
			require.Equal(t, []savedcard.Card{c1}, page)
			page, err = s.ListSavedCardsPage(ctx, a.ID, savedcard.Filter{CustomerReference: "cust-1", Limit: 10})
			require.NoError(t, err)
			require.Equal(t, []savedcard.Card{c3, c1}, page)

			require.ErrorIs(t, s.DeleteSavedCard(ctx, b.ID, c1.ID, t0), store.ErrNotFound, "another key's card")
			at := t0.Add(time.Hour)
			require.NoError(t, s.DeleteSavedCard(ctx, a.ID, c1.ID, at))
			require.ErrorIs(t, s.DeleteSavedCard(ctx, a.ID, c1.ID, at), store.ErrNotFound, "deleted twice")

			_, err = s.FindSavedCardForKey(ctx, a.ID, c1.ID)
			require.ErrorIs(t, err, store.ErrNotFound)
			list, err := s.ListSavedCards(ctx, a.ID, "cust-1")
			require.NoError(t, err)
			require.Equal(t, []savedcard.Card{c3}, list)
			page, err = s.ListSavedCardsPage(ctx, a.ID, savedcard.Filter{Limit: 10})
			require.NoError(t, err)
			require.Equal(t, []savedcard.Card{c3, c2}, page)

			kept, err := s.FindSavedCardForCharge(ctx, a.ID, c1.ID)
			require.NoError(t, err)
			require.NotNil(t, kept.DeletedAt)
			require.True(t, at.Equal(*kept.DeletedAt))
			_, err = s.FindSavedCardForCharge(ctx, b.ID, c1.ID)
			require.ErrorIs(t, err, store.ErrNotFound, "another key's card")

			// Concurrent deletions of one card: one wins, the others find it gone.
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				ok, gone int
			)
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := s.DeleteSavedCard(ctx, a.ID, c3.ID, at)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case errors.Is(err, store.ErrNotFound):
						gone++
					default:
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			require.Equal(t, 1, ok)
			require.Equal(t, 19, gone)
		})
	}
}
