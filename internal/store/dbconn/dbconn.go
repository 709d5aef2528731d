// Package dbconn holds the store's connections to its databases, below
// database/sql: on PostgreSQL pgx's connections, which send the statements
// that need no answer together with the next one that does (pipeline.go),
// and River's listener on a connection of its own (listen.go); on SQLite
// the driver's connections, which keep their prepared statements
// (stmtcache.go). It knows the drivers and no table: the SQL is
// internal/store's (docs/operations.md, "Databases").
package dbconn

import (
	"context"
	"database/sql/driver"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
)

// Postgres returns the connector of the PostgreSQL database at
// databaseURL: pgx's database/sql connections, each holding back what
// needs no answer (pipeline.go).
func Postgres(databaseURL string) (driver.Connector, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	return pipeConnector{stdlib.GetConnector(*cfg, stdlib.OptionShouldPing(shouldPing))}, nil
}

// pingAfterIdle: a pooled PostgreSQL connection idle longer is pinged
// before it is used again. pgx pings after one second, and every ping is
// a transaction of its own: an idle worker, whose polls take a connection
// every two seconds, committed twice as often (docs/operations.md,
// "Background jobs").
const pingAfterIdle = 10 * time.Second

func shouldPing(_ context.Context, p stdlib.ShouldPingParams) bool {
	return p.IdleDuration > pingAfterIdle
}

// SQLite returns the connector of the SQLite database file at path, with
// synchronous as its synchronous pragma (FULL when empty): WAL, a busy
// timeout of 10 s, foreign keys on, immediate transactions, and connections
// that keep their prepared statements (stmtcache.go).
func SQLite(path, synchronous string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(sqliteDSN(path, synchronous))
	if err != nil {
		return nil, err
	}
	return stmtCacheConnector{c}, nil
}

func sqliteDSN(path, synchronous string) string {
	if synchronous == "" {
		synchronous = "FULL"
	}
	v := url.Values{}
	v.Add("_pragma", "journal_mode(WAL)")
	v.Add("_pragma", "synchronous("+synchronous+")")
	v.Add("_pragma", "busy_timeout(10000)")
	v.Add("_pragma", "foreign_keys(1)")
	v.Set("_txlock", "immediate")
	return "file:" + path + "?" + v.Encode()
}
