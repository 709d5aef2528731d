package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/paygate/paygate/internal/store"
)

// backup writes a consistent copy of the SQLite database (VACUUM INTO), also
// while serve runs: WAL lets it read beside the server's writes. PostgreSQL
// has its own tools (docs/operations.md).
func backup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", stderr)
	dataDir := fs.String("data-dir", envOr(getenv, "PAYGATE_DATA_DIR", "./paygate-data"), "folder of the SQLite database (PAYGATE_DATA_DIR)")
	to := fs.String("to", "", "the file to write; it must not exist")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if getenv("PAYGATE_DATABASE_URL") != "" {
		return usageError{"backup copies the embedded SQLite database; for PostgreSQL use pg_dump or base backups with WAL archiving (docs/operations.md)"}
	}
	if *to == "" {
		return usageError{"backup needs --to FILE"}
	}
	if _, err := os.Stat(*to); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s exists: give a new file", *to)
	}
	path := filepath.Join(*dataDir, "paygate.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no database at %s: %w", path, err)
	}
	s, err := store.Open(ctx, store.Config{SQLitePath: path})
	if err != nil {
		return err
	}
	defer s.Close()
	// The copy holds sealed secrets and payment records: owner only.
	f, err := os.OpenFile(*to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	if err := os.Remove(*to); err != nil { // VACUUM INTO wants to create it; the mode is set again below
		return err
	}
	if _, err := s.DB().ExecContext(ctx, "VACUUM INTO $1", *to); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Chmod(*to, 0o600); err != nil {
		return err
	}
	st, err := os.Stat(*to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes)\nThe master key is not in it: keep a copy of the master key file (or PAYGATE_MASTER_KEY) apart from it.\n",
		path, *to, st.Size())
	return nil
}
