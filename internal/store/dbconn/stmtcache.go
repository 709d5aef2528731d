package dbconn

import (
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
)

// The SQLite driver parses every query it is given afresh: for a request's
// dozen statements (River's job insert is a long one) parsing was a quarter
// of a request's CPU. stmtCacheConnector keeps each connection's prepared
// statements by SQL text and reuses them; the driver resets a statement
// after each use. PostgreSQL needs none of this: pgx caches statements
// itself.

// stmtCacheSize bounds the statements kept per connection. The store and
// River use fewer than this; a miss only costs a parse.
const stmtCacheSize = 256

// stmtCacheConnector makes the SQLite driver's connections cachingConns.
type stmtCacheConnector struct{ driver.Connector }

func (c stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, need := range []any{(*driver.ExecerContext)(nil), (*driver.QueryerContext)(nil), (*driver.ConnBeginTx)(nil), (*driver.ConnPrepareContext)(nil)} {
		if !reflect.TypeOf(conn).Implements(reflect.TypeOf(need).Elem()) {
			conn.Close()
			return nil, errors.New("dbconn: the SQLite driver's connection lacks an interface the statement cache needs")
		}
	}
	return &cachingConn{Conn: conn, stmts: make(map[string]*cachedStmt)}, nil
}

// cachingConn is one connection with its statements. database/sql uses a
// connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	driver.Conn
	stmts map[string]*cachedStmt
	clock uint64 // use counter, for evicting the least recently used
}

type cachedStmt struct {
	stmt    driver.Stmt
	used    uint64
	inUse   bool // rows from it are open: a second query prepares its own
	evicted bool // close it when its rows close
}

// statement returns the cached statement for query, preparing it on a
// miss, or nil when it is busy (its rows are still being read).
func (c *cachingConn) statement(ctx context.Context, query string) (*cachedStmt, error) {
	c.clock++
	if s, ok := c.stmts[query]; ok {
		if s.inUse {
			return nil, nil
		}
		s.used = c.clock
		return s, nil
	}
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(c.stmts) >= stmtCacheSize {
		c.evictOldest()
	}
	s := &cachedStmt{stmt: st, used: c.clock}
	c.stmts[query] = s
	return s, nil
}

func (c *cachingConn) evictOldest() {
	var oldest string
	var at uint64
	for q, s := range c.stmts {
		if oldest == "" || s.used < at {
			oldest, at = q, s.used
		}
	}
	s := c.stmts[oldest]
	delete(c.stmts, oldest)
	if s.inUse {
		s.evicted = true
		return
	}
	s.stmt.Close()
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	}
	return s.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.inUse = true
	return &cachedRows{sqliteRows: rows.(sqliteRows), s: s}, nil
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *cachingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *cachingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *cachingConn) Close() error {
	for q, s := range c.stmts {
		s.stmt.Close()
		delete(c.stmts, q)
	}
	return c.Conn.Close()
}

// sqliteRows is what the driver's rows offer; cachedRows passes it all on.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// cachedRows frees its statement for the next query when closed.
type cachedRows struct {
	sqliteRows
	s *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.sqliteRows.Close()
	r.s.inUse = false
	if r.s.evicted {
		r.s.stmt.Close()
	}
	return err
}
