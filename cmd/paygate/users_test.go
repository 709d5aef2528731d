package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestUsersCommand drives `paygate users` through run() on both databases:
// create prints a setup link under the public URL, list shows the grants,
// grant adds a key, setup-link replaces the link, disable marks the user;
// mistakes are usage errors (docs/design/decisions.md section 13).
func TestUsersCommand(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			env := dbEnv(t, db, t.TempDir())
			env["PAYGATE_PUBLIC_URL"] = "https://pay.example.com/"
			_, err := cli(t, env, "migrate") // a new data folder
			require.NoError(t, err)
			newKey := func(name string) string {
				out, err := cli(t, env, "keys", "create", "--name", name, "--json")
				require.NoError(t, err)
				var k struct {
					AccessKey string `json:"access_key"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &k))
				return k.AccessKey
			}
			keyA, keyB := newKey("a"), newKey("b")

			out, err := cli(t, env, "users", "create", "--email", "Ann@Example.com", "--key", keyA, "--role", "admin")
			require.NoError(t, err)
			link := regexp.MustCompile(`https://pay\.example\.com/cabinet/setup/[A-Za-z0-9_-]{43}\n`)
			require.Regexp(t, link, out)
			require.Contains(t, out, "ann@example.com")
			out, err = cli(t, env, "users", "create", "--email", "bob@example.com", "--key", keyA, "--key", keyB, "--json")
			require.NoError(t, err)
			var created struct {
				SetupLink string `json:"setup_link"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &created))
			require.Regexp(t, link, created.SetupLink+"\n")

			_, err = cli(t, env, "users", "grant", "--email", "ANN@example.com", "--key", keyB)
			require.NoError(t, err)
			out, err = cli(t, env, "users", "setup-link", "--email", "bob@example.com")
			require.NoError(t, err)
			require.Regexp(t, link, out)
			require.NotContains(t, out, created.SetupLink)
			_, err = cli(t, env, "users", "disable", "--email", "bob@example.com")
			require.NoError(t, err)

			out, err = cli(t, env, "users", "list", "--json")
			require.NoError(t, err)
			var rows []userRow
			require.NoError(t, json.Unmarshal([]byte(out), &rows))
			require.Len(t, rows, 2)
			require.Equal(t, "ann@example.com", rows[0].Email)
			require.Equal(t, "admin", rows[0].Role)
			require.Equal(t, []string{keyA, keyB}, rows[0].AccessKeys)
			require.False(t, rows[0].PasswordSet)
			require.Nil(t, rows[0].DisabledAt)
			require.Equal(t, "viewer", rows[1].Role, "the default role")
			require.NotNil(t, rows[1].DisabledAt)
			out, err = cli(t, env, "users", "list")
			require.NoError(t, err)
			require.Contains(t, out, "setup pending")

			for _, bad := range [][]string{
				{"users"},
				{"users", "create", "--email", "c@example.com"},
				{"users", "create", "--email", "c@example.com", "--key", keyA, "--role", "owner"},
				{"users", "create", "--email", "c@example.com", "--key", "ak_unknown"},
				{"users", "create", "--email", "not-an-email", "--key", keyA},
				{"users", "create", "--email", "ANN@example.com", "--key", keyA},
				{"users", "grant", "--email", "ann@example.com"},
				{"users", "grant", "--email", "nobody@example.com", "--key", keyA},
				{"users", "disable"},
				{"users", "remove", "--email", "ann@example.com"},
			} {
				_, err := cli(t, env, bad...)
				require.Error(t, err, bad)
			}
		})
	}
}
