package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/store"
)

// TestBackup copies the database while serve runs; the copy holds what was
// answered, and is readable by its owner only.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"PAYGATE_DATA_DIR": t.TempDir()}
	srv := start(t, env)
	defer srv.stop()
	c := client.New(srv.url, srv.accessKey, srv.secret)
	var p struct {
		PaymentID string `json:"payment_id"`
	}
	require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payment-sessions",
		json.RawMessage(`{"order_id":"backup","amount_minor":5,"currency":"USD"}`), &p))

	to := filepath.Join(t.TempDir(), "copy.db")
	out, err := cli(t, env, "backup", "--to", to)
	require.NoError(t, err)
	require.Contains(t, out, "master key is not in it")
	info, err := os.Stat(to)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	s, err := store.Open(ctx, store.Config{SQLitePath: to})
	require.NoError(t, err)
	defer s.Close()
	got, err := s.FindPaymentByID(ctx, p.PaymentID)
	require.NoError(t, err)
	require.Equal(t, "backup", got.OrderID)

	_, err = cli(t, env, "backup", "--to", to)
	require.ErrorContains(t, err, "exists", "never overwrites")
}
