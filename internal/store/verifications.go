package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/verification"
)

const verificationColumns = `id, access_key_id, channel_id, order_id, currency, description, metadata, status,
	card_mask, decline_code, provider_id, bank_reference, verify_attempts, expires_at, version, created_at, updated_at`

// CreateVerification stores a new verification. The key's order_id taken
// already is verification.ErrDuplicateOrderID (a unique index: of
// concurrent duplicates, exactly one is stored).
func (q Queries) CreateVerification(ctx context.Context, v *verification.Verification) error {
	bank, err := jsonOrNull(v.BankReference)
	if err != nil {
		return err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO card_verifications (`+verificationColumns+`) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		v.ID, v.AccessKeyID, v.ChannelID, v.OrderID, v.Currency, v.Description, rawOrNull(v.Metadata), string(v.Status),
		v.CardMask, v.DeclineCode, v.ProviderID, bank, v.VerifyAttempts, micros(v.ExpiresAt), v.Version,
		micros(v.CreatedAt), micros(v.UpdatedAt))
	if errors.Is(Classify(err), ErrDuplicate) {
		return verification.ErrDuplicateOrderID
	}
	return err
}

func scanVerification(row interface{ Scan(...any) error }) (*verification.Verification, error) {
	var (
		v                         verification.Verification
		status                    string
		meta, bank                sql.NullString
		expires, created, updated int64
	)
	err := row.Scan(&v.ID, &v.AccessKeyID, &v.ChannelID, &v.OrderID, &v.Currency, &v.Description, &meta, &status,
		&v.CardMask, &v.DeclineCode, &v.ProviderID, &bank, &v.VerifyAttempts, &expires, &v.Version, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	v.Status = verification.Status(status)
	v.StoredStatus = v.Status
	v.ExpiresAt, v.CreatedAt, v.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	if meta.Valid {
		v.Metadata = json.RawMessage(meta.String)
	}
	if bank.Valid {
		v.BankReference = new(verification.BankReference)
		if err := json.Unmarshal([]byte(bank.String), v.BankReference); err != nil {
			return nil, err
		}
	}
	return &v, nil
}

// FindVerificationByID finds a verification by id, whatever key owns it.
func (q Queries) FindVerificationByID(ctx context.Context, id string) (*verification.Verification, error) {
	return scanVerification(q.q.QueryRowContext(ctx, `SELECT `+verificationColumns+` FROM card_verifications
		WHERE id = $1`, id))
}

// FindVerificationForKey finds a key's verification; another key's is
// ErrNotFound (docs/design/decisions.md section 3: 404, never 403).
func (q Queries) FindVerificationForKey(ctx context.Context, keyID, id string) (*verification.Verification, error) {
	return scanVerification(q.q.QueryRowContext(ctx, `SELECT `+verificationColumns+` FROM card_verifications
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// LockVerificationForKey finds a key's verification and holds it until the
// transaction ends, as LockPaymentForKey does a payment: concurrent codes
// are counted one after another, across every process.
func (q Queries) LockVerificationForKey(ctx context.Context, keyID, id string) (*verification.Verification, error) {
	if q.tx == nil {
		return nil, ErrNeedsTx
	}
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR NO KEY UPDATE"
	}
	return scanVerification(q.q.QueryRowContext(ctx, `SELECT `+verificationColumns+` FROM card_verifications
		WHERE id = $1 AND access_key_id = $2`+lock, id, keyID))
}

// UpdateVerification stores the mutable fields of v if its version is still
// v.Version, and bumps the version; verification.ErrConflict otherwise.
func (q Queries) UpdateVerification(ctx context.Context, v *verification.Verification) error {
	bank, err := jsonOrNull(v.BankReference)
	if err != nil {
		return err
	}
	res, err := q.q.ExecContext(ctx, `UPDATE card_verifications SET status = $3, decline_code = $4, provider_id = $5,
		bank_reference = $6, verify_attempts = $7, updated_at = $8, version = version + 1
		WHERE id = $1 AND version = $2`,
		v.ID, v.Version, string(v.Status), v.DeclineCode, v.ProviderID, bank, v.VerifyAttempts, micros(v.UpdatedAt))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return verification.ErrConflict
	}
	v.Version++
	return nil
}

// LockCardChecks holds the card hashes until the transaction ends and
// counts the checks of the card since then, with the oldest of them (when
// it leaves the window, a check is free again) (docs/design/decisions.md
// section 15). PostgreSQL takes a transaction-scoped advisory lock per
// hash, so that two requests for one card never both count two; SQLite's
// transactions already hold the database's one write lock.
func (q Queries) LockCardChecks(ctx context.Context, hashes []string, since time.Time) (int, time.Time, error) {
	if q.tx == nil {
		return 0, time.Time{}, ErrNeedsTx
	}
	if len(hashes) == 0 {
		return 0, time.Time{}, nil
	}
	if q.dialect == Postgres {
		// The active key's hash names the card: one lock, whatever the ring.
		sum := sha256.Sum256([]byte("card_check:" + hashes[0]))
		if _, err := q.q.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
			return 0, time.Time{}, err
		}
	}
	args := []any{micros(since)}
	marks := make([]string, len(hashes))
	for i, h := range hashes {
		args = append(args, h)
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	var n, oldest int64
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MIN(created_at), 0) FROM card_checks
		WHERE created_at > $1 AND card_hash IN (`+strings.Join(marks, ", ")+`)`, args...).Scan(&n, &oldest)
	return int(n), fromMicros(oldest), err
}

// PurgeCardChecks deletes the checks older than cutoff: past the window
// nothing reads them, and a card's keyed hash is not kept longer than the
// rule needs (docs/design/decisions.md section 15).
func (q Queries) PurgeCardChecks(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.q.ExecContext(ctx, `DELETE FROM card_checks WHERE created_at < $1`, micros(cutoff))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RecordCardCheck records one verification of a card, by its keyed hash.
func (q Queries) RecordCardCheck(ctx context.Context, hash string, at time.Time) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO card_checks (card_hash, created_at) VALUES ($1, $2)`, hash, micros(at))
	return err
}
