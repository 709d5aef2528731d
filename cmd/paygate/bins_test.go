package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestBINsCommand drives `paygate bins` through run() while a server runs
// on the same database, and asks the server what it answers.
func TestBINsCommand(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			env := dbEnv(t, db, dir)
			srv := start(t, env)
			c := client.New(srv.url, srv.accessKey, srv.secret)
			issuer := func(bin string) string {
				t.Helper()
				var info openapi.CardInformation
				require.NoError(t, c.JSON(ctx, "GET", "/api/v1/cards/information?bin="+bin, nil, &info))
				require.Equal(t, "bin_base", info.Source)
				return info.Issuer
			}
			versions := func() []binVersionJSON {
				t.Helper()
				out, err := cli(t, env, "bins", "versions", "--json")
				require.NoError(t, err)
				var vs []binVersionJSON
				require.NoError(t, json.Unmarshal([]byte(out), &vs))
				return vs
			}
			file := func(name, content string) string {
				p := filepath.Join(dir, name)
				require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
				return p
			}

			// The first start seeded the default version.
			vs := versions()
			require.Len(t, vs, 1)
			require.Equal(t, cardinfo.DefaultVersionID, vs[0].ID)
			require.True(t, vs[0].Active)
			require.Equal(t, "Paygate Sandbox Bank", issuer("424242"))
			out, err := cli(t, env, "bins", "versions")
			require.NoError(t, err)
			require.Regexp(t, `ID\s+LABEL\s+SOURCE\s+ROWS\s+CREATED\s+ACTIVE`, out)
			require.Regexp(t, cardinfo.DefaultVersionID+`\s+default\s+built-in\s+28\s+\S+\s+active`, out)

			// A wrong file is refused whole, with its line numbers.
			_, err = cli(t, env, "bins", "import", file("bad.csv", "bin,scheme\n424242,visa\n4242424242424242,visa\n"), "--activate")
			require.ErrorContains(t, err, "line 3: bin must be 6 or 8 digits")
			require.NotContains(t, err.Error(), "4242424242424242")
			require.Len(t, versions(), 1, "nothing of a refused file is kept")

			// Imported, not yet active.
			out, err = cli(t, env, "bins", "import", file("licensed.csv", "bin,scheme,issuer\n424242,visa,Licensed Bank\n"),
				"--label", "licensed 2026", "--json")
			require.NoError(t, err)
			var imported binVersionJSON
			require.NoError(t, json.Unmarshal([]byte(out), &imported))
			require.Equal(t, "licensed 2026", imported.Label)
			require.Equal(t, "licensed.csv", imported.Source)
			require.Equal(t, int64(1), imported.Rows)
			require.False(t, imported.Active)
			require.Equal(t, "Paygate Sandbox Bank", issuer("424242"))

			out, err = cli(t, env, "bins", "activate", imported.ID)
			require.NoError(t, err)
			require.Contains(t, out, "activated BIN version "+imported.ID+" (licensed 2026, 1 rows), active")
			require.Equal(t, "Licensed Bank", issuer("424242"), "the running server answers from the new version at once")

			// Flags after the file; the label defaults to the file name.
			out, err = cli(t, env, "bins", "import", file("next.csv", "bin,scheme,issuer\n424242,visa,Next Bank\n"), "--activate")
			require.NoError(t, err)
			require.Regexp(t, `imported BIN version \S+ \(next.csv, 1 rows\), active`, out)
			require.Equal(t, "Next Bank", issuer("424242"))
			vs = versions()
			require.Len(t, vs, 3)
			active := 0
			for _, v := range vs {
				if v.Active {
					active++
				}
			}
			require.Equal(t, 1, active, "exactly one version is active")

			_, err = cli(t, env, "bins", "activate", cardinfo.DefaultVersionID)
			require.NoError(t, err)
			require.Equal(t, "Paygate Sandbox Bank", issuer("424242"))

			_, err = cli(t, env, "bins", "activate", "no-such-version")
			require.ErrorContains(t, err, "no BIN version no-such-version")
			_, err = cli(t, env, "bins", "import", filepath.Join(dir, "missing.csv"))
			require.Error(t, err)
			for _, args := range [][]string{{"bins"}, {"bins", "import"}, {"bins", "import", "a.csv", "b.csv"},
				{"bins", "versions", "x"}, {"bins", "activate"}, {"bins", "frobnicate"}, {"bins", "versions", "--nope"}} {
				_, err = cli(t, env, args...)
				var u usageError
				require.True(t, errors.As(err, &u), "%s: %v", strings.Join(args, " "), err)
			}
		})
	}
}
