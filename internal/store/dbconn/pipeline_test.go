package dbconn_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/dbconn"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestPipeline: statements held back (a transaction's BEGIN and
// SAVEPOINT, Deferred writes) run in order, with the next statement or
// COMMIT; a held-back write that fails fails no later than the next
// statement and the transaction commits none of it; a transaction of held
// writes only still commits them; and rows read in a batch are the values
// pgx's own driver gives. The same on SQLite, where nothing is held back.
// It runs through the store, whose transactions (their savepoints, the
// errors Classify reads) are what the connections serve.
func TestPipeline(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			ctx := context.Background()
			_, err := s.DB().ExecContext(ctx, `CREATE TABLE pipeline_rows (id TEXT PRIMARY KEY, n BIGINT NOT NULL)`)
			require.NoError(t, err)
			insert := func(tx *store.Tx, id string, n int) error {
				_, err := tx.SQL().ExecContext(dbconn.Deferred(ctx), `INSERT INTO pipeline_rows (id, n) VALUES ($1, $2)`, id, n)
				return err
			}
			count := func(q interface {
				QueryRowContext(context.Context, string, ...any) *sql.Row
			}) (n int) {
				require.NoError(t, q.QueryRowContext(ctx, `SELECT COUNT(*) FROM pipeline_rows`).Scan(&n))
				return n
			}

			// In order: a held insert is seen by the read it went with.
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				require.NoError(t, insert(tx, "a", 1))
				require.Equal(t, 1, count(tx.SQL()))
				require.NoError(t, insert(tx, "b", 2))
				require.Equal(t, 2, count(tx.SQL()))
				return insert(tx, "c", 3) // goes with COMMIT
			}))
			require.Equal(t, 3, count(s.DB()))

			// Only held writes: COMMIT carries them all.
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				require.NoError(t, insert(tx, "d", 4))
				return insert(tx, "e", 5)
			}))
			require.Equal(t, 5, count(s.DB()))

			// A held insert that fails (a duplicate key) is reported by the
			// next statement at the latest; nothing of its transaction stays.
			err = s.InTx(ctx, func(tx *store.Tx) error {
				if err := insert(tx, "f", 6); err != nil {
					return err
				}
				if err := insert(tx, "a", 7); err != nil {
					return err
				}
				var n int
				return tx.SQL().QueryRowContext(ctx, `SELECT n FROM pipeline_rows WHERE id = 'a'`).Scan(&n)
			})
			require.ErrorIs(t, store.Classify(err), store.ErrDuplicate)
			require.Equal(t, 5, count(s.DB()))

			// ...and one that goes with COMMIT fails the commit, which leaves
			// no connection in the pool inside its aborted transaction (it
			// would hold its locks until used again).
			var dbName string
			if db.Name == "postgres" {
				require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT current_database()`).Scan(&dbName))
			}
			err = s.InTx(ctx, func(tx *store.Tx) error {
				require.NoError(t, insert(tx, "g", 8))
				return insert(tx, "b", 9)
			})
			require.ErrorIs(t, store.Classify(err), store.ErrDuplicate)
			if db.Name == "postgres" {
				admin, err := sql.Open("pgx", os.Getenv("PAYGATE_TEST_DATABASE_URL"))
				require.NoError(t, err)
				defer admin.Close()
				var stuck int
				require.NoError(t, admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = $1 AND state LIKE 'idle in transaction%'`, dbName).Scan(&stuck))
				require.Zero(t, stuck, "a connection left inside its failed transaction")
			}
			require.Equal(t, 5, count(s.DB()))

			// A savepoint held back with its writes: rolling back to it undoes
			// what came after, not what came before.
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				require.NoError(t, insert(tx, "h", 10))
				require.NoError(t, tx.Savepoint(ctx, "request"))
				require.NoError(t, insert(tx, "i", 11))
				require.NoError(t, tx.RollbackTo(ctx, "request"))
				return insert(tx, "j", 12)
			}))
			var ids []string
			rows, err := s.DB().QueryContext(ctx, `SELECT id FROM pipeline_rows WHERE id IN ('h', 'i', 'j') ORDER BY id`)
			require.NoError(t, err)
			for rows.Next() {
				var id string
				require.NoError(t, rows.Scan(&id))
				ids = append(ids, id)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []string{"h", "j"}, ids)

			// Rolled back before anything was sent: nothing stays, and the
			// pool's connection serves the next transaction.
			err = s.InTx(ctx, func(tx *store.Tx) error {
				require.NoError(t, insert(tx, "k", 13))
				return errors.New("changed my mind")
			})
			require.EqualError(t, err, "changed my mind")
			require.Equal(t, 7, count(s.DB()))

			if db.Name != "postgres" {
				return
			}
			// What was held back never ran (pgx could not encode an
			// argument, so the batch was never sent, BEGIN included): the
			// statement it went with fails, and so does every later one
			// and COMMIT, even for a caller that goes on regardless.
			err = s.InTx(ctx, func(tx *store.Tx) error {
				require.NoError(t, insert(tx, "m", 15))
				_, err := tx.SQL().ExecContext(dbconn.Deferred(ctx), `INSERT INTO pipeline_rows (id, n) VALUES ($1, $2)`, "n", make(chan int))
				require.NoError(t, err, "held back")
				var n int
				require.Error(t, tx.SQL().QueryRowContext(ctx, `SELECT n FROM pipeline_rows WHERE id = $1`, "a").Scan(&n))
				require.Error(t, insert(tx, "o", 16), "a write after it")
				return nil
			})
			require.Error(t, err, "COMMIT")
			require.Equal(t, 7, count(s.DB()), "nothing of it committed")
			// Read in a batch (BEGIN held back) or alone, every type comes
			// back as pgx's database/sql driver gives it.
			const typed = `SELECT $1::int8, 1::int2, 2::int4, 3::int8, 1.5::float4, 2.5::float8, true, '\x0102'::bytea, 'text'::text,
				123.45::numeric, NULL::text, '2026-11-24 10:00:00+00'::timestamptz, '{"a": 1}'::json, '{"b": 2}'::jsonb,
				'0193a6f0-0000-7000-8000-000000000000'::uuid, 'x'::varchar, 'name'::name, '2026-11-24'::date,
				ARRAY['a', 'b,c', NULL, 'd "e"']::varchar[], '{1,2}'::int8[], '1 day 2 hours'::interval, 12345678901234567890.5::numeric`
			scan := func(q interface {
				QueryContext(context.Context, string, ...any) (*sql.Rows, error)
			}) []any {
				rows, err := q.QueryContext(ctx, typed, 7) // with an argument: a statement a batch carries
				require.NoError(t, err)
				defer rows.Close()
				require.True(t, rows.Next())
				cols, err := rows.Columns()
				require.NoError(t, err)
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				require.NoError(t, rows.Scan(ptrs...))
				require.False(t, rows.Next())
				return vals
			}
			alone := scan(s.DB())
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				require.Equal(t, alone, scan(tx.SQL()), "read with BEGIN")
				require.NoError(t, insert(tx, "l", 14))
				require.Equal(t, alone, scan(tx.SQL()), "read with a held insert")
				return nil
			}))
		})
	}
}
