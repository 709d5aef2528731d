package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestMigrate: the migrations apply to an empty database of each kind, and
// again as a no-op from other processes (each a store of its own); every
// process then reads the same version and uses Paygate's tables and
// River's. On PostgreSQL the processes migrate all at once, as processes
// starting together during a rollout (docs/operations.md, "Migrations
// during a rollout"; the advisory lock). SQLite has one serve process
// (docs/cli.md, serve), so there they migrate one after the other.
func TestMigrate(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			cfg := db.Config(t) // one database, opened by every process
			const processes = 4
			stores := make([]*store.Store, processes)
			for i := range stores {
				s, err := store.Open(ctx, cfg)
				require.NoError(t, err)
				t.Cleanup(func() { s.Close() })
				stores[i] = s
			}
			var wg sync.WaitGroup
			errs := make([]error, processes)
			for i, s := range stores {
				if db.Name == "postgres" {
					wg.Go(func() { errs[i] = s.Migrate(ctx) })
				} else {
					errs[i] = s.Migrate(ctx)
				}
			}
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "process %d", i)
			}

			want, err := stores[0].MigrationVersion(ctx)
			require.NoError(t, err)
			require.GreaterOrEqual(t, want, int64(1))
			for _, s := range stores {
				require.NoError(t, s.Migrate(ctx), "again")
				v, err := s.MigrationVersion(ctx)
				require.NoError(t, err)
				require.Equal(t, want, v)
				var n int
				require.NoError(t, s.DB().QueryRowContext(ctx,
					`SELECT (SELECT count(*) FROM operations) + (SELECT count(*) FROM river_job)`).Scan(&n))
				require.Zero(t, n)
			}
		})
	}
}
