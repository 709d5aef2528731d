package dbconn_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/dbconn"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestListener: River's topics arrive without the schema, a wait River
// interrupts leaves the connection usable, and a queue that had an insert
// notification is poked until it has been quiet for Linger.
func TestListener(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewPostgresDatabase(t)
	connector, err := dbconn.Postgres(url)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	defer db.Close()
	l := dbconn.NewListener(url, "")
	l.Poke, l.Linger = 20*time.Millisecond, 100*time.Millisecond
	require.NoError(t, l.Connect(ctx))
	defer l.Close(ctx)
	require.Equal(t, "public", l.Schema())
	require.NoError(t, l.Listen(ctx, "river_insert"))

	// Interrupted as River interrupts it to listen or unlisten.
	waitCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = l.WaitForNotification(waitCtx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, l.Ping(ctx))

	_, err = db.ExecContext(ctx, `SELECT pg_notify('public.river_insert', '{"queue": "default"}')`)
	require.NoError(t, err)
	n, err := l.WaitForNotification(ctx)
	require.NoError(t, err)
	require.Equal(t, "river_insert", n.Topic)
	require.Equal(t, `{"queue": "default"}`, n.Payload)

	// Pokes follow, then stop once the queue was quiet for Linger.
	pokes := 0
	for {
		waitCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		p, err := l.WaitForNotification(waitCtx)
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			break
		}
		require.Equal(t, *n, *p)
		pokes++
		require.Less(t, pokes, 20, "pokes never stop")
	}
	require.GreaterOrEqual(t, pokes, 2)
	require.NoError(t, l.Ping(ctx))
}
