package dbconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pipelining on PostgreSQL. Through database/sql every statement is a round
// trip of its own, and a payment's three transactions made 31 of them; on a
// saturated box each cost PostgreSQL and Paygate about 50 µs of CPU beyond
// the statement's work (docs/benchmarks.md, "Round trips, measured (fourth
// session)": at moderate load far less).
// pipeConn, the PostgreSQL connection under database/sql, holds back what
// needs no answer and sends it with the next statement that does, as one
// pgx batch:
//
//   - a transaction's BEGIN (and SAVEPOINT) goes with its first statement;
//   - a statement run with Deferred's context (a write whose result nobody
//     reads and whose failure fails the transaction) goes with the next
//     statement, or with COMMIT;
//   - COMMIT takes whatever is still held back.
//
// The order of the statements is kept: each goes out as it would have,
// only together with the ones after it. A held-back statement that fails
// fails the statement it went with, which returns that error; the
// transaction is then aborted, as it would have been. Outside a
// transaction nothing is held back. SQLite runs every statement at once.

type deferKey struct{}

// Deferred marks ctx for a write whose result is not read: inside a
// PostgreSQL transaction it is sent with the next statement that needs an
// answer, or with COMMIT. Use it only where an error of the write fails
// the whole transaction anyway: the error is reported by that later
// statement, not by the write. Its arguments are encoded when it is sent:
// a []byte given must not change before the transaction ends.
func Deferred(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferKey{}, true)
}

func isDeferred(ctx context.Context) bool {
	v, _ := ctx.Value(deferKey{}).(bool)
	return v
}

// pipeConnector makes pgx's database/sql connections pipeConns.
type pipeConnector struct{ driver.Connector }

func (c pipeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("dbconn: pgx's connector gave a %T", conn)
	}
	return &pipeConn{Conn: sc}, nil
}

// pipeConn is one PostgreSQL connection with the statements it holds back.
// database/sql uses a connection from one goroutine at a time.
type pipeConn struct {
	*stdlib.Conn
	held  []heldStmt
	inTx  bool
	begun bool  // the transaction's BEGIN has been sent
	lost  error // what was held back never ran (failed)
	txCtx context.Context
}

// PgxConn is the pgx connection underneath, for a caller of
// (*sql.Conn).Raw that sends batches of its own (the bench's pipelined
// ceiling). Nothing may be held back when it is used: outside a
// transaction nothing is.
func (c *pipeConn) PgxConn() *pgx.Conn { return c.Conn.Conn() }

type heldStmt struct {
	sql  string
	args []any
}

// forget drops what is held back, and the arguments with it (sealed card
// data among them), keeping the slice's room for the next transaction.
func (c *pipeConn) forget() {
	clear(c.held)
	c.held = c.held[:0]
}

var (
	_ driver.ConnBeginTx        = (*pipeConn)(nil)
	_ driver.ExecerContext      = (*pipeConn)(nil)
	_ driver.QueryerContext     = (*pipeConn)(nil)
	_ driver.ConnPrepareContext = (*pipeConn)(nil)
	_ driver.SessionResetter    = (*pipeConn)(nil)
)

func (c *pipeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn // database/sql takes another connection
	}
	if c.inTx {
		return nil, errors.New("dbconn: a transaction is already open on this connection")
	}
	begin := "begin"
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadCommitted:
		begin += " isolation level read committed"
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		begin += " isolation level repeatable read"
	case sql.LevelSerializable:
		begin += " isolation level serializable"
	default:
		return nil, fmt.Errorf("dbconn: isolation level %v is not supported", sql.IsolationLevel(opts.Isolation))
	}
	if opts.ReadOnly {
		begin += " read only"
	}
	c.inTx, c.begun, c.txCtx = true, false, ctx
	c.forget()
	c.held = append(c.held, heldStmt{sql: begin})
	return pipeTx{c}, nil
}

func namedArgs(named []driver.NamedValue) []any {
	args := make([]any, len(named))
	for i, v := range named {
		args[i] = v.Value
	}
	return args
}

func (c *pipeConn) ExecContext(ctx context.Context, query string, named []driver.NamedValue) (driver.Result, error) {
	if c.lost != nil {
		return nil, c.lost
	}
	if c.inTx && isDeferred(ctx) {
		c.held = append(c.held, heldStmt{sql: query, args: namedArgs(named)})
		return heldResult{}, nil
	}
	if len(c.held) == 0 {
		return c.Conn.ExecContext(ctx, query, named)
	}
	if len(named) == 0 {
		// Perhaps several statements (a migration): pgx sends these alone,
		// in the simple protocol, which a batch cannot carry.
		if err := c.flush(ctx); err != nil {
			return nil, err
		}
		return c.Conn.ExecContext(ctx, query, named)
	}
	tag, err := c.exec(ctx, heldStmt{sql: query, args: namedArgs(named)})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *pipeConn) QueryContext(ctx context.Context, query string, named []driver.NamedValue) (driver.Rows, error) {
	if c.lost != nil {
		return nil, c.lost
	}
	if len(c.held) == 0 {
		return c.Conn.QueryContext(ctx, query, named)
	}
	if len(named) == 0 {
		if err := c.flush(ctx); err != nil {
			return nil, err
		}
		return c.Conn.QueryContext(ctx, query, named)
	}
	br := c.send(ctx, heldStmt{sql: query, args: namedArgs(named)})
	fail := func(err error) (driver.Rows, error) {
		br.Close()
		return nil, c.failed(err)
	}
	if err := c.readHeld(br); err != nil {
		return fail(err)
	}
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	// Read up to the first row, as pgx's own rows do: its error, if any,
	// is the query's.
	more := rows.Next()
	if err := rows.Err(); err != nil {
		rows.Close()
		return fail(err)
	}
	return &pipeRows{br: br, rows: rows, types: c.Conn.Conn().TypeMap(), first: true, firstMore: more}, nil
}

// PrepareContext: a prepared statement would run on pgx's connection
// directly, ahead of what is held back after it, so there is none inside a
// transaction (the store and River prepare nothing).
func (c *pipeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.inTx {
		return nil, errors.New("dbconn: no prepared statements inside a PostgreSQL transaction (pipeline.go)")
	}
	return c.Conn.PrepareContext(ctx, query)
}

func (c *pipeConn) ResetSession(ctx context.Context) error {
	if c.inTx || len(c.held) > 0 {
		return driver.ErrBadConn
	}
	return c.Conn.ResetSession(ctx)
}

// send sends the held-back statements and then last, in one batch.
func (c *pipeConn) send(ctx context.Context, last heldStmt) pgx.BatchResults {
	b := &pgx.Batch{}
	for _, s := range c.held {
		b.Queue(s.sql, s.args...)
	}
	b.Queue(last.sql, last.args...)
	if c.inTx {
		c.begun = true
	}
	return c.Conn.Conn().SendBatch(ctx, b)
}

// readHeld reads the results of the held-back statements of br, and
// forgets them.
func (c *pipeConn) readHeld(br pgx.BatchResults) error {
	held := len(c.held)
	c.forget()
	for range held {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// exec sends what is held back and last, which answers with a command tag.
func (c *pipeConn) exec(ctx context.Context, last heldStmt) (pgconn.CommandTag, error) {
	br := c.send(ctx, last)
	err := c.readHeld(br)
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return tag, c.failed(err)
	}
	return tag, nil
}

// flush sends what is held back, alone.
func (c *pipeConn) flush(ctx context.Context) error {
	if len(c.held) == 0 {
		return nil
	}
	last := c.held[len(c.held)-1]
	c.held[len(c.held)-1] = heldStmt{}
	c.held = c.held[:len(c.held)-1]
	_, err := c.exec(ctx, last)
	return err
}

// failed takes note of a batch's error inside a transaction. When
// PostgreSQL ran the batch up to a statement that failed, its transaction
// is aborted, as it would have been had each statement gone alone: the
// caller may roll back to a savepoint and go on. When it did not run it
// (an argument pgx could not encode, a context already done, a lost
// connection, a BEGIN that never arrived), what was held back is lost:
// every later statement of the transaction, and its COMMIT, fail with
// that error, and nothing of it is committed.
func (c *pipeConn) failed(err error) error {
	if !c.inTx || c.lost != nil {
		return err
	}
	var pgErr *pgconn.PgError
	pg := c.Conn.Conn().PgConn()
	if !errors.As(err, &pgErr) || pg.IsClosed() || pg.TxStatus() != 'E' {
		c.lost = err
	}
	return err
}

// settle leaves the connection outside any transaction after a COMMIT or
// ROLLBACK that failed: rolled back, or closed (database/sql then drops
// it), never back in the pool inside a transaction holding its locks.
func (c *pipeConn) settle() {
	pg := c.Conn.Conn().PgConn()
	if pg.IsClosed() || pg.TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Conn.Conn().Exec(ctx, "rollback"); err != nil || pg.TxStatus() != 'I' {
		_ = c.Conn.Conn().Close(ctx)
	}
}

// errCommitRolledBack: PostgreSQL answered COMMIT with ROLLBACK, the
// transaction having failed (pgx reports the same as ErrTxCommitRollback).
var errCommitRolledBack = pgx.ErrTxCommitRollback

// pipeTx is a transaction on a pipeConn.
type pipeTx struct{ c *pipeConn }

func (t pipeTx) end() {
	t.c.forget()
	t.c.inTx, t.c.begun, t.c.lost, t.c.txCtx = false, false, nil, nil
}

// Commit sends what is held back with COMMIT. A transaction that sent
// nothing commits nothing; one that lost what it held back commits
// nothing either, and says why.
func (t pipeTx) Commit() error {
	c := t.c
	defer t.end()
	if c.lost != nil {
		c.forget()
		c.settle()
		return c.lost
	}
	if !c.begun && len(c.held) <= 1 {
		c.forget()
		return nil // nothing but its BEGIN held back: nothing to commit
	}
	tag, err := c.exec(c.txCtx, heldStmt{sql: "commit"})
	if err == nil && c.lost != nil {
		err = c.lost
	}
	if err != nil {
		c.settle()
		return err
	}
	if tag.String() == "ROLLBACK" {
		return errCommitRolledBack
	}
	return nil
}

// Rollback forgets what is held back and, if BEGIN was sent, rolls back.
func (t pipeTx) Rollback() error {
	c := t.c
	defer t.end()
	c.forget()
	if !c.begun {
		return nil
	}
	_, err := c.Conn.Conn().Exec(c.txCtx, "rollback")
	if err != nil {
		c.settle()
	}
	return err
}

// heldResult is the result of a held-back write: not known when it is
// given.
type heldResult struct{}

var errHeldResult = errors.New("dbconn: a deferred statement's result is not known")

func (heldResult) LastInsertId() (int64, error) { return 0, errHeldResult }
func (heldResult) RowsAffected() (int64, error) { return 0, errHeldResult }

// pipeRows are the rows of a query sent in a batch, given to database/sql
// as pgx's own driver gives them: integers as int64, floats as float64,
// bool, bytea and JSON as []byte, times as time.Time, the rest as their
// text.
type pipeRows struct {
	br        pgx.BatchResults
	rows      pgx.Rows
	types     *pgtype.Map
	decode    []func([]byte) (driver.Value, error)
	cols      []string
	first     bool // the first row has been read ahead
	firstMore bool
}

func (r *pipeRows) Columns() []string {
	if r.cols == nil {
		fds := r.rows.FieldDescriptions()
		r.cols = make([]string, len(fds))
		for i, fd := range fds {
			r.cols[i] = fd.Name
		}
	}
	return r.cols
}

func (r *pipeRows) Close() error {
	r.rows.Close()
	err := r.rows.Err()
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *pipeRows) Next(dest []driver.Value) error {
	more := r.firstMore
	if r.first {
		r.first = false
	} else {
		more = r.rows.Next()
	}
	if !more {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if r.decode == nil {
		fds := r.rows.FieldDescriptions()
		r.decode = make([]func([]byte) (driver.Value, error), len(fds))
		for i, fd := range fds {
			r.decode[i] = decoder(r.types, fd)
		}
	}
	for i, raw := range r.rows.RawValues() {
		if raw == nil {
			dest[i] = nil
			continue
		}
		v, err := r.decode[i](raw)
		if err != nil {
			return fmt.Errorf("dbconn: column %d: %w", i, err)
		}
		dest[i] = v
	}
	return nil
}

// decoder turns a column's wire value into the driver.Value pgx's own
// database/sql driver gives for its type.
func decoder(m *pgtype.Map, fd pgconn.FieldDescription) func([]byte) (driver.Value, error) {
	switch fd.DataTypeOID {
	case pgtype.BoolOID:
		return decodeAs(m, fd, func(v bool) (driver.Value, error) { return v, nil })
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID:
		return decodeAs(m, fd, func(v []byte) (driver.Value, error) { return v, nil })
	case pgtype.Int2OID:
		return decodeAs(m, fd, func(v int16) (driver.Value, error) { return int64(v), nil })
	case pgtype.Int4OID:
		return decodeAs(m, fd, func(v int32) (driver.Value, error) { return int64(v), nil })
	case pgtype.Int8OID:
		return decodeAs(m, fd, func(v int64) (driver.Value, error) { return v, nil })
	case pgtype.Float4OID:
		return decodeAs(m, fd, func(v float32) (driver.Value, error) { return float64(v), nil })
	case pgtype.Float8OID:
		return decodeAs(m, fd, func(v float64) (driver.Value, error) { return v, nil })
	case pgtype.TimestamptzOID:
		return decodeAs(m, fd, func(v pgtype.Timestamptz) (driver.Value, error) { return v.Value() })
	case pgtype.TimestampOID:
		return decodeAs(m, fd, func(v pgtype.Timestamp) (driver.Value, error) { return v.Value() })
	case pgtype.DateOID:
		return decodeAs(m, fd, func(v pgtype.Date) (driver.Value, error) { return v.Value() })
	}
	if fd.Format == pgtype.TextFormatCode {
		return func(raw []byte) (driver.Value, error) { return string(raw), nil }
	}
	// pgx's driver asks for every other type in text; a batch gets the
	// type map's format, binary for arrays, numeric, UUIDs: decode the
	// value and write it as PostgreSQL's text.
	t, ok := m.TypeForOID(fd.DataTypeOID)
	if !ok {
		return func(raw []byte) (driver.Value, error) { return string(raw), nil }
	}
	return func(raw []byte) (driver.Value, error) {
		v, err := t.Codec.DecodeValue(m, fd.DataTypeOID, fd.Format, raw)
		if err != nil {
			return nil, err
		}
		text, err := m.Encode(fd.DataTypeOID, pgtype.TextFormatCode, v, nil)
		return string(text), err
	}
}

func decodeAs[T any](m *pgtype.Map, fd pgconn.FieldDescription, value func(T) (driver.Value, error)) func([]byte) (driver.Value, error) {
	var v T
	plan := m.PlanScan(fd.DataTypeOID, fd.Format, &v)
	return func(raw []byte) (driver.Value, error) {
		if err := plan.Scan(raw, &v); err != nil {
			return nil, err
		}
		return value(v)
	}
}
