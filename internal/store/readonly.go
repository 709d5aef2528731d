package store

import (
	"context"
	"database/sql"
)

// ReadOnly runs fn's reads in one read-only transaction on PostgreSQL,
// where every statement outside a transaction is a transaction (a commit)
// of its own: a job's reads before its provider call or webhook attempt
// cost one commit instead of one each. On SQLite fn reads through the
// store: a read there commits nothing, and a transaction would take the
// write lock (_txlock=immediate) for no gain.
func (s *Store) ReadOnly(ctx context.Context, fn func(q Queries) error) error {
	if s.dialect == SQLite {
		return fn(s.Queries)
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	t := &Tx{tx: tx, store: s}
	t.Queries = Queries{q: tx, dialect: s.dialect, store: s, tx: t}
	if err := fn(t.Queries); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
