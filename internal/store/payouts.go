package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/paygate/paygate/internal/payout"
)

const payoutColumns = `id, access_key_id, channel_id, order_id, status, amount_minor, currency, account, method,
	card_mask, saved_card_id, description, return_url, metadata, device, payer_ip, decline_code, client_description,
	next_action_type, next_action_url, action_expires_at, bank_reference, provider_payout_id, version,
	created_at, updated_at`

// CreatePayout stores a new payout. The key's order_id is unique (index
// payouts_by_order): a second payout with it, concurrent or not, is
// payout.ErrDuplicateOrderID (409 duplicate_order_id).
func (q Queries) CreatePayout(ctx context.Context, p *payout.Payout) error {
	bank, err := jsonOrNull(p.BankReference)
	if err != nil {
		return err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO payouts (`+payoutColumns+`) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		 $21, $22, $23, $24, $25, $26)`,
		p.ID, p.AccessKeyID, p.ChannelID, p.OrderID, string(p.Status), p.AmountMinor, p.Currency, p.Account, p.Method,
		p.CardMask, p.SavedCardID, p.Description, p.ReturnURL, rawOrNull(p.Metadata), rawOrNull(p.Device), p.PayerIP,
		p.DeclineCode, p.ClientDescription, p.NextActionType, p.NextActionURL, nullMicros(p.ActionExpiresAt), bank,
		p.ProviderID, p.Version, micros(p.CreatedAt), micros(p.UpdatedAt))
	if errors.Is(Classify(err), ErrDuplicate) {
		return payout.ErrDuplicateOrderID
	}
	return err
}

func scanPayout(row interface{ Scan(...any) error }) (*payout.Payout, error) {
	var (
		p                  payout.Payout
		status             string
		meta, device, bank sql.NullString
		actionExpires      sql.NullInt64
		created, updated   int64
	)
	err := row.Scan(&p.ID, &p.AccessKeyID, &p.ChannelID, &p.OrderID, &status, &p.AmountMinor, &p.Currency, &p.Account,
		&p.Method, &p.CardMask, &p.SavedCardID, &p.Description, &p.ReturnURL, &meta, &device, &p.PayerIP, &p.DeclineCode,
		&p.ClientDescription, &p.NextActionType, &p.NextActionURL, &actionExpires, &bank, &p.ProviderID, &p.Version,
		&created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.Status = payout.Status(status)
	p.StoredStatus = p.Status
	p.ActionExpiresAt = timePtr(actionExpires)
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
	if meta.Valid {
		p.Metadata = json.RawMessage(meta.String)
	}
	if device.Valid {
		p.Device = json.RawMessage(device.String)
	}
	if bank.Valid {
		p.BankReference = new(payout.BankReference)
		if err := json.Unmarshal([]byte(bank.String), p.BankReference); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// FindPayoutByID finds a payout by id, whatever key owns it.
func (q Queries) FindPayoutByID(ctx context.Context, id string) (*payout.Payout, error) {
	return scanPayout(q.q.QueryRowContext(ctx, `SELECT `+payoutColumns+` FROM payouts WHERE id = $1`, id))
}

// FindPayoutForKey finds a key's payout; another key's is ErrNotFound
// (docs/design/decisions.md section 3: 404, never 403).
func (q Queries) FindPayoutForKey(ctx context.Context, keyID, id string) (*payout.Payout, error) {
	return scanPayout(q.q.QueryRowContext(ctx, `SELECT `+payoutColumns+` FROM payouts
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// LockPayoutForKey finds a key's payout and holds it until the transaction
// ends, as LockPaymentForKey does for payments: concurrent confirms see
// each other's change, so exactly one is accepted.
func (q Queries) LockPayoutForKey(ctx context.Context, keyID, id string) (*payout.Payout, error) {
	if q.tx == nil {
		return nil, ErrNeedsTx
	}
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR NO KEY UPDATE"
	}
	return scanPayout(q.q.QueryRowContext(ctx, `SELECT `+payoutColumns+` FROM payouts
		WHERE id = $1 AND access_key_id = $2`+lock, id, keyID))
}

// UpdatePayout stores the mutable fields of p if its version is still
// p.Version, and bumps the version; payout.ErrConflict otherwise.
func (q Queries) UpdatePayout(ctx context.Context, p *payout.Payout) error {
	bank, err := jsonOrNull(p.BankReference)
	if err != nil {
		return err
	}
	res, err := q.q.ExecContext(ctx, `UPDATE payouts SET status = $3, decline_code = $4, client_description = $5,
		next_action_type = $6, next_action_url = $7, action_expires_at = $8, bank_reference = $9,
		provider_payout_id = $10, updated_at = $11, version = version + 1
		WHERE id = $1 AND version = $2`,
		p.ID, p.Version, string(p.Status), p.DeclineCode, p.ClientDescription, p.NextActionType, p.NextActionURL,
		nullMicros(p.ActionExpiresAt), bank, p.ProviderID, micros(p.UpdatedAt))
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return payout.ErrConflict
	}
	p.Version++
	return nil
}
