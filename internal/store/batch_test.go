package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestBatch: concurrent writers each get their own verdict, and only the
// writes of those that succeeded are kept, on both databases (on SQLite
// they share commits).
func TestBatch(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			k := newKey(t, s, "batch")
			ctx := context.Background()
			refused := errors.New("refused")
			const n = 200
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					errs[i] = s.Batch(ctx, func(ctx context.Context, tx *store.Tx) error {
						if _, _, err := tx.Admit(ctx, k.ID, fmt.Sprintf("nonce-%d", i), t0, false); err != nil {
							return err
						}
						switch i % 10 {
						case 3:
							return refused // its nonce must vanish
						case 7:
							panic("a bad request")
						}
						return nil
					})
				})
			}
			wg.Wait()
			for i, err := range errs {
				switch i % 10 {
				case 3:
					require.ErrorIs(t, err, refused)
				case 7:
					require.ErrorContains(t, err, "panicked")
				default:
					require.NoError(t, err)
				}
				// A nonce is fresh again exactly when its writer's writes were undone.
				fresh, _, err := s.Admit(ctx, k.ID, fmt.Sprintf("nonce-%d", i), t0, false)
				require.NoError(t, err)
				require.Equal(t, i%10 == 3 || i%10 == 7, fresh, "nonce %d", i)
			}
		})
	}
}

func TestBatchMemberCannotCommit(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			err := s.Batch(context.Background(), func(ctx context.Context, tx *store.Tx) error {
				if db.Name == "sqlite" {
					require.Error(t, tx.Commit())
					require.Error(t, tx.Rollback())
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}

func TestBatchCanceledBeforeStart(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			ran := false
			err := s.Batch(ctx, func(ctx context.Context, tx *store.Tx) error { ran = true; return nil })
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, ran)
		})
	}
}

// TestBatchMemberIgnoresItsCallersCancellation: on SQLite a member's
// statements run detached from the context its closure captured, so a
// cancellation cannot interrupt (and roll back) the shared transaction.
func TestBatchMemberIgnoresItsCallersCancellation(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, storetest.Databases(t)[0]) // SQLite: the group commit
	k := newKey(t, s, "detached")
	caller, cancel := context.WithCancel(context.Background())
	err := s.Batch(caller, func(_ context.Context, tx *store.Tx) error {
		cancel() // the request's client went away while it ran
		_, _, err := tx.Admit(caller, k.ID, "nonce-detached", t0, false)
		return err
	})
	require.NoError(t, err)
	fresh, _, err := s.Admit(context.Background(), k.ID, "nonce-detached", t0, false)
	require.NoError(t, err)
	require.False(t, fresh, "the member's write committed")
}
