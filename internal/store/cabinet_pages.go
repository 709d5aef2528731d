package store

import (
	"context"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/webhook"
)

// What the cabinet's payment pages read beyond the API's queries
// (docs/cabinet.md, Payments). Read-only.

// PaymentDay counts a key's payments of one status created on one UTC day.
type PaymentDay struct {
	Day    time.Time // midnight UTC
	Status string
	Count  int
}

const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// PaymentsPerDay counts the key's payments created in [from, to) per UTC day
// and status, in one GROUP BY (status "" counts every status), oldest day
// first. Integer division of the microsecond timestamps gives the day on
// both databases.
func (q Queries) PaymentsPerDay(ctx context.Context, keyID, status string, from, to time.Time) ([]PaymentDay, error) {
	day := "created_at / " + strconv.FormatInt(microsPerDay, 10)
	query := `SELECT ` + day + ` AS day, status, COUNT(*) FROM payments
		WHERE access_key_id = $1 AND created_at >= $2 AND created_at < $3`
	args := []any{keyID, micros(from), micros(to)}
	if status != "" {
		query += ` AND status = $4`
		args = append(args, status)
	}
	rows, err := q.q.QueryContext(ctx, query+` GROUP BY `+day+`, status ORDER BY day, status`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PaymentDay
	for rows.Next() {
		var (
			day int64
			d   PaymentDay
		)
		if err := rows.Scan(&day, &d.Status, &d.Count); err != nil {
			return nil, err
		}
		d.Day = fromMicros(day * microsPerDay)
		out = append(out, d)
	}
	return out, rows.Err()
}

// PaymentOperations lists every operation of a payment, oldest first.
func (q Queries) PaymentOperations(ctx context.Context, paymentID string) ([]operation.Operation, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+operationColumns+` FROM operations
		WHERE payment_id = $1 ORDER BY created_at, id`, paymentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []operation.Operation
	for rows.Next() {
		op, err := scanOperation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *op)
	}
	return out, rows.Err()
}

// EventAttempt is one delivery attempt of an event.
type EventAttempt struct {
	EventID    string
	EndpointID string
	webhook.Attempt
}

// ResourceAttempts lists the delivery attempts of every event of the key
// about one resource, in one query, in the order they were made.
func (q Queries) ResourceAttempts(ctx context.Context, keyID, resourceID string) ([]EventAttempt, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT d.event_id, d.endpoint_id, a.id, a.delivery_id, a.attempted_at,
		a.status_code, a.latency_us, a.error
		FROM events e JOIN webhook_deliveries d ON d.event_id = e.id JOIN webhook_attempts a ON a.delivery_id = d.id
		WHERE e.access_key_id = $1 AND e.resource_id = $2 ORDER BY a.attempted_at, a.id`, keyID, resourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EventAttempt
	for rows.Next() {
		var (
			a           EventAttempt
			at, latency int64
		)
		if err := rows.Scan(&a.EventID, &a.EndpointID, &a.ID, &a.DeliveryID, &at, &a.StatusCode, &latency, &a.Error); err != nil {
			return nil, err
		}
		a.At, a.Latency = fromMicros(at), time.Duration(latency)*time.Microsecond
		out = append(out, a)
	}
	return out, rows.Err()
}
