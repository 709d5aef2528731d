package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/allowance"
)

// FindAllowance returns a key's setting for one allowance and currency, or
// nil when none is set (unlimited).
func (q Queries) FindAllowance(ctx context.Context, keyID string, a allowance.Kind, currency string) (*allowance.Setting, error) {
	rows, err := q.allowances(ctx, `WHERE access_key_id = $1 AND allowance = $2 AND currency = $3`, keyID, string(a), currency)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// ListAllowances returns a key's settings, by allowance then currency.
func (q Queries) ListAllowances(ctx context.Context, keyID string) ([]allowance.Setting, error) {
	return q.allowances(ctx, `WHERE access_key_id = $1 ORDER BY allowance, currency`, keyID)
}

func (q Queries) allowances(ctx context.Context, where string, args ...any) ([]allowance.Setting, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT access_key_id, allowance, currency, per_transaction_minor, daily_minor,
		updated_at FROM allowance_settings `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []allowance.Setting
	for rows.Next() {
		var (
			s          allowance.Setting
			kind       string
			per, daily sql.NullInt64
			updated    int64
		)
		if err := rows.Scan(&s.KeyID, &kind, &s.Currency, &per, &daily, &updated); err != nil {
			return nil, err
		}
		s.Allowance, s.UpdatedAt = allowance.Kind(kind), fromMicros(updated)
		s.PerTransactionMinor, s.DailyMinor = int64Ptr(per), int64Ptr(daily)
		out = append(out, s)
	}
	return out, rows.Err()
}

// PutAllowance stores a setting; a setting with both limits unset is
// removed (the key is unlimited again).
func (q Queries) PutAllowance(ctx context.Context, s allowance.Setting) error {
	if s.PerTransactionMinor == nil && s.DailyMinor == nil {
		_, err := q.q.ExecContext(ctx, `DELETE FROM allowance_settings
			WHERE access_key_id = $1 AND allowance = $2 AND currency = $3`, s.KeyID, string(s.Allowance), s.Currency)
		return err
	}
	_, err := q.q.ExecContext(ctx, `INSERT INTO allowance_settings (access_key_id, allowance, currency,
		per_transaction_minor, daily_minor, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (access_key_id, allowance, currency) DO UPDATE SET
		per_transaction_minor = excluded.per_transaction_minor, daily_minor = excluded.daily_minor,
		updated_at = excluded.updated_at`,
		s.KeyID, string(s.Allowance), s.Currency, nullInt64(s.PerTransactionMinor), nullInt64(s.DailyMinor),
		micros(s.UpdatedAt))
	return err
}

// ReserveAllowance is the check and the reservation in one step
// (docs/design/decisions.md section 12): the day's row is made if missing,
// then one UPDATE adds the amount only while used + reserved + amount stays
// within the daily limit. On PostgreSQL concurrent UPDATEs of the row wait
// for each other and re-check the condition against the committed sums (READ
// COMMITTED); SQLite runs one writer at a time. The rows affected decide.
func (q Queries) ReserveAllowance(ctx context.Context, h allowance.Hold, day string, daily *int64) (bool, error) {
	if _, err := q.q.ExecContext(ctx, `INSERT INTO allowance_usage (access_key_id, allowance, currency, day,
		used_minor, reserved_minor) VALUES ($1, $2, $3, $4, 0, 0) ON CONFLICT DO NOTHING`,
		h.KeyID, string(h.Allowance), h.Currency, day); err != nil {
		return false, err
	}
	query := `UPDATE allowance_usage SET reserved_minor = reserved_minor + $5
		WHERE access_key_id = $1 AND allowance = $2 AND currency = $3 AND day = $4`
	args := []any{h.KeyID, string(h.Allowance), h.Currency, day, h.AmountMinor}
	if daily != nil {
		// Subtracted, not added: used + reserved stays within the limit,
		// so no term overflows an int64 whatever the amount.
		query += ` AND $5 <= $6 - used_minor - reserved_minor`
		args = append(args, *daily)
	}
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO allowance_reservations (resource, resource_id, access_key_id,
		allowance, currency, day, amount_minor, consumed_minor, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 'reserved', $8, $8)`,
		h.Resource, h.ResourceID, h.KeyID, string(h.Allowance), h.Currency, day, h.AmountMinor, micros(h.At))
	return err == nil, err
}

// AllowanceUsage returns the sums of one day of an allowance.
func (q Queries) AllowanceUsage(ctx context.Context, keyID string, a allowance.Kind, currency, day string) (allowance.Usage, error) {
	var u allowance.Usage
	err := q.q.QueryRowContext(ctx, `SELECT used_minor, reserved_minor FROM allowance_usage
		WHERE access_key_id = $1 AND allowance = $2 AND currency = $3 AND day = $4`,
		keyID, string(a), currency, day).Scan(&u.UsedMinor, &u.ReservedMinor)
	if errors.Is(err, sql.ErrNoRows) {
		return allowance.Usage{}, nil
	}
	return u, err
}

// SettleAllowance ends a standing reservation: the state moves from
// reserved by compare-and-set, so of two settles only one finds it, and
// only that one moves the day's sums (in the day it was reserved in).
func (q Queries) SettleAllowance(ctx context.Context, resource, resourceID string, consumedMinor int64, at time.Time) error {
	var (
		keyID, kind, currency, day string
		amount                     int64
	)
	state := "released"
	if consumedMinor > 0 {
		state = "consumed"
	}
	err := q.q.QueryRowContext(ctx, `UPDATE allowance_reservations
		SET state = $3, consumed_minor = CASE WHEN $4 < amount_minor THEN $4 ELSE amount_minor END, updated_at = $5
		WHERE resource = $1 AND resource_id = $2 AND state = 'reserved'
		RETURNING access_key_id, allowance, currency, day, amount_minor`,
		resource, resourceID, state, consumedMinor, micros(at)).Scan(&keyID, &kind, &currency, &day, &amount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // none, or already settled
	}
	if err != nil {
		return err
	}
	used := min(consumedMinor, amount)
	_, err = q.q.ExecContext(ctx, `UPDATE allowance_usage SET reserved_minor = reserved_minor - $5,
		used_minor = used_minor + $6 WHERE access_key_id = $1 AND allowance = $2 AND currency = $3 AND day = $4`,
		keyID, kind, currency, day, amount, used)
	return err
}

func int64Ptr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func nullInt64(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}
