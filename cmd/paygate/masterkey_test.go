package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/vault"
)

func TestMasterKeyRotate(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"PAYGATE_DATA_DIR": t.TempDir()}
	srv := start(t, env)
	c := client.New(srv.url, srv.accessKey, srv.secret)
	require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payment-sessions",
		json.RawMessage(`{"order_id":"mk","amount_minor":5,"currency":"USD","customer":{"email":"a@b.example"}}`), nil))

	_, err := cli(t, env, "master-key", "rotate")
	require.ErrorContains(t, err, "stop paygate serve first")
	require.NoError(t, srv.stop())

	out, err := cli(t, env, "master-key", "rotate", "--json")
	require.NoError(t, err)
	var res struct {
		ActiveKey string         `json:"active_key"`
		Rewrapped map[string]int `json:"rewrapped"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, 1, res.Rewrapped["access_keys"])
	require.Equal(t, 1, res.Rewrapped["payments"])
	keyFile, err := os.ReadFile(filepath.Join(env["PAYGATE_DATA_DIR"], "master.key"))
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(keyFile)), 4, "the new key and the old one")

	// Every sealed value is now under the new key.
	s, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(env["PAYGATE_DATA_DIR"], "paygate.db")})
	require.NoError(t, err)
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
		for _, col := range store.SealedColumns {
			if _, err := tx.RewrapSealed(ctx, col, func(_ string, sealed []byte) ([]byte, error) {
				id, err := vault.KeyID(sealed)
				require.NoError(t, err)
				require.Equal(t, res.ActiveKey, id, col.Table)
				return sealed, nil
			}); err != nil {
				return err
			}
		}
		return nil
	}))
	s.Close()

	// The server starts on the rotated key file and the old key still signs.
	again := start(t, env)
	c = client.New(again.url, srv.accessKey, srv.secret)
	require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil))
}
