package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/account"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
)

// aadOf says what each sealed column's values are bound to.
var aadOf = map[string]func(key string) []byte{
	"access_keys":       merchant.SecretAAD,
	"payments":          payment.CustomerAAD,
	"operation_secrets": operation.AAD,
	"saved_cards":       savedcard.AAD,
	"webhook_endpoints": webhook.SecretAAD,
	"provider_accounts": account.AAD,
}

// masterKey: paygate master-key rotate. A new master key becomes active
// and every sealed value's data key is wrapped again under it, in one
// transaction; the old keys stay in the file so nothing sealed earlier is
// lost. Servers must be stopped: they hold the old keys in memory.
func masterKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		return usageError{"usage: paygate master-key rotate [--json]"}
	}
	fs := newFlagSet("master-key rotate", stderr)
	var db dbFlags
	db.register(fs, getenv)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	if db.masterKey != "" {
		return errors.New("the master key comes from PAYGATE_MASTER_KEY: rotate by hand (docs/operations.md), not with this command")
	}
	if err := db.ready(stderr); err != nil {
		return err
	}
	if db.databaseURL == "" {
		unlock, err := lockDataDir(db.dataDir)
		if err != nil {
			return fmt.Errorf("stop paygate serve first: %w", err)
		}
		defer unlock()
	}
	a, err := db.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	path := db.masterKeyFile
	if path == "" {
		path = filepath.Join(db.dataDir, "master.key")
	}
	if err := a.keyring.Rotate(path); err != nil {
		return err
	}
	counts := map[string]int{}
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		for _, c := range store.SealedColumns {
			aad := aadOf[c.Table]
			n, err := tx.RewrapSealed(ctx, c, func(key string, sealed []byte) ([]byte, error) {
				return a.keyring.Rewrap(sealed, aad(key))
			})
			if err != nil {
				return err
			}
			counts[c.Table] += n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("re-wrap (the new key is in the file, nothing was re-wrapped; run again): %w", err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"active_key": a.keyring.ActiveID(), "rewrapped": counts})
	}
	fmt.Fprintf(stdout, "master key %s is active; re-wrapped %d key secrets, %d customers, %d pending operations, %d saved cards, %d webhook secrets\n",
		a.keyring.ActiveID(), counts["access_keys"], counts["payments"], counts["operation_secrets"], counts["saved_cards"],
		counts["webhook_endpoints"])
	return nil
}
