// Package store keeps Paygate's state in PostgreSQL or SQLite. One SQL text
// serves both (docs/design/dependencies.md: modernc's SQLite takes $N
// placeholders, ON CONFLICT and RETURNING); where they differ, the Dialect
// decides. Times are stored as Unix microseconds (UTC).
//
// SQLite runs on one connection (River's advice): never use the Store while
// holding a Tx in the same goroutine, pass the Tx.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/store/dbconn"
)

// Dialect is the database behind a Store.
type Dialect string

// The two dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// ErrNotFound is returned by Find methods when no row matches.
var ErrNotFound = errors.New("store: not found")

// Config says which database to open.
type Config struct {
	// DatabaseURL is a postgres:// URL; empty means SQLite at SQLitePath.
	DatabaseURL string
	SQLitePath  string
	// MaxConns bounds the PostgreSQL pool (default 20). SQLite uses one.
	MaxConns int
	// SQLiteSynchronous is SQLite's synchronous pragma: FULL (default, an
	// answered 2xx survives power loss too) or NORMAL.
	SQLiteSynchronous string
}

// Store is the database. Its Queries run outside any transaction.
type Store struct {
	Queries
	db      *sql.DB
	dialect Dialect
	url     string // PostgreSQL's, for the listener's own connection
	queue   *river.Client[*sql.Tx]
	// handoff runs jobs queued here in this process (handoff.go).
	handoff *handoff.Workers
	// batch groups SQLite writers into shared commits (batch.go).
	batch  batcher
	closed chan struct{}
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Queries are the store's statements, bound to the database or to a Tx.
type Queries struct {
	q       querier
	dialect Dialect
	store   *Store
	tx      *Tx // nil outside a transaction
}

// Open opens (and for SQLite creates) the database. It does not migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	var (
		db      *sql.DB
		dialect Dialect
	)
	if cfg.DatabaseURL != "" {
		if !strings.HasPrefix(cfg.DatabaseURL, "postgres://") && !strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
			return nil, errors.New("database URL must start with postgres://")
		}
		dialect = Postgres
		// Statements that need no answer go with the next that does
		// (dbconn/pipeline.go).
		connector, err := dbconn.Postgres(cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		db = sql.OpenDB(connector)
		n := cfg.MaxConns
		if n <= 0 {
			n = 20
		}
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
		db.SetConnMaxIdleTime(5 * time.Minute)
	} else {
		dialect = SQLite
		if cfg.SQLitePath == "" {
			return nil, errors.New("no database: give a postgres:// URL or a SQLite path")
		}
		if err := os.MkdirAll(filepath.Dir(cfg.SQLitePath), 0o700); err != nil {
			return nil, err
		}
		connector, err := dbconn.SQLite(cfg.SQLitePath, cfg.SQLiteSynchronous)
		if err != nil {
			return nil, err
		}
		db = sql.OpenDB(connector)
		// One connection: SQLite writes one at a time, and River's SQLite
		// driver asks for it (docs/design/dependencies.md).
		db.SetMaxOpenConns(1)
		db.SetConnMaxIdleTime(0)
		db.SetConnMaxLifetime(0)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	st := &Store{db: db, dialect: dialect, url: cfg.DatabaseURL, closed: make(chan struct{})}
	st.Queries = Queries{q: db, dialect: dialect, store: st}
	return st, nil
}

// DB is the underlying pool, for River's driver.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect tells which database this is.
func (s *Store) Dialect() Dialect { return s.dialect }

// NewListener returns River's listener on the store's database (on a
// connection of its own, dbconn/listen.go), nil on SQLite.
func (s *Store) NewListener(schema string) *dbconn.Listener {
	if s.dialect != Postgres {
		return nil
	}
	return dbconn.NewListener(s.url, schema)
}

// UseQueue sets the River client that Tx.Enqueue inserts jobs with.
func (s *Store) UseQueue(c *river.Client[*sql.Tx]) { s.queue = c }

// Close closes the pool.
func (s *Store) Close() error {
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	return s.db.Close()
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Tx is a transaction. Its Queries run inside it; jobs enqueued through it
// commit or vanish with it (River's transactional enqueue).
type Tx struct {
	Queries
	tx      *sql.Tx
	store   *Store
	batched bool // a batch member's: the batch commits (batch.go)
	after   afterCommit
}

// Begin starts a transaction.
func (s *Store) Begin(ctx context.Context) (*Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	t := &Tx{tx: tx, store: s}
	t.Queries = Queries{q: tx, dialect: s.dialect, store: s, tx: t}
	return t, nil
}

// InTx runs fn in a transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback() // the connection back, what waits for the commit told
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Commit commits the transaction.
func (t *Tx) Commit() error {
	if t.batched {
		return errBatchedCommit
	}
	err := t.tx.Commit()
	t.after.fire(0, err == nil)
	return err
}

// Rollback abandons the transaction; after Commit it is a no-op.
func (t *Tx) Rollback() error {
	if t.batched {
		return errBatchedCommit
	}
	err := t.tx.Rollback()
	t.after.fire(0, false)
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// Savepoint marks a point RollbackTo can return to.
func (t *Tx) Savepoint(ctx context.Context, name string) error {
	_, err := t.tx.ExecContext(dbconn.Deferred(t.stmtCtx(ctx)), "SAVEPOINT "+name)
	if err == nil {
		t.after.mark(name)
	}
	return err
}

// RollbackTo undoes everything since the savepoint, jobs included.
func (t *Tx) RollbackTo(ctx context.Context, name string) error {
	_, err := t.tx.ExecContext(t.stmtCtx(ctx), "ROLLBACK TO SAVEPOINT "+name)
	if err == nil {
		t.after.undo(name)
	}
	return err
}

// SQL is the raw transaction, for River.
func (t *Tx) SQL() *sql.Tx { return t.tx }

// Enqueue inserts a River job in this transaction.
func (t *Tx) Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	if t.store.queue == nil {
		return errors.New("store: no job queue configured")
	}
	_, err := t.store.queue.InsertTx(t.stmtCtx(ctx), t.tx, args, opts)
	return err
}

// micros and fromMicros convert times to the stored form.
func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// RequeueRunningJobs makes the jobs River was running when the last
// process stopped available again, and returns how many. Only on SQLite,
// where one serve process owns the data folder (serve holds a lock file),
// so every job running at start was interrupted; on PostgreSQL other live
// processes may be running them, and River's rescuer takes over those of
// dead ones after --rescue-after. The runs handed off to the stopped
// process are its leases' rescue (serve).
func (s *Store) RequeueRunningJobs(ctx context.Context) (int64, error) {
	if s.dialect != SQLite {
		return 0, nil
	}
	res, err := s.db.ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE state = 'running'`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
