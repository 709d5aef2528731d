package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/cardinfo"
)

// The BIN base (internal/cardinfo; bin_versions, bin_entries, bin_active
// in migrations/). Ranges are stored as
// BIGINT bounds of 8-digit BINs so that both databases compare them as
// numbers.

const binEntryColumns = `prefix, range_low, range_high, scheme, card_type, card_level, issuer, country,
	country_code, issuer_website, issuer_phone`

// binEntryBatch is how many entries one INSERT carries. PostgreSQL gains
// from long statements (fewer round trips); modernc's SQLite binds $N
// parameters in time that grows with their square, so it takes short ones
// (measured: 300,000 rows took 100 s in batches of 500, seconds in tens).
func binEntryBatch(d Dialect) int {
	if d == SQLite {
		return 10
	}
	return 500
}

// MatchBIN finds the active version's entry for a 6- or 8-digit BIN, in the
// order cardinfo.Store documents: the exact 8-digit entry, then the 6-digit
// prefix's, then the narrowest range that holds the BIN's whole span.
func (q Queries) MatchBIN(ctx context.Context, bin string) (cardinfo.Entry, bool, error) {
	if !cardinfo.ValidBIN(bin) {
		return cardinfo.Entry{}, false, fmt.Errorf("store: MatchBIN needs 6 or 8 digits")
	}
	low, high := cardinfo.Span(bin)
	// Three indexed probes of the active version, best first. (One WHERE
	// with ORs reads the whole table on PostgreSQL.)
	const active = `version_id = (SELECT version_id FROM bin_active)`
	row := q.q.QueryRowContext(ctx, `SELECT `+binEntryColumns+` FROM (
		SELECT 0 AS rank, 0 AS span, `+binEntryColumns+` FROM bin_entries WHERE `+active+` AND prefix = $1
		UNION ALL
		SELECT 1, 0, `+binEntryColumns+` FROM bin_entries WHERE `+active+` AND prefix = $2
		UNION ALL
		SELECT 2, range_high - range_low, `+binEntryColumns+` FROM bin_entries
		WHERE `+active+` AND prefix IS NULL AND range_low <= $3 AND range_high >= $4
	) m ORDER BY rank, span, range_low DESC LIMIT 1`, bin, bin[:6], mustInt(low), mustInt(high))
	e, err := scanBINEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return cardinfo.Entry{}, false, nil
	}
	return e, err == nil, err
}

func scanBINEntry(row interface{ Scan(...any) error }) (cardinfo.Entry, error) {
	var (
		e         cardinfo.Entry
		prefix    sql.NullString
		low, high sql.NullInt64
	)
	err := row.Scan(&prefix, &low, &high, &e.Scheme, &e.Type, &e.Level, &e.Issuer, &e.Country,
		&e.CountryCode, &e.IssuerWebsite, &e.IssuerPhone)
	e.BIN = prefix.String
	if low.Valid && high.Valid {
		e.RangeLow, e.RangeHigh = fmt.Sprintf("%08d", low.Int64), fmt.Sprintf("%08d", high.Int64)
	}
	return e, err
}

// mustInt reads an 8-digit BIN bound that cardinfo has already checked.
func mustInt(digits string) int64 {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		panic("store: not a BIN bound")
	}
	return n
}

// HasBINVersions reports whether any BIN version exists.
func (q Queries) HasBINVersions(ctx context.Context) (bool, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM bin_versions LIMIT 1) v`).Scan(&n)
	return n > 0, err
}

// CreateBINVersion stores a new, empty version. It reports false, and
// changes nothing, when a version with its id exists (the default version
// seeded by several processes at once).
func (q Queries) CreateBINVersion(ctx context.Context, v cardinfo.Version) (bool, error) {
	res, err := q.q.ExecContext(ctx, `INSERT INTO bin_versions (id, label, source, entry_count, created_at, activated_at)
		VALUES ($1, $2, $3, $4, $5, NULL) ON CONFLICT (id) DO NOTHING`,
		v.ID, v.Label, v.Source, v.Entries, micros(v.CreatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AddBINEntries adds entries to a version, a few hundred per statement.
func (q Queries) AddBINEntries(ctx context.Context, versionID string, es []cardinfo.Entry) error {
	for len(es) > 0 {
		chunk := es[:min(len(es), binEntryBatch(q.dialect))]
		es = es[len(chunk):]
		var (
			sb   strings.Builder
			args = make([]any, 0, len(chunk)*12)
		)
		sb.WriteString(`INSERT INTO bin_entries (version_id, ` + binEntryColumns + `) VALUES `)
		for i, e := range chunk {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(")
			for j := range 12 {
				if j > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "$%d", len(args)+j+1)
			}
			sb.WriteString(")")
			var prefix sql.NullString
			var low, high sql.NullInt64
			if e.IsRange() {
				low = sql.NullInt64{Int64: mustInt(e.RangeLow), Valid: true}
				high = sql.NullInt64{Int64: mustInt(e.RangeHigh), Valid: true}
			} else {
				prefix = sql.NullString{String: e.BIN, Valid: true}
			}
			args = append(args, versionID, prefix, low, high, e.Scheme, e.Type, e.Level, e.Issuer, e.Country,
				e.CountryCode, e.IssuerWebsite, e.IssuerPhone)
		}
		if _, err := q.q.ExecContext(ctx, sb.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// SetBINVersionEntries records how many entries a version holds, once they
// are all written.
func (q Queries) SetBINVersionEntries(ctx context.Context, versionID string, n int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE bin_versions SET entry_count = $2 WHERE id = $1`, versionID, n)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// ActivateBINVersion makes a version the one that answers; the previous
// one is no longer active. bin_active has a single row, so exactly one
// version is active whatever runs at the same time.
func (q Queries) ActivateBINVersion(ctx context.Context, versionID string, at time.Time) error {
	res, err := q.q.ExecContext(ctx, `UPDATE bin_versions SET activated_at = $2 WHERE id = $1`, versionID, micros(at))
	if err != nil {
		return err
	}
	if err := oneRow(res); err != nil {
		return err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO bin_active (singleton, version_id) VALUES (1, $1)
		ON CONFLICT (singleton) DO UPDATE SET version_id = excluded.version_id`, versionID)
	return err
}

const binVersionColumns = `v.id, v.label, v.source, v.entry_count, v.created_at, v.activated_at,
	CASE WHEN a.version_id IS NULL THEN 0 ELSE 1 END`

const binVersionsFrom = ` FROM bin_versions v LEFT JOIN bin_active a ON a.version_id = v.id`

func scanBINVersion(row interface{ Scan(...any) error }) (cardinfo.Version, error) {
	var (
		v         cardinfo.Version
		created   int64
		activated sql.NullInt64
		active    int
	)
	err := row.Scan(&v.ID, &v.Label, &v.Source, &v.Entries, &created, &activated, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return v, ErrNotFound
	}
	v.CreatedAt, v.ActivatedAt, v.Active = fromMicros(created), timePtr(activated), active == 1
	return v, err
}

// FindBINVersion finds a version by id.
func (q Queries) FindBINVersion(ctx context.Context, versionID string) (cardinfo.Version, error) {
	return scanBINVersion(q.q.QueryRowContext(ctx, `SELECT `+binVersionColumns+binVersionsFrom+` WHERE v.id = $1`, versionID))
}

// ListBINVersions lists every version, oldest first.
func (q Queries) ListBINVersions(ctx context.Context) ([]cardinfo.Version, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+binVersionColumns+binVersionsFrom+` ORDER BY v.created_at, v.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []cardinfo.Version{}
	for rows.Next() {
		v, err := scanBINVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
