package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/subscription"
)

// What the cabinet's subscriptions pages read (docs/cabinet.md,
// "Subscriptions"). Read-only: changes go through the subscription domain.

// SubscriptionFilter selects a page of a key's subscriptions, newest first.
type SubscriptionFilter struct {
	Status string
	// After is the (created_at, id) of the last subscription of the
	// previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// ListSubscriptions returns up to f.Limit subscriptions of the key matching
// f, newest first (created_at, then id, descending).
func (q Queries) ListSubscriptions(ctx context.Context, keyID string, f SubscriptionFilter) ([]*subscription.Subscription, error) {
	where, args := []string{"access_key_id = $1"}, []any{keyID}
	if f.Status != "" {
		args = append(args, f.Status)
		where = append(where, "status = $"+strconv.Itoa(len(args)))
	}
	if f.AfterCreated != nil {
		args = append(args, micros(*f.AfterCreated), f.AfterID)
		n := len(args)
		where = append(where, fmt.Sprintf("(created_at, id) < ($%d, $%d)", n-1, n))
	}
	args = append(args, f.Limit)
	rows, err := q.q.QueryContext(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE `+
		strings.Join(where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*subscription.Subscription
	for rows.Next() {
		s, err := scanSubscription(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ChargeFilter selects a page of a subscription's payments, newest first.
type ChargeFilter struct {
	// TermsPaymentID is the payment that carried the terms (the mandate's
	// payment_id): it carries subscription_id but no period.
	TermsPaymentID string
	AfterCreated   *time.Time
	AfterID        string
	Limit          int
}

// SubscriptionPayments returns up to f.Limit payments of the key that carry
// subscriptionID, newest first: its charges (every attempt at every period)
// and the payment with terms that started it. The charges are found by the
// unique index payments_subscription_charge (subscription_id, period,
// attempt) and the payment with terms by its id, so the key's other
// payments are never scanned.
func (q Queries) SubscriptionPayments(ctx context.Context, keyID, subscriptionID string, f ChargeFilter) ([]*payment.Payment, error) {
	args := []any{keyID, subscriptionID, f.TermsPaymentID}
	after := ""
	if f.AfterCreated != nil {
		args = append(args, micros(*f.AfterCreated), f.AfterID)
		n := len(args)
		after = fmt.Sprintf(" AND (created_at, id) < ($%d, $%d)", n-1, n)
	}
	args = append(args, f.Limit)
	limit := "$" + strconv.Itoa(len(args))
	return q.payments(ctx, `SELECT `+paymentColumns+` FROM (
		SELECT `+paymentColumns+` FROM payments
		WHERE subscription_id = $2 AND subscription_period IS NOT NULL AND access_key_id = $1`+after+`
		UNION ALL
		SELECT `+paymentColumns+` FROM payments
		WHERE id = $3 AND subscription_id = $2 AND subscription_period IS NULL AND access_key_id = $1`+after+`
	) p ORDER BY created_at DESC, id DESC LIMIT `+limit, args...)
}
