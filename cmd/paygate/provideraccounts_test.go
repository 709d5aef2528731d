package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestProvidersAndChannelsCommands drives `paygate providers` and
// `paygate channels create|assign --position` through run() on both
// databases (docs/design/decisions.md section 16): a secret read from a
// file is never printed, a refusal exits non-zero and stores nothing, and
// `channels list --key` shows the routing order.
func TestProvidersAndChannelsCommands(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			dir := t.TempDir()
			env := dbEnv(t, db, filepath.Join(dir, "data"))
			const apiKey = "sandbox-acquirer-key-do-not-print"
			keyFile := filepath.Join(dir, "api-key")
			require.NoError(t, os.WriteFile(keyFile, []byte(apiKey+"\n"), 0o600))

			_, err := cli(t, env, "migrate") // a new data folder
			require.NoError(t, err)

			// Refusals: nothing stored.
			_, err = cli(t, env, "providers", "add", "--name", "acq")
			require.ErrorAs(t, err, new(usageError))
			_, err = cli(t, env, "providers", "add", "--name", "Bad Name", "--kind", "sandbox", "--url", "http://127.0.0.1:9", "--api-key-file", keyFile)
			require.ErrorContains(t, err, "--name")
			require.NotErrorAs(t, err, new(usageError))
			_, err = cli(t, env, "providers", "add", "--name", "acq", "--kind", "sandbox", "--url", "http://127.0.0.1:9", "--api-key-file", filepath.Join(dir, "missing"))
			require.ErrorContains(t, err, "--api-key-file")
			_, err = cli(t, env, "providers", "add", "--name", "acq", "--kind", "sandbox", "--url", "http://127.0.0.1:9", "--api-key-file", keyFile, "--environment", "production")
			require.ErrorContains(t, err, "refuses sandbox accounts")
			out, err := cli(t, env, "providers", "list", "--json")
			require.NoError(t, err)
			var rows []providerRow
			require.NoError(t, json.Unmarshal([]byte(out), &rows))
			require.Len(t, rows, 1, "the built-in sandbox only")
			require.True(t, rows[0].Builtin)

			out, err = cli(t, env, "providers", "add", "--name", "acq", "--kind", "sandbox", "--url", "http://127.0.0.1:9/", "--api-key-file", keyFile)
			require.NoError(t, err)
			require.Contains(t, out, "added provider account acq")
			require.NotContains(t, out, apiKey)
			out, err = cli(t, env, "providers", "list")
			require.NoError(t, err)
			require.Regexp(t, `acq\s+sandbox\s+http://127\.0\.0\.1:9\s+enabled`, out)
			require.NotContains(t, out, apiKey)

			_, err = cli(t, env, "channels", "create", "--alias", "acq-card", "--provider", "acq", "--methods", "card,cash", "--currencies", "USD")
			require.ErrorContains(t, err, `"cash"`)
			_, err = cli(t, env, "channels", "create", "--alias", "acq-card", "--provider", "nope", "--methods", "card", "--currencies", "USD")
			require.ErrorContains(t, err, "no provider account named nope")
			out, err = cli(t, env, "channels", "create", "--alias", "acq-card", "--provider", "acq", "--methods", "card", "--currencies", "usd,EUR")
			require.NoError(t, err)
			require.Contains(t, out, "created channel acq-card on acq")

			out, err = cli(t, env, "keys", "create", "--name", "shop", "--json")
			require.NoError(t, err)
			var k struct {
				AccessKey string `json:"access_key"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &k))
			_, err = cli(t, env, "channels", "assign", "--key", k.AccessKey, "--channel", "acq-card", "--position", "1")
			require.NoError(t, err)
			_, err = cli(t, env, "channels", "assign", "--key", k.AccessKey, "--channel", "sandbox", "--position", "2")
			require.NoError(t, err)
			out, err = cli(t, env, "channels", "list", "--key", k.AccessKey, "--json")
			require.NoError(t, err)
			var chans []row
			require.NoError(t, json.Unmarshal([]byte(out), &chans))
			require.Equal(t, "acq-card", chans[0].Alias, "placed first")
			require.Equal(t, []string{"USD", "EUR"}, chans[0].Currencies)
			require.Equal(t, "sandbox", chans[1].Alias)

			_, err = cli(t, env, "providers", "disable", "acq")
			require.NoError(t, err)
			out, err = cli(t, env, "channels", "list", "--key", k.AccessKey)
			require.NoError(t, err)
			require.Regexp(t, `1\s+acq-card\s+acq/default.*disabled`, out)
			out, err = cli(t, env, "providers", "list", "--json")
			require.NoError(t, err)
			require.True(t, strings.Contains(out, `"status":"disabled"`), out)
			require.NotContains(t, out, apiKey)
			_, err = cli(t, env, "providers", "enable", "acq")
			require.NoError(t, err)
			out, err = cli(t, env, "channels", "list", "--key", k.AccessKey)
			require.NoError(t, err)
			require.Regexp(t, `1\s+acq-card\s+acq/default.*enabled`, out)
			_, err = cli(t, env, "providers", "enable", "nobody")
			require.ErrorContains(t, err, "no provider account named nobody")
		})
	}
}
