package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestClassify provokes each kind of driver failure on the real databases
// and checks store.Classify names it from the driver's typed error
// (errors.go), not from its message.
func TestClassify(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storetest.Open(t, db)
			k := newKey(t, s, "dup")

			t.Run("unique violation", func(t *testing.T) {
				err := s.CreateKey(ctx, k)
				require.Error(t, err)
				require.ErrorIs(t, store.Classify(err), store.ErrDuplicate)
				require.False(t, store.Unreachable(err), "a refused row is not an outage")
			})
			t.Run("primary key violation", func(t *testing.T) {
				again := k
				again.AccessKey += "_other"
				err := s.CreateKey(ctx, again)
				require.ErrorIs(t, store.Classify(err), store.ErrDuplicate)
			})
			t.Run("wrapped", func(t *testing.T) {
				err := fmt.Errorf("create key: %w", s.CreateKey(ctx, k))
				require.ErrorIs(t, store.Classify(err), store.ErrDuplicate)
			})
			t.Run("other statement failures", func(t *testing.T) {
				_, err := s.DB().ExecContext(ctx, "SELECT * FROM no_such_table")
				require.Error(t, err)
				require.NoError(t, store.Classify(err))
				require.False(t, store.Unreachable(err))
			})
		})
	}
}

// TestClassifyMessagesDoNotCount: an error that merely says what a driver
// would say is not a driver error (the old check matched these strings).
func TestClassifyMessagesDoNotCount(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{"database is locked (5) (SQLITE_BUSY)", "dial tcp: connection refused",
		`duplicate key value violates unique constraint "x" (SQLSTATE 23505)`} {
		require.NoError(t, store.Classify(errors.New(msg)), msg)
		require.False(t, store.Unreachable(errors.New(msg)), msg)
	}
	require.NoError(t, store.Classify(nil))
	require.NoError(t, store.Classify(sql.ErrNoRows))
	require.NoError(t, store.Classify(context.Canceled))
}

// TestClassifyBusySQLite: a writer that finds another holding SQLite's write
// lock past its busy timeout gets SQLITE_BUSY, which is an outage to retry.
func TestClassifyBusySQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "paygate.db")
	s, err := store.Open(ctx, store.Config{SQLitePath: path})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))
	tx, err := s.Begin(ctx) // BEGIN IMMEDIATE: holds the write lock
	require.NoError(t, err)
	defer tx.Rollback()

	v := url.Values{}
	v.Add("_pragma", "busy_timeout(0)")
	v.Set("_txlock", "immediate")
	other, err := sql.Open("sqlite", "file:"+path+"?"+v.Encode())
	require.NoError(t, err)
	defer other.Close()
	_, err = other.BeginTx(ctx, nil)
	require.Error(t, err)
	require.ErrorIs(t, store.Classify(err), store.ErrUnavailable)
	require.True(t, store.Unreachable(err))
}

// TestClassifyPostgres: connection refused, a backend terminated under a
// statement (57P01) and a deadlock (40P01).
func TestClassifyPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("connection refused", func(t *testing.T) {
		_, err := store.Open(ctx, store.Config{DatabaseURL: "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=5"})
		require.Error(t, err)
		require.ErrorIs(t, store.Classify(err), store.ErrUnavailable)
	})

	dbURL := storetest.NewPostgresDatabase(t) // skips without PostgreSQL
	s, err := store.Open(ctx, store.Config{DatabaseURL: dbURL})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))

	t.Run("terminated backend", func(t *testing.T) {
		conn, err := s.DB().Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		var pid int
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid))
		_, err = s.DB().ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, "SELECT 1")
		require.Error(t, err)
		require.True(t, store.Unreachable(err), "%T %v", err, err)
	})

	t.Run("deadlock", func(t *testing.T) {
		_, err := s.DB().ExecContext(ctx, `CREATE TABLE locks (id INT PRIMARY KEY); INSERT INTO locks VALUES (1), (2)`)
		require.NoError(t, err)
		a, err := s.DB().BeginTx(ctx, nil)
		require.NoError(t, err)
		defer a.Rollback()
		b, err := s.DB().BeginTx(ctx, nil)
		require.NoError(t, err)
		defer b.Rollback()
		for _, tx := range []*sql.Tx{a, b} {
			_, err := tx.ExecContext(ctx, "SET LOCAL deadlock_timeout = '50ms'")
			require.NoError(t, err)
		}
		_, err = a.ExecContext(ctx, "UPDATE locks SET id = id WHERE id = 1")
		require.NoError(t, err)
		_, err = b.ExecContext(ctx, "UPDATE locks SET id = id WHERE id = 2")
		require.NoError(t, err)
		errA := make(chan error, 1)
		go func() {
			_, err := a.ExecContext(ctx, "UPDATE locks SET id = id WHERE id = 2") // waits for b
			errA <- err
		}()
		// b waits for a, which waits for b: PostgreSQL aborts one of them.
		ctxB, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, errB := b.ExecContext(ctxB, "UPDATE locks SET id = id WHERE id = 1")
		if errB == nil {
			errB = <-errA
		} else {
			b.Rollback() // frees a
			<-errA
		}
		require.Error(t, errB)
		require.ErrorIs(t, store.Classify(errB), store.ErrAborted, "%v", errB)
		require.False(t, store.Unreachable(errB))
	})
}
