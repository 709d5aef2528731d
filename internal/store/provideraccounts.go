package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/provider/account"
)

// CreateProviderAccount stores a new provider account; a taken name is
// ErrDuplicate.
func (q Queries) CreateProviderAccount(ctx context.Context, a account.Account) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO provider_accounts
		(name, kind, base_url, credentials_sealed, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.Name, a.Kind, a.BaseURL, a.CredentialsSealed, a.Status, micros(a.CreatedAt), micros(a.UpdatedAt))
	return Classify(err)
}

const providerAccountColumns = `name, kind, base_url, credentials_sealed, status, created_at, updated_at`

func scanProviderAccount(row interface{ Scan(...any) error }) (account.Account, error) {
	var (
		a                account.Account
		created, updated int64
	)
	err := row.Scan(&a.Name, &a.Kind, &a.BaseURL, &a.CredentialsSealed, &a.Status, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, err
}

// ListProviderAccounts lists the stored provider accounts by name.
func (q Queries) ListProviderAccounts(ctx context.Context) ([]account.Account, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+providerAccountColumns+` FROM provider_accounts ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []account.Account{}
	for rows.Next() {
		a, err := scanProviderAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// FindProviderAccount finds a stored provider account by name.
func (q Queries) FindProviderAccount(ctx context.Context, name string) (account.Account, error) {
	return scanProviderAccount(q.q.QueryRowContext(ctx, `SELECT `+providerAccountColumns+` FROM provider_accounts WHERE name = $1`, name))
}

// SetProviderAccountStatus enables or disables an account; setting the
// status it has changes nothing, not even its updated_at.
func (q Queries) SetProviderAccountStatus(ctx context.Context, name, status string, at time.Time) error {
	_, err := q.q.ExecContext(ctx, `UPDATE provider_accounts SET status = $2, updated_at = $3 WHERE name = $1 AND status <> $2`,
		name, status, micros(at))
	return err
}
