package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/payment"
)

const paymentColumns = `id, session_id, access_key_id, channel_id, kind, status, order_id, amount_minor, currency,
	description, first_name, last_name, customer_sealed, customer_reference, return_url, locale, operation_mode,
	method, save_payment_method, subscription, metadata, expires_at, authorization_expires_at, masked_card, device,
	payer_ip, decline_code, decline_message, next_action_type, next_action_url, bank_reference,
	captured_amount_minor, refunded_amount_minor, saved_card_id, mandate_id, subscription_id, created_at, updated_at`

// CreatePayment stores a new payment.
func (q Queries) CreatePayment(ctx context.Context, p *payment.Payment) error {
	sub, err := jsonOrNull(p.Subscription)
	if err != nil {
		return err
	}
	bank, err := jsonOrNull(p.BankReference)
	if err != nil {
		return err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO payments (`+paymentColumns+`) VALUES
		($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		 $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38)`,
		p.ID, nullString(p.SessionID), p.AccessKeyID, p.ChannelID, p.Kind, string(p.Status), p.OrderID, p.AmountMinor,
		p.Currency, p.Description, p.FirstName, p.LastName, p.CustomerSealed, p.CustomerReference, p.ReturnURL,
		p.Locale, p.OperationMode, p.Method, p.SavePaymentMethod, sub, rawOrNull(p.Metadata),
		nullMicros(p.ExpiresAt), nullMicros(p.AuthorizationExpiresAt), p.MaskedCard, rawOrNull(p.Device), p.PayerIP,
		p.DeclineCode, p.DeclineMessage, p.NextActionType, p.NextActionURL, bank, p.CapturedAmountMinor,
		p.RefundedAmountMinor, p.SavedCardID, p.MandateID, p.SubscriptionID, micros(p.CreatedAt), micros(p.UpdatedAt))
	return err
}

func scanPayment(row interface{ Scan(...any) error }) (*payment.Payment, error) {
	var (
		p                       payment.Payment
		status                  string
		sessionID               sql.NullString
		sub, meta, device, bank sql.NullString
		expires, authExpires    sql.NullInt64
		created, updated        int64
	)
	err := row.Scan(&p.ID, &sessionID, &p.AccessKeyID, &p.ChannelID, &p.Kind, &status, &p.OrderID, &p.AmountMinor,
		&p.Currency, &p.Description, &p.FirstName, &p.LastName, &p.CustomerSealed, &p.CustomerReference, &p.ReturnURL,
		&p.Locale, &p.OperationMode, &p.Method, &p.SavePaymentMethod, &sub, &meta, &expires, &authExpires,
		&p.MaskedCard, &device, &p.PayerIP, &p.DeclineCode, &p.DeclineMessage, &p.NextActionType, &p.NextActionURL,
		&bank, &p.CapturedAmountMinor, &p.RefundedAmountMinor, &p.SavedCardID, &p.MandateID, &p.SubscriptionID,
		&created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.Status, p.SessionID = payment.Status(status), sessionID.String
	p.ExpiresAt, p.AuthorizationExpiresAt = timePtr(expires), timePtr(authExpires)
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
	if meta.Valid {
		p.Metadata = json.RawMessage(meta.String)
	}
	if device.Valid {
		p.Device = json.RawMessage(device.String)
	}
	if sub.Valid {
		p.Subscription = new(payment.SubscriptionTerms)
		if err := json.Unmarshal([]byte(sub.String), p.Subscription); err != nil {
			return nil, err
		}
	}
	if bank.Valid {
		p.BankReference = new(payment.BankReference)
		if err := json.Unmarshal([]byte(bank.String), p.BankReference); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// FindPaymentByID finds a payment by its payment id, whatever key owns it.
func (q Queries) FindPaymentByID(ctx context.Context, id string) (*payment.Payment, error) {
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`, id))
}

// FindPaymentForKey finds a key's payment by payment id. Another key's
// payment is ErrNotFound (decisions 3: 404, never 403).
func (q Queries) FindPaymentForKey(ctx context.Context, keyID, id string) (*payment.Payment, error) {
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// FindSessionForKey finds a key's hosted session by session id.
func (q Queries) FindSessionForKey(ctx context.Context, keyID, sessionID string) (*payment.Payment, error) {
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE session_id = $1 AND access_key_id = $2`, sessionID, keyID))
}

// ExpireSession moves an unpaid session past its deadline to expired.
func (q Queries) ExpireSession(ctx context.Context, paymentID string, now time.Time) (bool, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE payments SET status = $2, updated_at = $3
		WHERE id = $1 AND status IN ($4, $5) AND expires_at <= $3`,
		paymentID, string(payment.Expired), micros(now), string(payment.Created), string(payment.AwaitingPaymentData))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func jsonOrNull[T any](v *T) (sql.NullString, error) {
	if v == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	return sql.NullString{String: string(b), Valid: true}, err
}

func rawOrNull(b json.RawMessage) sql.NullString {
	if len(b) == 0 {
		return sql.NullString{}
	}
	return sql.NullString{String: string(b), Valid: true}
}
