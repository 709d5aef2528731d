package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// What a sandbox clock advance finds due for a key besides subscriptions
// (docs/design/decisions.md section 14): the expiries its jobs would run.
// Each answers the earliest at or before upTo, by the key's clock (the
// times are stored on it), with an empty id when none. The partial expiry
// indexes (payments_session_expiry and its siblings, migrations/) hold only
// the rows in the statuses asked for.

// NextSessionExpiry is the key's earliest hosted session still open
// (created or awaiting_payment_data) whose expires_at is at or before upTo.
func (q Queries) NextSessionExpiry(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error) {
	return q.nextDue(ctx, `SELECT id, expires_at FROM payments
		WHERE access_key_id = $1 AND status IN ('created', 'awaiting_payment_data') AND expires_at <= $2
		ORDER BY expires_at, id LIMIT 1`, keyID, upTo)
}

// NextAuthorizationExpiry is the key's earliest authorized payment whose
// authorization_expires_at is at or before upTo.
func (q Queries) NextAuthorizationExpiry(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error) {
	return q.nextDue(ctx, `SELECT id, authorization_expires_at FROM payments
		WHERE access_key_id = $1 AND status = 'authorized' AND authorization_expires_at <= $2
		ORDER BY authorization_expires_at, id LIMIT 1`, keyID, upTo)
}

// NextVerificationExpiry is the key's earliest card verification waiting
// for its code (code_sent) whose expires_at is at or before upTo. One
// still waiting for the provider (pending, manual_review) is not due: its
// expiry job waits for the answer.
func (q Queries) NextVerificationExpiry(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error) {
	return q.nextDue(ctx, `SELECT id, expires_at FROM card_verifications
		WHERE access_key_id = $1 AND status = 'code_sent' AND expires_at <= $2
		ORDER BY expires_at, id LIMIT 1`, keyID, upTo)
}

// NextPayoutActionExpiry is the key's earliest payout in requires_action
// whose action_expires_at is at or before upTo, with the operation whose
// answer started the wait (the payout's newest: none is queued while it
// waits).
func (q Queries) NextPayoutActionExpiry(ctx context.Context, keyID string, upTo time.Time) (id, operationID string, at time.Time, err error) {
	var (
		micro int64
		op    sql.NullString
	)
	err = q.q.QueryRowContext(ctx, `SELECT p.id, p.action_expires_at,
		(SELECT o.id FROM operations o WHERE o.resource = 'payout' AND o.resource_id = p.id
		 ORDER BY o.created_at DESC, o.id DESC LIMIT 1)
		FROM payouts p
		WHERE p.access_key_id = $1 AND p.status = 'requires_action' AND p.action_expires_at <= $2
		ORDER BY p.action_expires_at, p.id LIMIT 1`, keyID, micros(upTo)).Scan(&id, &micro, &op)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", time.Time{}, nil
	}
	return id, op.String, fromMicros(micro), err
}

func (q Queries) nextDue(ctx context.Context, query, keyID string, upTo time.Time) (string, time.Time, error) {
	var (
		id    string
		micro int64
	)
	err := q.q.QueryRowContext(ctx, query, keyID, micros(upTo)).Scan(&id, &micro)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, nil
	}
	return id, fromMicros(micro), err
}
