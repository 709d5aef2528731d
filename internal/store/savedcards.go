package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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

const savedCardColumns = `id, access_key_id, customer_reference, provider, token_sealed, masked_card, scheme, exp_month, exp_year, created_at, deleted_at`

func scanSavedCard(row interface{ Scan(...any) error }) (*savedcard.Card, error) {
	var (
		c       savedcard.Card
		created int64
		deleted sql.NullInt64
	)
	err := row.Scan(&c.ID, &c.AccessKeyID, &c.CustomerReference, &c.Provider, &c.TokenSealed, &c.MaskedCard, &c.Scheme,
		&c.ExpMonth, &c.ExpYear, &created, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	c.CreatedAt, c.DeletedAt = fromMicros(created), timePtr(deleted)
	return &c, err
}

// FindSavedCardForKey finds a key's usable saved card: another key's, or
// one deleted through the cabinet (docs/design/decisions.md section 13),
// is ErrNotFound.
func (q Queries) FindSavedCardForKey(ctx context.Context, keyID, id string) (*savedcard.Card, error) {
	return scanSavedCard(q.q.QueryRowContext(ctx, `SELECT `+savedCardColumns+` FROM saved_cards
		WHERE id = $1 AND access_key_id = $2 AND deleted_at IS NULL`, id, keyID))
}

// FindSavedCardForCharge finds a key's saved card, deleted or not, for a
// payment that was accepted with it before it was deleted: the decision to
// charge it was taken while it was usable, so the charge goes ahead. Only
// the operation engine calls it; every new use goes through
// FindSavedCardForKey and savedcard.Usable.
func (q Queries) FindSavedCardForCharge(ctx context.Context, keyID, id string) (*savedcard.Card, error) {
	return scanSavedCard(q.q.QueryRowContext(ctx, `SELECT `+savedCardColumns+` FROM saved_cards
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// ListSavedCards lists a payer's usable saved cards, newest first; deleted
// cards are left out.
func (q Queries) ListSavedCards(ctx context.Context, keyID, customerRef string) ([]savedcard.Card, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+savedCardColumns+` FROM saved_cards
		WHERE access_key_id = $1 AND customer_reference = $2 AND deleted_at IS NULL
		ORDER BY created_at DESC, id DESC`, keyID, customerRef)
	if err != nil {
		return nil, err
	}
	return collectSavedCards(rows)
}

// ListSavedCardsPage returns up to f.Limit of the key's usable saved cards
// matching f, newest first (listPaymentMethodTokens (GET
// /cabinet/v1/payment-method-tokens)).
func (q Queries) ListSavedCardsPage(ctx context.Context, keyID string, f savedcard.Filter) ([]savedcard.Card, error) {
	query, args := `SELECT `+savedCardColumns+` FROM saved_cards WHERE access_key_id = $1 AND deleted_at IS NULL`, []any{keyID}
	if f.CustomerReference != "" {
		args = append(args, f.CustomerReference)
		query += fmt.Sprintf(" AND customer_reference = $%d", len(args))
	}
	if f.AfterCreated != nil {
		args = append(args, micros(*f.AfterCreated), f.AfterID)
		n := len(args)
		query += fmt.Sprintf(" AND (created_at, id) < ($%d, $%d)", n-1, n)
	}
	args = append(args, f.Limit)
	rows, err := q.q.QueryContext(ctx, query+fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT $%d", len(args)), args...)
	if err != nil {
		return nil, err
	}
	return collectSavedCards(rows)
}

func collectSavedCards(rows *sql.Rows) ([]savedcard.Card, error) {
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

// DeleteSavedCard marks a key's saved card deleted at at, in one
// compare-and-set step, so that of concurrent deletions exactly one
// succeeds. ErrNotFound when the key has no such card or it is already
// deleted (docs/design/decisions.md section 13: the second DELETE is 404).
func (q Queries) DeleteSavedCard(ctx context.Context, keyID, id string, at time.Time) error {
	res, err := q.q.ExecContext(ctx, `UPDATE saved_cards SET deleted_at = $3
		WHERE id = $1 AND access_key_id = $2 AND deleted_at IS NULL`, id, keyID, micros(at))
	if err != nil {
		return err
	}
	return oneRow(res)
}
