package store

import (
	"context"
	"database/sql"
	"errors"
	"hash/fnv"
	"time"

	"github.com/paygate/paygate/internal/store/dbconn"
)

// Admit records a request's nonce and counts the key's requests of the
// last second (the nonce rows double as the rate limiter's window, so the
// limit holds across every API process without another write). It reports
// whether the nonce was new and how many requests the key made in the second
// before now. Nonces are single-use per key (docs/design/decisions.md section
// 1).
func (q Queries) Admit(ctx context.Context, keyID, nonce string, now time.Time, countRate bool) (fresh bool, recent int, err error) {
	if countRate {
		err = q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM nonces WHERE access_key_id = $1 AND created_at > $2`,
			keyID, micros(now.Add(-time.Second))).Scan(&recent)
		if err != nil {
			return false, 0, err
		}
	}
	res, err := q.q.ExecContext(ctx, `INSERT INTO nonces (access_key_id, nonce, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (access_key_id, nonce) DO NOTHING`, keyID, nonce, micros(now))
	if err != nil {
		return false, 0, err
	}
	n, err := res.RowsAffected()
	return n == 1, recent, err
}

// PurgeNonces deletes nonces recorded before cutoff.
func (q Queries) PurgeNonces(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.q.ExecContext(ctx, `DELETE FROM nonces WHERE created_at < $1`, micros(cutoff))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// StoredResponse is the first answer given to an idempotent request.
type StoredResponse struct {
	Fingerprint string
	StatusCode  int
	Body        []byte
	CreatedAt   time.Time
}

// LockIdempotencyKey claims (key, idempotency key) for this transaction. It
// reports false when another transaction holds it: that request is still
// executing (docs/design/decisions.md section 2: 409). On PostgreSQL this is
// a transaction-scoped advisory lock, taken without waiting; on SQLite a
// write transaction already excludes every other, so the claim always
// succeeds and a second request simply sees the first one's stored answer.
func (t *Tx) LockIdempotencyKey(ctx context.Context, keyID, idemKey string) (bool, error) {
	if t.dialect == SQLite {
		return true, nil
	}
	h := fnv.New64a()
	h.Write([]byte(keyID))
	h.Write([]byte{0})
	h.Write([]byte(idemKey))
	var ok bool
	err := t.tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(h.Sum64())).Scan(&ok)
	return ok, err
}

// FindIdempotentResponse returns the stored answer for (key, idempotency key).
func (q Queries) FindIdempotentResponse(ctx context.Context, keyID, idemKey string) (StoredResponse, error) {
	var (
		r       StoredResponse
		created int64
	)
	err := q.q.QueryRowContext(ctx, `SELECT fingerprint, status_code, response_body, created_at FROM idempotency_keys
		WHERE access_key_id = $1 AND idempotency_key = $2`, keyID, idemKey).Scan(&r.Fingerprint, &r.StatusCode, &r.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	r.CreatedAt = fromMicros(created)
	return r, err
}

// SaveIdempotentResponse stores the answer, in the transaction of the change
// it reports.
func (q Queries) SaveIdempotentResponse(ctx context.Context, keyID, idemKey string, r StoredResponse) error {
	// Deferred: sent with COMMIT, which reports a duplicate (dbconn/pipeline.go).
	_, err := q.q.ExecContext(dbconn.Deferred(ctx), `INSERT INTO idempotency_keys
		(access_key_id, idempotency_key, fingerprint, status_code, response_body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, keyID, idemKey, r.Fingerprint, r.StatusCode, r.Body, micros(r.CreatedAt))
	return err
}

// UpdateIdempotentResponse replaces the answer kept for (key, idempotency
// key): an answer given after the work, which ran in transactions of its
// own (advanceSandboxClock (POST /sandbox/clock/advance)).
func (q Queries) UpdateIdempotentResponse(ctx context.Context, keyID, idemKey string, status int, body []byte) error {
	_, err := q.q.ExecContext(ctx, `UPDATE idempotency_keys SET status_code = $3, response_body = $4
		WHERE access_key_id = $1 AND idempotency_key = $2`, keyID, idemKey, status, body)
	return err
}

// PurgeIdempotencyKeys deletes stored answers older than cutoff
// (docs/design/decisions.md section 2: 24 h).
func (q Queries) PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, micros(cutoff))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
