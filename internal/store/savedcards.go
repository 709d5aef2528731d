package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/paygate/paygate/internal/savedcard"
)

// CreateSavedCard stores a saved card.
func (q Queries) CreateSavedCard(ctx context.Context, c *savedcard.Card) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO saved_cards (id, access_key_id, customer_reference, provider,
		token_sealed, masked_card, scheme, exp_month, exp_year, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.ID, c.AccessKeyID, c.CustomerReference, c.Provider, c.TokenSealed, c.MaskedCard, c.Scheme, c.ExpMonth, c.ExpYear,
		micros(c.CreatedAt))
	return err
}

const savedCardColumns = `id, access_key_id, customer_reference, provider, token_sealed, masked_card, scheme, exp_month, exp_year, created_at`

func scanSavedCard(row interface{ Scan(...any) error }) (*savedcard.Card, error) {
	var (
		c       savedcard.Card
		created int64
	)
	err := row.Scan(&c.ID, &c.AccessKeyID, &c.CustomerReference, &c.Provider, &c.TokenSealed, &c.MaskedCard, &c.Scheme,
		&c.ExpMonth, &c.ExpYear, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	c.CreatedAt = fromMicros(created)
	return &c, err
}

// FindSavedCardForKey finds a key's saved card; another key's is ErrNotFound.
func (q Queries) FindSavedCardForKey(ctx context.Context, keyID, id string) (*savedcard.Card, error) {
	return scanSavedCard(q.q.QueryRowContext(ctx, `SELECT `+savedCardColumns+` FROM saved_cards
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// ListSavedCards lists a payer's saved cards, newest first.
func (q Queries) ListSavedCards(ctx context.Context, keyID, customerRef string) ([]savedcard.Card, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+savedCardColumns+` FROM saved_cards
		WHERE access_key_id = $1 AND customer_reference = $2 ORDER BY created_at DESC, id DESC`, keyID, customerRef)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []savedcard.Card{}
	for rows.Next() {
		c, err := scanSavedCard(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}
