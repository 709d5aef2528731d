package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/subscription"
)

const mandateColumns = `id, access_key_id, status, payment_id, channel_id, customer_reference, disclosure_version,
	saved_card_id, card_mask, card_exp_month, card_exp_year, consent_at, evidence, version, created_at, updated_at`

// CreateMandate stores a new mandate.
func (q *Tx) CreateMandate(ctx context.Context, m *subscription.Mandate) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO mandates (`+mandateColumns+`) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		m.ID, m.AccessKeyID, string(m.Status), m.PaymentID, m.ChannelID, m.CustomerReference, m.DisclosureVersion,
		m.SavedCardID, m.CardMask, m.CardExpMonth, m.CardExpYear, nullMicros(m.ConsentAt), rawOrNull(m.Evidence),
		m.Version, micros(m.CreatedAt), micros(m.UpdatedAt))
	return err
}

// UpdateMandate stores a mandate's mutable fields if its version is still
// m.Version (compare-and-set), and bumps it; subscription.ErrConflict
// otherwise.
func (q *Tx) UpdateMandate(ctx context.Context, m *subscription.Mandate) error {
	res, err := q.q.ExecContext(ctx, `UPDATE mandates SET status = $3, saved_card_id = $4, card_mask = $5,
		card_exp_month = $6, card_exp_year = $7, consent_at = $8, evidence = $9, updated_at = $10,
		version = version + 1 WHERE id = $1 AND version = $2`,
		m.ID, m.Version, string(m.Status), m.SavedCardID, m.CardMask, m.CardExpMonth, m.CardExpYear,
		nullMicros(m.ConsentAt), rawOrNull(m.Evidence), micros(m.UpdatedAt))
	if err := casRow(res, err); err != nil {
		return err
	}
	m.Version++
	return nil
}

func scanMandate(row interface{ Scan(...any) error }) (*subscription.Mandate, error) {
	var (
		m                subscription.Mandate
		status           string
		consent          sql.NullInt64
		evidence         sql.NullString
		created, updated int64
	)
	err := row.Scan(&m.ID, &m.AccessKeyID, &status, &m.PaymentID, &m.ChannelID, &m.CustomerReference,
		&m.DisclosureVersion, &m.SavedCardID, &m.CardMask, &m.CardExpMonth, &m.CardExpYear, &consent, &evidence,
		&m.Version, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	m.Status = subscription.MandateStatus(status)
	m.StoredStatus = m.Status
	m.ConsentAt = timePtr(consent)
	if evidence.Valid {
		m.Evidence = []byte(evidence.String)
	}
	m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &m, nil
}

// FindMandateByID finds a mandate, whatever key owns it.
func (q Queries) FindMandateByID(ctx context.Context, id string) (*subscription.Mandate, error) {
	return scanMandate(q.q.QueryRowContext(ctx, `SELECT `+mandateColumns+` FROM mandates WHERE id = $1`, id))
}

// FindMandateForKey finds a key's mandate; another key's is ErrNotFound.
func (q Queries) FindMandateForKey(ctx context.Context, keyID, id string) (*subscription.Mandate, error) {
	return scanMandate(q.q.QueryRowContext(ctx, `SELECT `+mandateColumns+` FROM mandates
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

const subscriptionColumns = `id, access_key_id, mandate_id, status, amount_minor, currency, interval_unit,
	interval_count, anchor_at, period, attempt, failed_at, next_run_at, charging_payment_id, last_decline_code,
	version, created_at, updated_at`

// CreateSubscription stores a new subscription.
func (q *Tx) CreateSubscription(ctx context.Context, s *subscription.Subscription) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO subscriptions (`+subscriptionColumns+`) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		s.ID, s.AccessKeyID, s.MandateID, string(s.Status), s.AmountMinor, s.Currency, s.Interval.Unit,
		s.Interval.Count, micros(s.Anchor), s.Period, s.Attempt, nullMicros(s.FailedAt), nullMicros(s.NextRunAt),
		s.ChargingPaymentID, s.LastDeclineCode, s.Version, micros(s.CreatedAt), micros(s.UpdatedAt))
	return err
}

// UpdateSubscription stores a subscription's mutable fields if its version
// is still s.Version (compare-and-set), and bumps it;
// subscription.ErrConflict otherwise.
func (q *Tx) UpdateSubscription(ctx context.Context, s *subscription.Subscription) error {
	res, err := q.q.ExecContext(ctx, `UPDATE subscriptions SET status = $3, period = $4, attempt = $5,
		failed_at = $6, next_run_at = $7, charging_payment_id = $8, last_decline_code = $9, updated_at = $10,
		version = version + 1 WHERE id = $1 AND version = $2`,
		s.ID, s.Version, string(s.Status), s.Period, s.Attempt, nullMicros(s.FailedAt), nullMicros(s.NextRunAt),
		s.ChargingPaymentID, s.LastDeclineCode, micros(s.UpdatedAt))
	if err := casRow(res, err); err != nil {
		return err
	}
	s.Version++
	return nil
}

// casRow turns a compare-and-set that changed nothing into
// subscription.ErrConflict.
func casRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return subscription.ErrConflict
	}
	return nil
}

func scanSubscription(row interface{ Scan(...any) error }) (*subscription.Subscription, error) {
	var (
		s                        subscription.Subscription
		status                   string
		anchor, created, updated int64
		failed, next             sql.NullInt64
	)
	err := row.Scan(&s.ID, &s.AccessKeyID, &s.MandateID, &status, &s.AmountMinor, &s.Currency, &s.Interval.Unit,
		&s.Interval.Count, &anchor, &s.Period, &s.Attempt, &failed, &next, &s.ChargingPaymentID, &s.LastDeclineCode,
		&s.Version, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.Status = subscription.Status(status)
	s.StoredStatus = s.Status
	s.Anchor, s.FailedAt, s.NextRunAt = fromMicros(anchor), timePtr(failed), timePtr(next)
	s.CreatedAt, s.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &s, nil
}

// FindSubscriptionByID finds a subscription, whatever key owns it.
func (q Queries) FindSubscriptionByID(ctx context.Context, id string) (*subscription.Subscription, error) {
	return scanSubscription(q.q.QueryRowContext(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = $1`, id))
}

// FindSubscriptionForKey finds a key's subscription; another key's is
// ErrNotFound (docs/design/decisions.md section 3: 404, never 403).
func (q Queries) FindSubscriptionForKey(ctx context.Context, keyID, id string) (*subscription.Subscription, error) {
	return scanSubscription(q.q.QueryRowContext(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// LockSubscription finds a subscription and holds it until the transaction
// ends (PostgreSQL: FOR UPDATE; SQLite's transaction holds the write lock
// already), so that a check and the change it allows are one step across
// every process: a merchant's pause against a scheduler's charge, two
// schedulers against each other.
func (q Queries) LockSubscription(ctx context.Context, id string) (*subscription.Subscription, error) {
	if q.tx == nil {
		return nil, ErrNeedsTx
	}
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	return scanSubscription(q.q.QueryRowContext(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = $1`+lock, id))
}

// DueSubscriptions lists up to limit subscriptions whose next step is due
// by their key's clock at real time now (the sandbox clock of
// docs/design/decisions.md section 14 is the key's offset), earliest
// first, with nothing in flight.
func (q Queries) DueSubscriptions(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT s.id FROM subscriptions s
		JOIN access_keys k ON k.id = s.access_key_id
		WHERE s.status IN ('active', 'past_due') AND s.charging_payment_id = ''
		  AND s.next_run_at <= $1 + k.clock_offset_micros
		ORDER BY s.next_run_at, s.id LIMIT $2`, micros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// NextSubscriptionDue is the earliest subscription of a key due at or
// before upTo (by the key's clock), with nothing in flight:
// ErrNotFound when none.
func (q Queries) NextSubscriptionDue(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error) {
	var (
		id string
		at int64
	)
	err := q.q.QueryRowContext(ctx, `SELECT id, next_run_at FROM subscriptions
		WHERE access_key_id = $1 AND status IN ('active', 'past_due') AND charging_payment_id = ''
		  AND next_run_at <= $2
		ORDER BY next_run_at, id LIMIT 1`, keyID, micros(upTo)).Scan(&id, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, ErrNotFound
	}
	return id, fromMicros(at), err
}

// KeyClockOffset is a key's sandbox clock offset (zero for an unknown key).
func (q Queries) KeyClockOffset(ctx context.Context, keyID string) (time.Duration, error) {
	var off int64
	err := q.q.QueryRowContext(ctx, `SELECT clock_offset_micros FROM access_keys WHERE id = $1`, keyID).Scan(&off)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return time.Duration(off) * time.Microsecond, err
}

// SetKeyClockOffset moves a key's clock forward to offset; an offset
// smaller than the one stored changes nothing (time only moves forward).
func (q *Tx) SetKeyClockOffset(ctx context.Context, keyID string, offset time.Duration) error {
	_, err := q.q.ExecContext(ctx, `UPDATE access_keys SET clock_offset_micros = $2
		WHERE id = $1 AND clock_offset_micros < $2`, keyID, offset.Microseconds())
	return err
}

// clockTables name, by resource of the operation engine, the table whose
// rows carry the owning key.
var clockTables = map[string]string{
	"payment":           "payments",
	"payout":            "payouts",
	"card_verification": "card_verifications",
}

// ResourceClockOffset is the clock offset of the key that owns a resource
// the operation engine works on (docs/design/decisions.md section 14);
// zero for a resource it does not know.
func (q Queries) ResourceClockOffset(ctx context.Context, resource, id string) (time.Duration, error) {
	table, ok := clockTables[resource]
	if !ok {
		return 0, nil
	}
	var off int64
	err := q.q.QueryRowContext(ctx, `SELECT k.clock_offset_micros FROM `+table+` r
		JOIN access_keys k ON k.id = r.access_key_id WHERE r.id = $1`, id).Scan(&off)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return time.Duration(off) * time.Microsecond, err
}

// MoveKeyClock moves a key's clock forward to offset, in its own
// transaction (never back: SetKeyClockOffset).
func (s *Store) MoveKeyClock(ctx context.Context, keyID string, offset time.Duration) error {
	return s.InTx(ctx, func(tx *Tx) error { return tx.SetKeyClockOffset(ctx, keyID, offset) })
}
