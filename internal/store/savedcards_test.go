package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestSavedCards runs the saved cards' SQL on every database: a card reads
// back as written, only through the key that saved it, and a payer's list
// is theirs alone, newest first.
func TestSavedCards(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			a, b := newKey(t, s, "saved-a"), newKey(t, s, "saved-b")
			save := func(key, customerRef string, at time.Time) savedcard.Card {
				c := savedcard.Card{ID: uuid.NewString(), AccessKeyID: key, CustomerReference: customerRef,
					Provider: "sandbox", TokenSealed: []byte("sealed-" + customerRef), MaskedCard: "424242******4242",
					Scheme: "visa", ExpMonth: 7, ExpYear: 2031, CreatedAt: at}
				require.NoError(t, s.CreateSavedCard(ctx, &c))
				return c
			}
			first := save(a.ID, "cust-1", t0)
			second := save(a.ID, "cust-1", t0.Add(time.Minute))
			save(a.ID, "cust-2", t0)
			theirs := save(b.ID, "cust-1", t0)

			got, err := s.FindSavedCardForKey(ctx, a.ID, first.ID)
			require.NoError(t, err)
			require.Equal(t, first, *got)
			_, err = s.FindSavedCardForKey(ctx, a.ID, theirs.ID)
			require.ErrorIs(t, err, store.ErrNotFound, "another key's card")
			_, err = s.FindSavedCardForKey(ctx, a.ID, uuid.NewString())
			require.ErrorIs(t, err, store.ErrNotFound)

			list, err := s.ListSavedCards(ctx, a.ID, "cust-1")
			require.NoError(t, err)
			require.Equal(t, []savedcard.Card{second, first}, list)
			list, err = s.ListSavedCards(ctx, b.ID, "cust-3")
			require.NoError(t, err)
			require.Empty(t, list)
		})
	}
}
