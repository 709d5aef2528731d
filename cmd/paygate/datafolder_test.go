package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestDataFolder: every command that opens the database says on its
// first line of stderr which data folder, database and master key it
// uses, and an admin command run where there is no data folder refuses
// to start a new one (a new master key, an empty database) unless --init
// is given (docs/cli.md, "Database flags").
func TestDataFolder(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "elsewhere")
			env := dbEnv(t, db, dir)
			runIt := func(args ...string) (string, string, error) {
				var stdout, stderr bytes.Buffer
				err := run(context.Background(), args, getenvFrom(env), strings.NewReader(""), &stdout, &stderr)
				return stdout.String(), stderr.String(), err
			}
			for _, args := range [][]string{{"keys", "list"}, {"keys", "create", "--name", "x"}, {"channels", "list"},
				{"users", "list"}, {"webhooks", "list"}, {"bins", "versions"}, {"master-key", "rotate"}} {
				_, stderr, err := runIt(args...)
				require.Error(t, err, "%v", args)
				require.Contains(t, err.Error(), "--init", "%v", args)
				require.Contains(t, err.Error(), "no master key file", "%v", args)
				first, _, _ := strings.Cut(stderr, "\n")
				require.Contains(t, first, "data folder "+dir, "%v: %s", args, stderr)
				if db.Name == "postgres" {
					require.Contains(t, first, "PostgreSQL database postgres://", "%v", args)
				} else {
					require.Contains(t, err.Error(), "no SQLite database", "%v", args)
					require.Contains(t, first, "SQLite database "+filepath.Join(dir, "paygate.db"))
				}
				_, statErr := os.Stat(dir)
				require.ErrorIs(t, statErr, os.ErrNotExist, "%v created the data folder", args)
			}
			_, stderr, err := runIt("keys", "list", "--init")
			require.NoError(t, err, stderr)
			require.FileExists(t, filepath.Join(dir, "master.key"))
			out, _, err := runIt("keys", "create", "--name", "x", "--json")
			require.NoError(t, err)
			require.Contains(t, out, "ak_sandbox_")
		})
	}
}
