package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// This file is the one place that reads the drivers' errors. It goes by
// their types and codes (PostgreSQL's SQLSTATE, SQLite's result code), never
// by their messages: a message changes with the driver's version and the
// server's language, a code does not.

// The kinds of driver failure callers act on. Classify tells them apart.
var (
	// ErrUnavailable: the database could not be reached, dropped the
	// connection, or is busy. The same request may succeed if retried
	// (docs/design/decisions.md section 3: 503 unavailable).
	ErrUnavailable = errors.New("store: the database is unavailable")
	// ErrDuplicate: a unique constraint or primary key refused the row.
	ErrDuplicate = errors.New("store: a row with this key already exists")
	// ErrAborted: the database aborted the transaction to break a
	// serialization conflict or a deadlock; running it again may succeed.
	ErrAborted = errors.New("store: the database aborted the transaction")
)

// PostgreSQL's SQLSTATE codes (PostgreSQL documentation, appendix A).
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgAdminShutdown        = "57P01"
	pgCrashShutdown        = "57P02"
	pgCannotConnectNow     = "57P03"
	pgConnectionClass      = "08" // connection_exception and its subclasses
)

// Classify returns ErrUnavailable, ErrDuplicate or ErrAborted when err
// (however wrapped) is a driver error of that kind, and nil otherwise.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == pgUniqueViolation:
			return ErrDuplicate
		case pgErr.Code == pgSerializationFailure || pgErr.Code == pgDeadlockDetected:
			return ErrAborted
		case pgErr.Code == pgAdminShutdown || pgErr.Code == pgCrashShutdown || pgErr.Code == pgCannotConnectNow ||
			strings.HasPrefix(pgErr.Code, pgConnectionClass):
			return ErrUnavailable
		}
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		// Extended result codes carry the primary code in their low byte
		// (sqlite.org/rescode.html): SQLITE_BUSY_SNAPSHOT is busy too.
		switch code := liteErr.Code(); {
		case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return ErrDuplicate
		case code&0xff == sqlite3.SQLITE_BUSY:
			return ErrUnavailable
		}
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &netErr) || errors.As(err, &connErr) {
		return ErrUnavailable
	}
	return nil
}

// Unreachable reports whether err means the database could not be reached
// or is busy, rather than that a statement failed: the request may succeed
// if retried (docs/design/decisions.md section 3: 503 unavailable).
func Unreachable(err error) bool { return errors.Is(Classify(err), ErrUnavailable) }
