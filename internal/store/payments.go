package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store/dbconn"
)

const paymentColumns = `id, session_id, access_key_id, channel_id, kind, status, order_id, amount_minor, currency,
	description, first_name, last_name, customer_sealed, customer_reference, return_url, locale, operation_mode,
	method, save_payment_method, subscription, metadata, expires_at, authorization_expires_at, masked_card, device,
	payer_ip, decline_code, decline_message, next_action_type, next_action_url, bank_reference,
	captured_amount_minor, refunded_amount_minor, saved_card_id, mandate_id, subscription_id, created_at, updated_at,
	provider_payment_id, card_scheme, version, consent_at, subscription_period, subscription_attempt`

// CreatePayment stores a new payment. Only a transaction offers it (and
// UpdatePayment): the payment domain records the event of the status in
// the same transaction (payment/move.go).
func (q *Tx) CreatePayment(ctx context.Context, p *payment.Payment) error {
	sub, err := jsonOrNull(p.Subscription)
	if err != nil {
		return err
	}
	bank, err := jsonOrNull(p.BankReference)
	if err != nil {
		return err
	}
	args := []any{p.ID, nullString(p.SessionID), p.AccessKeyID, p.ChannelID, p.Kind, string(p.Status), p.OrderID, p.AmountMinor,
		p.Currency, p.Description, p.FirstName, p.LastName, p.CustomerSealed, p.CustomerReference, p.ReturnURL,
		p.Locale, p.OperationMode, p.Method, p.SavePaymentMethod, sub, rawOrNull(p.Metadata),
		nullMicros(p.ExpiresAt), nullMicros(p.AuthorizationExpiresAt), p.MaskedCard, rawOrNull(p.Device), p.PayerIP,
		p.DeclineCode, p.DeclineMessage, p.NextActionType, p.NextActionURL, bank, p.CapturedAmountMinor,
		p.RefundedAmountMinor, p.SavedCardID, p.MandateID, p.SubscriptionID, micros(p.CreatedAt), micros(p.UpdatedAt),
		p.ProviderPaymentID, p.CardScheme, p.Version, nullMicros(p.ConsentAt), nullInt64(p.SubscriptionPeriod),
		p.SubscriptionAttempt}
	marks := make([]string, len(args))
	for i := range marks {
		marks[i] = "$" + strconv.Itoa(i+1)
	}
	// A subscription's period is told from a duplicate here; any other
	// payment's insert goes with the next statement (dbconn/pipeline.go).
	insertCtx := ctx
	if p.SubscriptionPeriod == nil {
		insertCtx = dbconn.Deferred(ctx)
	}
	_, err = q.q.ExecContext(insertCtx, `INSERT INTO payments (`+paymentColumns+`) VALUES (`+strings.Join(marks, ", ")+`)`, args...)
	if p.SubscriptionPeriod != nil && errors.Is(Classify(err), ErrDuplicate) {
		return payment.ErrDuplicateCharge
	}
	return err
}

func scanPayment(row interface{ Scan(...any) error }) (*payment.Payment, error) {
	var (
		p                       payment.Payment
		status                  string
		sessionID               sql.NullString
		sub, meta, device, bank sql.NullString
		expires, authExpires    sql.NullInt64
		consent, period         sql.NullInt64
		created, updated        int64
	)
	err := row.Scan(&p.ID, &sessionID, &p.AccessKeyID, &p.ChannelID, &p.Kind, &status, &p.OrderID, &p.AmountMinor,
		&p.Currency, &p.Description, &p.FirstName, &p.LastName, &p.CustomerSealed, &p.CustomerReference, &p.ReturnURL,
		&p.Locale, &p.OperationMode, &p.Method, &p.SavePaymentMethod, &sub, &meta, &expires, &authExpires,
		&p.MaskedCard, &device, &p.PayerIP, &p.DeclineCode, &p.DeclineMessage, &p.NextActionType, &p.NextActionURL,
		&bank, &p.CapturedAmountMinor, &p.RefundedAmountMinor, &p.SavedCardID, &p.MandateID, &p.SubscriptionID,
		&created, &updated, &p.ProviderPaymentID, &p.CardScheme, &p.Version, &consent, &period,
		&p.SubscriptionAttempt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.Status, p.SessionID = payment.Status(status), sessionID.String
	p.StoredStatus = p.Status
	p.ExpiresAt, p.AuthorizationExpiresAt, p.ConsentAt = timePtr(expires), timePtr(authExpires), timePtr(consent)
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
	if period.Valid {
		p.SubscriptionPeriod = &period.Int64
	}
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

// FindPaymentWithChannel reads a payment and its channel in one
// statement: what an operation of the payment reads before its provider
// call (payment.handler's LoadFrom), one round trip instead of two.
func (q Queries) FindPaymentWithChannel(ctx context.Context, id string) (*payment.Payment, merchant.Channel, error) {
	row := q.q.QueryRowContext(ctx, `SELECT `+qualified("p", paymentColumns)+`, `+channelColumns+`
		FROM payments p JOIN channels c ON c.id = p.channel_id WHERE p.id = $1`, id)
	parts, err := splitRow(row, paymentColumnCount+channelColumnCount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, merchant.Channel{}, ErrNotFound
	}
	if err != nil {
		return nil, merchant.Channel{}, err
	}
	p, err := scanPayment(parts)
	if err != nil {
		return nil, merchant.Channel{}, err
	}
	ch, err := scanChannel(parts)
	return p, ch, err
}

var (
	paymentColumnCount = strings.Count(paymentColumns, ",") + 1
	channelColumnCount = strings.Count(channelColumns, ",") + 1
)

// FindPaymentForKey finds a key's payment by payment id. Another key's
// payment is ErrNotFound (docs/design/decisions.md section 3: 404, never 403).
func (q Queries) FindPaymentForKey(ctx context.Context, keyID, id string) (*payment.Payment, error) {
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// ErrNeedsTx is returned by a method that only means something inside a
// transaction, called outside one.
var ErrNeedsTx = errors.New("store: this statement needs a transaction")

// LockPaymentForKey finds a key's payment, as FindPaymentForKey, and holds
// it until the transaction ends: a second transaction locking the same
// payment waits for this one to commit and then reads what it wrote. It
// makes "no operation open / enough left, then queue one" a single step
// (docs/payments.md, "Concurrent operations"), across every process.
// PostgreSQL takes a row lock (FOR NO KEY UPDATE: it excludes other
// lockers and updaters of the payment, the engine's compare-and-set
// included, but not the inserts of operations and refunds that reference
// it); SQLite's transactions already
// hold the database's one write lock from their first statement
// (_txlock=immediate), so its plain read is enough.
func (q Queries) LockPaymentForKey(ctx context.Context, keyID, id string) (*payment.Payment, error) {
	if q.tx == nil {
		return nil, ErrNeedsTx
	}
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR NO KEY UPDATE"
	}
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE id = $1 AND access_key_id = $2`+lock, id, keyID))
}

// FindSessionForKey finds a key's hosted session by session id.
func (q Queries) FindSessionForKey(ctx context.Context, keyID, sessionID string) (*payment.Payment, error) {
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE session_id = $1 AND access_key_id = $2`, sessionID, keyID))
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

// ErrConflict is returned when a compare-and-set update finds the row
// changed since it was read.
var ErrConflict = payment.ErrConflict

// UpdatePayment stores the mutable fields of p if its version is still
// p.Version, and bumps the version. It returns ErrConflict otherwise.
func (q *Tx) UpdatePayment(ctx context.Context, p *payment.Payment) error {
	bank, err := jsonOrNull(p.BankReference)
	if err != nil {
		return err
	}
	res, err := q.q.ExecContext(ctx, `UPDATE payments SET status = $3, masked_card = $4, card_scheme = $5,
		decline_code = $6, decline_message = $7, next_action_type = $8, next_action_url = $9, bank_reference = $10,
		captured_amount_minor = $11, refunded_amount_minor = $12, saved_card_id = $13, provider_payment_id = $14,
		authorization_expires_at = $15, device = $16, payer_ip = $17, method = $18, updated_at = $19,
		consent_at = $20, channel_id = $21, version = version + 1
		WHERE id = $1 AND version = $2`,
		p.ID, p.Version, string(p.Status), p.MaskedCard, p.CardScheme, p.DeclineCode, p.DeclineMessage,
		p.NextActionType, p.NextActionURL, bank, p.CapturedAmountMinor, p.RefundedAmountMinor, p.SavedCardID,
		p.ProviderPaymentID, nullMicros(p.AuthorizationExpiresAt), rawOrNull(p.Device), p.PayerIP, p.Method,
		micros(p.UpdatedAt), nullMicros(p.ConsentAt), p.ChannelID)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrConflict
	}
	p.Version++
	return nil
}

// ListPayments returns up to f.Limit payments of the key matching f.
func (q Queries) ListPayments(ctx context.Context, keyID string, f payment.Filter) ([]*payment.Payment, error) {
	query, args := PaymentListQuery(keyID, f)
	return q.payments(ctx, query, args...)
}

// payments runs a query of paymentColumns and reads every row.
func (q Queries) payments(ctx context.Context, query string, args ...any) ([]*payment.Payment, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*payment.Payment
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// FindSessionByID finds a hosted session by its session id, whatever key
// owns it: the payer's page knows only the session id.
func (q Queries) FindSessionByID(ctx context.Context, sessionID string) (*payment.Payment, error) {
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments WHERE session_id = $1`, sessionID))
}

// FindPaymentByProviderID finds the payment an acquirer knows by its own
// id, among the payments of the channels of that provider: what an
// acquirer's notification names (docs/design/decisions.md section 16).
func (q Queries) FindPaymentByProviderID(ctx context.Context, providerName, providerPaymentID string) (*payment.Payment, error) {
	if providerPaymentID == "" {
		return nil, ErrNotFound
	}
	return scanPayment(q.q.QueryRowContext(ctx, `SELECT `+qualified("p", paymentColumns)+`
		FROM payments p JOIN channels c ON c.id = p.channel_id
		WHERE p.provider_payment_id = $1 AND p.provider_payment_id <> '' AND c.provider = $2 ORDER BY p.created_at LIMIT 1`, providerPaymentID, providerName))
}

// CreatePaymentAttempt records an attempt of a payment that ended on its
// channel (docs/design/decisions.md section 17).
func (q Queries) CreatePaymentAttempt(ctx context.Context, a payment.Attempt) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO payment_attempts
		(operation_id, payment_id, channel_id, status, decline_code, reason, created_at, ended_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.OperationID, a.PaymentID, a.ChannelID, a.Status, a.DeclineCode, a.Reason, micros(a.CreatedAt), micros(a.EndedAt))
	return err
}

// PaymentAttempts lists a payment's earlier attempts, oldest first, with
// their channels' aliases.
func (q Queries) PaymentAttempts(ctx context.Context, paymentID string) ([]payment.Attempt, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT a.operation_id, a.payment_id, a.channel_id, c.alias, a.status,
		a.decline_code, a.reason, a.created_at, a.ended_at
		FROM payment_attempts a JOIN channels c ON c.id = a.channel_id
		WHERE a.payment_id = $1 ORDER BY a.created_at, a.operation_id`, paymentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []payment.Attempt
	for rows.Next() {
		var (
			a              payment.Attempt
			created, ended int64
		)
		if err := rows.Scan(&a.OperationID, &a.PaymentID, &a.ChannelID, &a.Channel, &a.Status, &a.DeclineCode,
			&a.Reason, &created, &ended); err != nil {
			return nil, err
		}
		a.CreatedAt, a.EndedAt = fromMicros(created), fromMicros(ended)
		out = append(out, a)
	}
	return out, rows.Err()
}
