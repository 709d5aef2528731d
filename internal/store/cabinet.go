package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
)

// The merchant cabinet's users, sessions, setup links and sign-in
// throttling (docs/design/decisions.md section 13; internal/cabinet).

// CreateUser stores the user, its grants and its first setup token in one
// transaction.
func (s *Store) CreateUser(ctx context.Context, u cabinet.User, t cabinet.SetupToken) error {
	err := s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.ExecContext(ctx, `INSERT INTO users (id, email, password_hash, role, created_at)
			VALUES ($1, $2, '', $3, $4)`, u.ID, u.Email, string(u.Role), micros(u.CreatedAt)); err != nil {
			return err
		}
		for _, k := range u.KeyIDs {
			if err := tx.grantKey(ctx, u.ID, k, u.CreatedAt); err != nil {
				return err
			}
		}
		_, err := tx.q.ExecContext(ctx, `INSERT INTO user_setup_tokens (token_hash, user_id, expires_at)
			VALUES ($1, $2, $3)`, t.Hash, t.UserID, micros(t.ExpiresAt))
		return err
	})
	if errors.Is(Classify(err), ErrDuplicate) {
		return cabinet.ErrEmailTaken
	}
	return err
}

func (q Queries) grantKey(ctx context.Context, userID, keyID string, at time.Time) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO user_keys (user_id, access_key_id, granted_at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, userID, keyID, micros(at))
	return err
}

// GrantKey lets the user see one more key; granting twice changes nothing.
func (q Queries) GrantKey(ctx context.Context, userID, keyID string, at time.Time) error {
	return q.grantKey(ctx, userID, keyID, at)
}

const userColumns = `u.id, u.email, u.password_hash, u.role, u.created_at, u.disabled_at`

func scanUser(row interface{ Scan(...any) error }, extra ...any) (cabinet.User, error) {
	var (
		u        cabinet.User
		role     string
		created  int64
		disabled sql.NullInt64
	)
	err := row.Scan(append([]any{&u.ID, &u.Email, &u.PasswordHash, &role, &created, &disabled}, extra...)...)
	u.Role, u.CreatedAt, u.DisabledAt = cabinet.Role(role), fromMicros(created), timePtr(disabled)
	return u, err
}

// FindUserByEmail returns the user with the (lower-cased) email, or nil.
func (q Queries) FindUserByEmail(ctx context.Context, email string) (*cabinet.User, error) {
	u, err := scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.email = $1`, email))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &u, q.loadGrants(ctx, &u)
}

func (q Queries) loadGrants(ctx context.Context, u *cabinet.User) error {
	rows, err := q.q.QueryContext(ctx, `SELECT access_key_id FROM user_keys WHERE user_id = $1 ORDER BY granted_at, access_key_id`, u.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		u.KeyIDs = append(u.KeyIDs, id)
	}
	return rows.Err()
}

// ListUsers lists every user with its grants, by email.
func (q Queries) ListUsers(ctx context.Context) ([]cabinet.User, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+userColumns+` FROM users u ORDER BY u.email`)
	if err != nil {
		return nil, err
	}
	var out []cabinet.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if err := q.loadGrants(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DisableUser marks the user disabled and ends its sessions and unused
// setup links, in one transaction.
func (s *Store) DisableUser(ctx context.Context, userID string, at time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.ExecContext(ctx, `UPDATE users SET disabled_at = $2 WHERE id = $1 AND disabled_at IS NULL`,
			userID, micros(at)); err != nil {
			return err
		}
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM user_sessions WHERE user_id = $1`, userID); err != nil {
			return err
		}
		_, err := tx.q.ExecContext(ctx, `UPDATE user_setup_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`,
			userID, micros(at))
		return err
	})
}

// KeysOfUser returns the keys granted to the user, oldest first.
func (q Queries) KeysOfUser(ctx context.Context, userID string) ([]merchant.Key, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+keyColumns+` FROM access_keys
		WHERE id IN (SELECT access_key_id FROM user_keys WHERE user_id = $1) ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []merchant.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// FindSetupToken returns the user of an unused, unexpired setup token, or
// nil.
func (q Queries) FindSetupToken(ctx context.Context, hash string, now time.Time) (*cabinet.User, error) {
	u, err := scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM user_setup_tokens t
		JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2`,
		hash, micros(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &u, err
}

// CompleteSetup uses the token by compare-and-set (of two uses only one
// finds it unused), sets the password hash and starts the session, in one
// transaction.
func (s *Store) CompleteSetup(ctx context.Context, hash, passwordHash string, sess cabinet.Session, now time.Time) (bool, error) {
	ok := false
	err := s.InTx(ctx, func(tx *Tx) error {
		var userID string
		err := tx.q.QueryRowContext(ctx, `UPDATE user_setup_tokens SET used_at = $2
			WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id`,
			hash, micros(now)).Scan(&userID)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && userID != sess.UserID) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.q.ExecContext(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1 AND disabled_at IS NULL`,
			userID, passwordHash); err != nil {
			return err
		}
		// A new password ends the sessions an old one opened.
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM user_sessions WHERE user_id = $1`, userID); err != nil {
			return err
		}
		ok = true
		return tx.CreateSession(ctx, sess)
	})
	return ok, err
}

// ReplaceSetupToken stores a new setup token and uses up the user's unused
// ones, in one transaction.
func (s *Store) ReplaceSetupToken(ctx context.Context, t cabinet.SetupToken, now time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.ExecContext(ctx, `UPDATE user_setup_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`,
			t.UserID, micros(now)); err != nil {
			return err
		}
		_, err := tx.q.ExecContext(ctx, `INSERT INTO user_setup_tokens (token_hash, user_id, expires_at)
			VALUES ($1, $2, $3)`, t.Hash, t.UserID, micros(t.ExpiresAt))
		return err
	})
}

// ReserveSignIn takes one attempt in each subject's window, all or none
// (docs/cabinet.md, Users and sign-in). Per subject, the row is made if
// missing, then one UPDATE either starts a new window (the old one is over)
// or counts the attempt while the window has room: the check and the count
// are one statement, so concurrent sign-ins on any process cannot both take
// the last attempt (PostgreSQL re-checks the condition against the
// committed row; SQLite runs one writer at a time).
func (s *Store) ReserveSignIn(ctx context.Context, slots []cabinet.Slot, now time.Time, window time.Duration) (bool, error) {
	ok := true
	err := s.InTx(ctx, func(tx *Tx) error {
		for _, sl := range slots {
			if _, err := tx.q.ExecContext(ctx, `INSERT INTO sign_in_failures (subject, window_start, attempts)
				VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`, sl.Subject, micros(now)); err != nil {
				return err
			}
			res, err := tx.q.ExecContext(ctx, `UPDATE sign_in_failures SET
				attempts = CASE WHEN window_start <= $2 THEN 1 ELSE attempts + 1 END,
				window_start = CASE WHEN window_start <= $2 THEN $3 ELSE window_start END
				WHERE subject = $1 AND (window_start <= $2 OR attempts < $4)`,
				sl.Subject, micros(now.Add(-window)), micros(now), sl.Limit)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				ok = false
				return errRefused
			}
		}
		return nil
	})
	if errors.Is(err, errRefused) {
		return false, nil
	}
	return ok, err
}

var errRefused = errors.New("store: sign-in refused")

// ReleaseSignIn clears the windows of clear and gives one attempt back to
// each of giveBack.
func (s *Store) ReleaseSignIn(ctx context.Context, clear, giveBack []string) error {
	return s.InTx(ctx, func(tx *Tx) error {
		for _, sub := range clear {
			if _, err := tx.q.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE subject = $1`, sub); err != nil {
				return err
			}
		}
		for _, sub := range giveBack {
			if _, err := tx.q.ExecContext(ctx, `UPDATE sign_in_failures SET attempts = attempts - 1
				WHERE subject = $1 AND attempts > 0`, sub); err != nil {
				return err
			}
		}
		return nil
	})
}

// CreateSession stores a session.
func (q Queries) CreateSession(ctx context.Context, s cabinet.Session) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO user_sessions (id_hash, user_id, created_at, last_seen_at)
		VALUES ($1, $2, $3, $4)`, s.IDHash, s.UserID, micros(s.CreatedAt), micros(s.LastSeenAt))
	return err
}

// FindSession returns a session and its user, with grants; nil: none.
func (q Queries) FindSession(ctx context.Context, hash string) (*cabinet.Session, *cabinet.User, error) {
	var (
		s             cabinet.Session
		created, seen int64
	)
	u, err := scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+`, s.created_at, s.last_seen_at
		FROM user_sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1`, hash), &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	s.IDHash, s.UserID, s.CreatedAt, s.LastSeenAt = hash, u.ID, fromMicros(created), fromMicros(seen)
	return &s, &u, q.loadGrants(ctx, &u)
}

// TouchSession records a session's use.
func (q Queries) TouchSession(ctx context.Context, hash string, at time.Time) error {
	_, err := q.q.ExecContext(ctx, `UPDATE user_sessions SET last_seen_at = $2 WHERE id_hash = $1`, hash, micros(at))
	return err
}

// EndSession deletes a session: no process finds it any more.
func (q Queries) EndSession(ctx context.Context, hash string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM user_sessions WHERE id_hash = $1`, hash)
	return err
}

// The store is the cabinet's.
var _ cabinet.Store = (*Store)(nil)
