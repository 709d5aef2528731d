package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestCardChecks: checks are counted within the window with the oldest of
// them, and purged past it (docs/design/decisions.md section 15).
func TestCardChecks(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			for _, at := range []time.Time{t0, t0.Add(2 * time.Hour), t0.Add(25 * time.Hour)} {
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.RecordCardCheck(ctx, "h1", at) }))
			}
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				n, oldest, err := tx.LockCardChecks(ctx, []string{"h1", "h2"}, t0.Add(time.Hour))
				require.Equal(t, 2, n)
				require.Equal(t, t0.Add(2*time.Hour), oldest)
				return err
			}))
			n, err := s.PurgeCardChecks(ctx, t0.Add(time.Hour))
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		})
	}
}
