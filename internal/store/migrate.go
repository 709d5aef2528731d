package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed migrations
var migrations embed.FS

// migrationLock is the PostgreSQL advisory lock key held while migrating, so
// several processes starting at once during a rollout migrate one at a time.
const migrationLock = 7_301_055_120

// Migrate brings Paygate's tables and River's up to date. On PostgreSQL it
// is safe to run from several processes at once (migrationLock). A SQLite
// database has one serve process (docs/cli.md, serve) and takes no such
// lock: two processes migrating it at once may both apply a migration, and
// the second fails.
func (s *Store) Migrate(ctx context.Context) error {
	if s.dialect == Postgres {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock)
	}
	sub, err := fs.Sub(migrations, "migrations/"+string(s.dialect))
	if err != nil {
		return err
	}
	dialect := goose.DialectPostgres
	if s.dialect == SQLite {
		dialect = goose.DialectSQLite3
	}
	p, err := goose.NewProvider(dialect, s.db, sub)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate paygate tables: %w", err)
	}
	if err := migrateRiver(ctx, s.dialect, s.db); err != nil {
		return fmt.Errorf("migrate river tables: %w", err)
	}
	return nil
}

func migrateRiver(ctx context.Context, d Dialect, db *sql.DB) error {
	if d == SQLite {
		m, err := rivermigrate.New(riversqlite.New(db), nil)
		if err != nil {
			return err
		}
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}
	m, err := rivermigrate.New(riverdatabasesql.New(db), nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// MigrationVersion is the newest applied Paygate migration.
func (s *Store) MigrationVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	return v, err
}
