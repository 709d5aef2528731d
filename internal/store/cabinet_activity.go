package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/verification"
)

// What the cabinet's verifications and payouts pages read
// (docs/cabinet.md, "Verifications" and "Payouts"). Read-only.

// ActivityFilter selects a page of a key's verifications or payouts,
// newest first.
type ActivityFilter struct {
	Status string // "" for every status
	// After is the (created_at, id) of the last row of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// activityPage is the query of one keyset page of table's rows of keyID
// matching f, newest first, with its arguments.
func activityPage(table, columns, keyID string, f ActivityFilter) (string, []any) {
	query, args := `SELECT `+columns+` FROM `+table+` WHERE access_key_id = $1`, []any{keyID}
	if f.Status != "" {
		args = append(args, f.Status)
		query += fmt.Sprintf(" AND status = $%d", len(args))
	}
	if f.AfterCreated != nil {
		args = append(args, micros(*f.AfterCreated), f.AfterID)
		n := len(args)
		query += fmt.Sprintf(" AND (created_at, id) < ($%d, $%d)", n-1, n)
	}
	args = append(args, f.Limit)
	return query + fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT $%d", len(args)), args
}

// ListVerificationsPage returns up to f.Limit of the key's card
// verifications matching f, newest first.
func (q Queries) ListVerificationsPage(ctx context.Context, keyID string, f ActivityFilter) ([]*verification.Verification, error) {
	query, args := activityPage("card_verifications", verificationColumns, keyID, f)
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collectPage(rows, scanVerification)
}

// ListPayoutsPage returns up to f.Limit of the key's payouts matching f,
// newest first.
func (q Queries) ListPayoutsPage(ctx context.Context, keyID string, f ActivityFilter) ([]*payout.Payout, error) {
	query, args := activityPage("payouts", payoutColumns, keyID, f)
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collectPage(rows, scanPayout)
}

// collectPage scans every row with scan and closes rows.
func collectPage[T any](rows *sql.Rows, scan func(row interface{ Scan(...any) error }) (*T, error)) ([]*T, error) {
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
