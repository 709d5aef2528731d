package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/paygate/internal/store"
)

// txTemplate is one request's transaction, ready to be written again with
// fresh keys.
type txTemplate struct {
	rows []templateRow
	base uint64        // random start of the fresh keys of this run
	next atomic.Uint64 // copies made
	// write: the request was a write, which Paygate runs through
	// store.Batch (reads spend their nonce in a commit of its own).
	write bool
}

// templateRow is one INSERT of the template.
type templateRow struct {
	table string
	sql   string
	vals  []any
	fresh []int // positions of vals that take a fresh value in each copy
	bytes int   // size of the values, roughly as stored
}

// newTemplate decides which values are keys to renew in each copy: the
// values of primary key and unique columns, except those that point at a
// row the request did not write (the access key's id; keep, and the values
// of foreign keys to tables it did not write): those stay, pointing where
// the request's did. A renewed value is renewed wherever it occurs in
// the transaction, so the operation still points at its payment and the
// event at its payment.
func newTemplate(dialect store.Dialect, rows []capturedRow, keep map[string]bool) (*txTemplate, error) {
	written := map[string]bool{}
	for _, r := range rows {
		written[r.table.name] = true
	}
	for _, r := range rows {
		for i, c := range r.cols {
			if ref, ok := r.table.fkTo[c.name]; ok && !written[ref] && r.vals[i] != nil {
				keep[valueKey(r.vals[i])] = true
			}
		}
	}
	renew := map[string]bool{}
	for _, r := range rows {
		for i, c := range r.cols {
			v := r.vals[i]
			if v == nil || !r.table.unique[c.name] || r.table.fkTo[c.name] != "" || keep[valueKey(v)] {
				continue
			}
			switch v.(type) {
			case string, []byte:
				renew[valueKey(v)] = true
			default:
				return nil, fmt.Errorf("%s.%s: cannot make a fresh %T key", r.table.name, c.name, v)
			}
		}
	}
	var b [8]byte
	rand.Read(b[:])
	t := &txTemplate{base: binary.BigEndian.Uint64(b[:]) >> 16}
	for _, r := range rows {
		placeholders := make([]string, len(r.cols))
		for i, c := range r.cols {
			placeholders[i] = fmt.Sprintf("$%d", i+1)
			if dialect == store.Postgres {
				placeholders[i] += "::" + c.typ
			}
		}
		row := templateRow{table: r.table.name, vals: r.vals,
			sql: fmt.Sprintf(`INSERT INTO %q (%s) VALUES (%s)`, r.table.name,
				quoted(r.cols, func(c colInfo) string { return fmt.Sprintf("%q", c.name) }), strings.Join(placeholders, ", "))}
		for i, v := range r.vals {
			if v != nil && renew[valueKey(v)] {
				row.fresh = append(row.fresh, i)
			}
			row.bytes += valueSize(v)
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

func valueKey(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

func valueSize(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	return 8
}

// args are the values of copy n: its keys end in n (in hex for text, in
// bytes for a blob), the same length as the captured ones, so a UUID stays
// a UUID and a nonce stays a nonce.
func (r templateRow) args(n uint64) []any {
	out := append([]any(nil), r.vals...)
	for _, i := range r.fresh {
		switch v := r.vals[i].(type) {
		case string:
			k := min(12, len(v))
			out[i] = v[:len(v)-k] + fmt.Sprintf("%0*x", k, n&(1<<(4*k)-1))
		case []byte:
			b := append([]byte(nil), v...)
			var tail [8]byte
			binary.BigEndian.PutUint64(tail[:], n)
			k := min(8, len(b))
			copy(b[len(b)-k:], tail[8-k:])
			out[i] = b
		}
	}
	return out
}

// summary names the rows of the template: "nonces, payments, river_job ×2, … (1.4 kB)".
func (t *txTemplate) summary() string {
	count := map[string]int{}
	var order []string
	size := 0
	for _, r := range t.rows {
		if count[r.table] == 0 {
			order = append(order, r.table)
		}
		count[r.table]++
		size += r.bytes
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, name := range order {
		parts[i] = name
		if count[name] > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", name, count[name])
		}
	}
	return fmt.Sprintf("%s (%.1f kB)", strings.Join(parts, ", "), float64(size)/1000)
}

// dbCeiling is the database's own commit rate for one request's rows.
type dbCeiling struct {
	commits float64 // per second
	// grouped (SQLite): request transactions per second when they share
	// commits through store.Batch as Paygate's do.
	grouped   float64
	conns     int
	rows      int
	tables    string
	duration  time.Duration
	committed int64
	// cpuPerK is the CPU time of the database and of the committing
	// process (SQLite runs inside it) per thousand commits.
	cpuPerK time.Duration
	// pipelined (PostgreSQL): the same transactions with all their
	// statements and the commit sent together, one round trip each (a pgx
	// batch: one implicit transaction), and their CPU per thousand. Next
	// to commits and cpuPerK it tells what Paygate's one statement per
	// round trip costs (docs/benchmarks.md, "What is left").
	pipelined        float64
	pipelinedCPUPerK time.Duration
}

// measureDBCeiling commits copies of the template for d from conns
// goroutines, with no API in front, and returns commits per second. st is
// opened as Paygate opens it (store.Open: the same pragmas, the same pool).
// For a write on SQLite it measures as long again with the copies committed
// through store.Batch, Paygate's group commit.
func measureDBCeiling(ctx context.Context, st *store.Store, t *txTemplate, conns int, d time.Duration, meter *cpuMeter) (dbCeiling, error) {
	c, err := t.measureCPU(ctx, func(ctx context.Context, n uint64) error { return t.commitCopy(ctx, st.DB(), n) }, conns, d, meter)
	if err != nil {
		return c, err
	}
	if st.Dialect() == store.Postgres {
		p, err := t.measureCPU(ctx, func(ctx context.Context, n uint64) error { return t.commitPipelined(ctx, st.DB(), n) }, conns, d, meter)
		c.pipelined, c.pipelinedCPUPerK = p.commits, p.cpuPerK
		return c, err
	}
	if !t.write {
		return c, nil
	}
	grouped, err := t.measure(ctx, func(ctx context.Context, n uint64) error {
		return st.Batch(ctx, func(ctx context.Context, tx *store.Tx) error { return t.insertCopy(ctx, tx.SQL(), n) })
	}, conns, d)
	c.grouped = grouped.commits
	return c, err
}

// measureCPU is measure with the CPU of the database and of this process
// per thousand commits.
func (t *txTemplate) measureCPU(ctx context.Context, commit func(context.Context, uint64) error, conns int, d time.Duration, meter *cpuMeter) (dbCeiling, error) {
	before, err := meter.sample(ctx)
	if err != nil {
		return dbCeiling{}, err
	}
	c, err := t.measure(ctx, commit, conns, d)
	if err != nil {
		return c, err
	}
	after, err := meter.sample(ctx)
	if err != nil {
		return c, err
	}
	if use := after.since(before); c.committed > 0 {
		c.cpuPerK = (use.postgres + use.bench) * 1000 / time.Duration(c.committed)
	}
	return c, nil
}

func (t *txTemplate) measure(ctx context.Context, commit func(context.Context, uint64) error, conns int, d time.Duration) (dbCeiling, error) {
	var (
		done     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := time.Now()
	deadline := started.Add(d)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := commit(ctx, t.base+t.next.Add(1)); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	if firstErr != nil && !errors.Is(firstErr, context.Canceled) {
		return dbCeiling{}, fmt.Errorf("DB commit ceiling: %w", firstErr)
	}
	return dbCeiling{commits: float64(done.Load()) / elapsed.Seconds(), conns: conns, rows: len(t.rows),
		tables: t.summary(), duration: d, committed: done.Load()}, nil
}

func (t *txTemplate) commitCopy(ctx context.Context, db *sql.DB, n uint64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := t.insertCopy(ctx, tx, n); err != nil {
		return err
	}
	return tx.Commit()
}

func (t *txTemplate) insertCopy(ctx context.Context, tx *sql.Tx, n uint64) error {
	for _, r := range t.rows {
		if _, err := tx.ExecContext(ctx, r.sql, r.args(n)...); err != nil {
			return fmt.Errorf("insert into %s: %w", r.table, err)
		}
	}
	return nil
}

// commitPipelined writes copy n as one pgx batch on one of the pool's
// connections: the inserts go out together and PostgreSQL runs them as one
// implicit transaction, committed at the batch's end.
func (t *txTemplate) commitPipelined(ctx context.Context, db *sql.DB, n uint64) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(interface{ PgxConn() *pgx.Conn }) // the store's PostgreSQL connection
		if !ok {
			return fmt.Errorf("DB commit ceiling: a %T is not pgx's connection", driverConn)
		}
		b := &pgx.Batch{}
		for _, r := range t.rows {
			b.Queue(r.sql, r.args(n)...)
		}
		return pc.PgxConn().SendBatch(ctx, b).Close()
	})
}
