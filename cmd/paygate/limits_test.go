package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestLimitsCommand drives `paygate limits` through run() beside a running
// server, on both databases: set, show, unset; a session over the daily
// collection allowance answers 422 limit_exceeded and `paygate call GET
// /api/v1/limits` shows the figures (docs/design/decisions.md section 12).
func TestLimitsCommand(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			env := dbEnv(t, db, t.TempDir())
			srv := start(t, env)
			key := srv.accessKey

			out, err := cli(t, env, "limits", "show", "--key", key, "--json")
			require.NoError(t, err)
			require.JSONEq(t, `[]`, out, "a new key has none")

			_, err = cli(t, env, "limits", "set", "--key", key, "--allowance", "collection", "--currency", "usd",
				"--daily", "3000", "--per-transaction", "2500")
			require.NoError(t, err)
			_, err = cli(t, env, "limits", "set", "--key", key, "--allowance", "payout", "--currency", "USD", "--daily", "9")
			require.NoError(t, err)

			c := client.New(srv.url, key, srv.secret)
			var ok json.RawMessage
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payment-sessions",
				json.RawMessage(`{"order_id":"l-1","amount_minor":1999,"currency":"USD"}`), &ok))
			resp, err := c.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions",
				Body: []byte(`{"order_id":"l-2","amount_minor":1999,"currency":"USD"}`)})
			require.NoError(t, err)
			require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Body))
			require.Contains(t, string(resp.Body), `"limit_exceeded"`)

			out, err = cli(t, env, "limits", "show", "--key", key, "--json")
			require.NoError(t, err)
			var rows []limitRow
			require.NoError(t, json.Unmarshal([]byte(out), &rows))
			require.Len(t, rows, 2)
			require.Equal(t, "collection", rows[0].Allowance)
			require.Equal(t, int64(1999), rows[0].ReservedMinor, "the open session holds its amount")
			require.Equal(t, int64(1001), *rows[0].RemainingMinor)
			require.Equal(t, "payout", rows[1].Allowance)
			require.Zero(t, rows[1].ReservedMinor)

			callEnv := map[string]string{"PAYGATE_URL": srv.url, "PAYGATE_ACCESS_KEY": key, "PAYGATE_SECRET": srv.secret}
			out, err = cli(t, callEnv, "call", "GET", "/api/v1/limits")
			require.NoError(t, err)
			require.Contains(t, out, `"reserved_minor": 1999`)

			_, err = cli(t, env, "limits", "unset", "--key", key, "--allowance", "collection", "--currency", "USD", "--daily")
			require.NoError(t, err)
			out, err = cli(t, env, "limits", "show", "--key", key)
			require.NoError(t, err)
			require.Contains(t, out, "2500")
			_, err = cli(t, env, "limits", "unset", "--key", key, "--allowance", "collection", "--currency", "USD")
			require.NoError(t, err)
			_, err = cli(t, env, "limits", "unset", "--key", key, "--allowance", "payout", "--currency", "USD")
			require.NoError(t, err)
			out, err = cli(t, env, "limits", "show", "--key", key)
			require.NoError(t, err)
			require.Contains(t, out, "unlimited")

			for _, bad := range [][]string{
				{"limits", "set", "--key", key, "--allowance", "refunds", "--currency", "USD", "--daily", "1"},
				{"limits", "set", "--key", key, "--allowance", "payout", "--currency", "ZZZ", "--daily", "1"},
				{"limits", "set", "--key", key, "--allowance", "payout", "--currency", "USD"},
				{"limits", "set", "--key", key, "--allowance", "payout", "--currency", "USD", "--daily", "-1"},
				{"limits", "show"},
				{"limits", "show", "--key", "AK_unknown"},
			} {
				_, err := cli(t, env, bad...)
				require.Error(t, err, bad)
			}
		})
	}
}
