package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/paygate/paygate/internal/store"
)

// The DB commit ceiling writes again, with fresh keys, exactly the rows one
// request of the scenario wrote. Those rows are not written down here by
// hand (they change as Paygate does): they are captured from the database
// while one real request runs. Every table of Paygate's schema gets an AFTER
// INSERT trigger that copies the new row into a shadow table (bench_cap_*),
// with a global sequence number and, on PostgreSQL, the transaction id. The
// request's rows are then
//
//   - PostgreSQL: those of the transaction that inserted its nonce;
//   - SQLite: those between its nonce and its stored answer in sequence
//     order. SQLite has one writer at a time, so nothing else can come in
//     between; the nonce is a request's first write and the stored answer
//     its last (internal/server/pipeline.go), a read's only write is the
//     nonce.
//
// The rows are copied at insert time because the request's jobs soon update
// or delete some of them (the operation's sealed card data). Triggers and
// shadow tables are dropped before the load starts.

// tableInfo is what cloning a table's rows needs from the catalog.
type tableInfo struct {
	name   string
	cols   []colInfo
	pk     []string          // the primary key's columns
	unique map[string]bool   // in a primary key or a unique index
	fkTo   map[string]string // column → the table it references
}

// colInfo is a column. auto columns (serial, identity, SQLite's INTEGER
// PRIMARY KEY, generated) are left to the database.
type colInfo struct {
	name, typ string
	auto      bool
}

func (t tableInfo) shadow() string { return "bench_cap_" + t.name }

// insertable lists the columns a copy sets.
func (t tableInfo) insertable() []colInfo {
	var out []colInfo
	for _, c := range t.cols {
		if !c.auto {
			out = append(out, c)
		}
	}
	return out
}

func quoted(cols []colInfo, f func(c colInfo) string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = f(c)
	}
	return strings.Join(parts, ", ")
}

// schemaTables reads the tables of Paygate's schema (River's included).
func schemaTables(ctx context.Context, db *sql.DB, dialect store.Dialect) ([]tableInfo, error) {
	var listQ, colsQ, pkQ, uniqueQ, fkQ string
	if dialect == store.Postgres {
		listQ = `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname NOT LIKE 'bench_cap%' ORDER BY 1`
		colsQ = `SELECT a.attname, format_type(a.atttypid, a.atttypmod),
			a.attidentity <> '' OR a.attgenerated <> '' OR COALESCE(pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%', false)
			FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`
		pkQ = `SELECT a.attname FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = $1::text::regclass AND i.indisprimary`
		// A partial unique index (a subscription charge's period) holds
		// only for rows that match its condition; the copies of a
		// request's rows do not need fresh values for it.
		uniqueQ = `SELECT DISTINCT a.attname FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = $1::text::regclass AND i.indisunique AND i.indpred IS NULL`
		fkQ = `SELECT a.attname, c.confrelid::regclass::text FROM pg_constraint c
			JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
			WHERE c.contype = 'f' AND c.conrelid = $1::text::regclass`
	} else {
		listQ = `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'bench_cap%' ORDER BY 1`
		// An INTEGER PRIMARY KEY alone is the rowid: left to SQLite.
		colsQ = `SELECT name, type, hidden <> 0 OR (pk = 1 AND upper(type) = 'INTEGER'
			AND (SELECT COUNT(*) FROM pragma_table_xinfo($1) WHERE pk > 0) = 1)
			FROM pragma_table_xinfo($1) ORDER BY cid`
		pkQ = `SELECT name FROM pragma_table_info($1) WHERE pk > 0`
		uniqueQ = `SELECT ii.name FROM pragma_index_list($1) AS il, pragma_index_info(il.name) AS ii WHERE il."unique" = 1
			AND il.partial = 0 UNION SELECT name FROM pragma_table_info($1) WHERE pk > 0`
		fkQ = `SELECT "from", "table" FROM pragma_foreign_key_list($1)`
	}
	names, err := queryStrings(ctx, db, listQ)
	if err != nil {
		return nil, err
	}
	var tables []tableInfo
	for _, name := range names {
		t := tableInfo{name: name, unique: map[string]bool{}, fkTo: map[string]string{}}
		rows, err := db.QueryContext(ctx, colsQ, name)
		if err != nil {
			return nil, fmt.Errorf("columns of %s: %w", name, err)
		}
		for rows.Next() {
			var c colInfo
			if err := rows.Scan(&c.name, &c.typ, &c.auto); err != nil {
				rows.Close()
				return nil, err
			}
			t.cols = append(t.cols, c)
		}
		rows.Close()
		if t.pk, err = queryStrings(ctx, db, pkQ, name); err != nil {
			return nil, fmt.Errorf("primary key of %s: %w", name, err)
		}
		unique, err := queryStrings(ctx, db, uniqueQ, name)
		if err != nil {
			return nil, fmt.Errorf("unique columns of %s: %w", name, err)
		}
		for _, u := range unique {
			t.unique[u] = true
		}
		rows, err = db.QueryContext(ctx, fkQ, name)
		if err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", name, err)
		}
		for rows.Next() {
			var col, ref string
			if err := rows.Scan(&col, &ref); err != nil {
				rows.Close()
				return nil, err
			}
			t.fkTo[col] = ref
		}
		rows.Close()
		tables = append(tables, t)
	}
	return tables, nil
}

func queryStrings(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// capture is the triggers and shadow tables installed on a database.
type capture struct {
	db      *sql.DB
	dialect store.Dialect
	tables  []tableInfo
}

// startCapture installs the triggers, in one transaction on PostgreSQL.
func startCapture(ctx context.Context, st *store.Store) (*capture, error) {
	c := &capture{db: st.DB(), dialect: st.Dialect()}
	var err error
	if c.tables, err = schemaTables(ctx, c.db, c.dialect); err != nil {
		return nil, err
	}
	var ddl []string
	if c.dialect == store.Postgres {
		ddl = append(ddl, `CREATE SEQUENCE bench_capture_seq`,
			`CREATE FUNCTION bench_capture() RETURNS trigger LANGUAGE plpgsql AS $f$
			BEGIN
				EXECUTE format('INSERT INTO %I SELECT nextval(''bench_capture_seq''), txid_current(), ($1).*',
					'bench_cap_' || TG_TABLE_NAME) USING NEW;
				RETURN NULL;
			END $f$`)
		for _, t := range c.tables {
			ddl = append(ddl,
				fmt.Sprintf(`CREATE TABLE %q AS SELECT 0::bigint AS bench_seq, 0::bigint AS bench_tx, * FROM %q WITH NO DATA`, t.shadow(), t.name),
				fmt.Sprintf(`CREATE TRIGGER bench_capture AFTER INSERT ON %q FOR EACH ROW EXECUTE FUNCTION bench_capture()`, t.name))
		}
	} else {
		ddl = append(ddl, `CREATE TABLE bench_capture_log (seq INTEGER PRIMARY KEY, tbl TEXT)`)
		for _, t := range c.tables {
			cols := t.insertable()
			ddl = append(ddl,
				fmt.Sprintf(`CREATE TABLE %q AS SELECT 0 AS bench_seq, %s FROM %q WHERE 0`, t.shadow(),
					quoted(cols, func(c colInfo) string { return fmt.Sprintf("%q", c.name) }), t.name),
				// In a trigger, last_insert_rowid() is the row the trigger
				// itself inserted last: here the log's.
				fmt.Sprintf(`CREATE TRIGGER "bench_capture_%s" AFTER INSERT ON %q BEGIN
					INSERT INTO bench_capture_log (tbl) VALUES ('%s');
					INSERT INTO %q SELECT last_insert_rowid(), %s;
				END`, t.name, t.name, t.name, t.shadow(),
					quoted(cols, func(c colInfo) string { return fmt.Sprintf("NEW.%q", c.name) })))
		}
	}
	return c, c.ddl(ctx, "install capture", ddl)
}

// remove drops the triggers and shadow tables.
func (c *capture) remove(ctx context.Context) error {
	var ddl []string
	for _, t := range c.tables {
		if c.dialect == store.Postgres {
			ddl = append(ddl, fmt.Sprintf(`DROP TRIGGER IF EXISTS bench_capture ON %q`, t.name))
		} else {
			ddl = append(ddl, fmt.Sprintf(`DROP TRIGGER IF EXISTS "bench_capture_%s"`, t.name))
		}
		ddl = append(ddl, fmt.Sprintf(`DROP TABLE IF EXISTS %q`, t.shadow()))
	}
	if c.dialect == store.Postgres {
		ddl = append(ddl, `DROP FUNCTION IF EXISTS bench_capture()`, `DROP SEQUENCE IF EXISTS bench_capture_seq`)
	} else {
		ddl = append(ddl, `DROP TABLE IF EXISTS bench_capture_log`)
	}
	return c.ddl(ctx, "remove capture", ddl)
}

// ddl runs the statements in one transaction. They lock each table in
// turn while the server's own work goes on (jobs, the subscription
// scheduler's reads across tables): on PostgreSQL that can end in a
// deadlock, whose victim is simply run again.
func (c *capture) ddl(ctx context.Context, what string, ddl []string) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = c.exec(ctx, what, ddl); err == nil || !strings.Contains(err.Error(), "40P01") {
			break
		}
	}
	return err
}

// exec runs the statements in one transaction.
func (c *capture) exec(ctx context.Context, what string, ddl []string) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range ddl {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return tx.Commit()
}

// capturedRow is one row the request inserted.
type capturedRow struct {
	seq   int64
	table tableInfo
	cols  []colInfo
	vals  []any // PostgreSQL: text or nil, cast back on insert; SQLite: as stored
}

// rows returns the rows of the request whose nonce (and, for a write,
// Idempotency-Key) is given, in the order they were inserted.
func (c *capture) rows(ctx context.Context, nonce, idemKey string) ([]capturedRow, error) {
	var where string
	var args []any
	if c.dialect == store.Postgres {
		var tx int64
		if err := c.db.QueryRowContext(ctx, `SELECT bench_tx FROM bench_cap_nonces WHERE nonce = $1`, nonce).Scan(&tx); err != nil {
			return nil, fmt.Errorf("the template request's nonce was not captured: %w", err)
		}
		where, args = "bench_tx = $1", []any{tx}
	} else {
		var first int64
		if err := c.db.QueryRowContext(ctx, `SELECT bench_seq FROM bench_cap_nonces WHERE nonce = $1`, nonce).Scan(&first); err != nil {
			return nil, fmt.Errorf("the template request's nonce was not captured: %w", err)
		}
		last := first
		if idemKey != "" {
			err := c.db.QueryRowContext(ctx, `SELECT bench_seq FROM bench_cap_idempotency_keys WHERE idempotency_key = $1`, idemKey).Scan(&last)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, err
			}
		}
		where, args = "bench_seq BETWEEN $1 AND $2", []any{first, last}
	}
	var out []capturedRow
	for _, t := range c.tables {
		cols := t.insertable()
		sel := quoted(cols, func(c colInfo) string { return fmt.Sprintf("%q", c.name) })
		if c.dialect == store.Postgres {
			// As text: every PostgreSQL type reads back exactly from it.
			sel = quoted(cols, func(c colInfo) string { return fmt.Sprintf("%q::text", c.name) })
		}
		rows, err := c.db.QueryContext(ctx, fmt.Sprintf(`SELECT bench_seq, %s FROM %q WHERE %s`, sel, t.shadow(), where), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			r := capturedRow{table: t, cols: cols, vals: make([]any, len(cols))}
			dst := []any{&r.seq}
			for i := range r.vals {
				dst = append(dst, &r.vals[i])
			}
			if err := rows.Scan(dst...); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	if len(out) == 0 {
		return nil, errors.New("the template request wrote no rows")
	}
	return out, nil
}

// existing returns the values of rows that are the primary key of a row the
// request did not write (the access key's id in the nonce's key): a copy
// keeps them, pointing at the same rows as the request did.
func (c *capture) existing(ctx context.Context, rows []capturedRow) (map[string]bool, error) {
	written := map[string]bool{}
	for _, r := range rows {
		written[r.table.name] = true
	}
	out := map[string]bool{}
	for _, r := range rows {
		for i, col := range r.cols {
			v, ok := r.vals[i].(string)
			if !ok || !r.table.unique[col.name] || out[v] {
				continue
			}
			for _, t := range c.tables {
				if written[t.name] || len(t.pk) != 1 {
					continue
				}
				key := fmt.Sprintf("%q", t.pk[0])
				if c.dialect == store.Postgres {
					key += "::text" // any key type; the tables are small before the load
				}
				var one int
				err := c.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT 1 FROM %q WHERE %s = $1`, t.name, key), v).Scan(&one)
				if err == nil {
					out[v] = true
					break
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// captureTemplate sends one request of the scenario with the capture on and
// returns a template of its transaction. The request is the scenario's own
// (signed by its targeter) but is not part of the measured load.
func captureTemplate(ctx context.Context, st *store.Store, tr vegeta.Targeter) (*txTemplate, error) {
	c, err := startCapture(ctx, st)
	if err != nil {
		return nil, err
	}
	var (
		keep map[string]bool
		t    vegeta.Target
	)
	rows, err := func() ([]capturedRow, error) {
		if err := tr(&t); err != nil {
			return nil, err
		}
		req, err := t.Request()
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("template request: status %d", resp.StatusCode)
		}
		rows, err := c.rows(ctx, t.Header.Get("X-Nonce"), t.Header.Get("Idempotency-Key"))
		if err != nil {
			return nil, err
		}
		keep, err = c.existing(ctx, rows)
		return rows, err
	}()
	if rerr := c.remove(context.WithoutCancel(ctx)); err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	tpl, err := newTemplate(st.Dialect(), rows, keep)
	if err != nil {
		return nil, err
	}
	tpl.write = t.Method == http.MethodPost
	return tpl, nil
}
