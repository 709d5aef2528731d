package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
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
	query, args := PaymentsPerDayQuery(keyID, status, from, to)
	rows, err := q.q.QueryContext(ctx, query, args...)
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

// PaymentsPerDayQuery is the query PaymentsPerDay runs, with its
// arguments (bench/cabinet_page.go prints its plan). The day bounds are
// implied by the created_at ones (the division only ever rounds one way);
// with them the range is one of payments_by_key_day (migrations/), whose
// order is the GROUP BY's: the counts are taken reading the index
// once, in order, with no sort and no table row (docs/benchmarks.md,
// "Cabinet payments page").
func PaymentsPerDayQuery(keyID, status string, from, to time.Time) (string, []any) {
	day := "created_at / " + strconv.FormatInt(microsPerDay, 10)
	query := `SELECT ` + day + ` AS day, status, COUNT(*) FROM payments
		WHERE access_key_id = $1 AND ` + day + ` >= $2 AND ` + day + ` <= $3 AND created_at >= $4 AND created_at < $5`
	args := []any{keyID, micros(from) / microsPerDay, (micros(to) - 1) / microsPerDay, micros(from), micros(to)}
	if status != "" {
		query += ` AND status = $6`
		args = append(args, status)
	}
	return query + ` GROUP BY ` + day + `, status ORDER BY day, status`, args
}

// PaymentListQuery is the query ListPayments runs for the key and f, with
// its arguments (bench/cabinet_page.go prints its plan): one range of an
// index newest first, up to f.Limit rows. A search (an exact payment id,
// order_id or customer_reference) is three lookups instead of one OR,
// which SQLite, without statistics, would answer by reading every payment
// of the key: the id and the order_id match a few payments, the customer's
// newest matching payments come in order from payments_by_customer, so the
// page costs the same whatever the number of the key's or the customer's
// payments (docs/benchmarks.md, "Cabinet payments page"). The outer query
// needs no key condition: the ids come from the key's rows, and id is the
// primary key.
func PaymentListQuery(keyID string, f payment.Filter) (string, []any) {
	order := ` ORDER BY created_at DESC, id DESC LIMIT $`
	if f.Search == "" {
		where, args := paymentWhere(keyID, f)
		args = append(args, f.Limit)
		return `SELECT ` + paymentColumns + ` FROM payments WHERE ` + where + order + strconv.Itoa(len(args)), args
	}
	search := f.Search
	f.Search = ""
	conds, args := paymentConds(keyID, f)
	args = append(args, search, f.Limit)
	s, limit := "$"+strconv.Itoa(len(args)-1), strconv.Itoa(len(args))
	rest := ""
	for _, c := range conds[1:] {
		rest += " AND " + c
	}
	return `SELECT ` + paymentColumns + ` FROM payments WHERE id IN (
		SELECT id FROM payments WHERE access_key_id = $1 AND id = ` + s + `
		UNION ALL SELECT id FROM payments WHERE access_key_id = $1 AND order_id = ` + s + `
		UNION ALL SELECT id FROM (SELECT id FROM payments WHERE ` + strings.Join(conds, " AND ") +
		` AND customer_reference = ` + s + order + limit + `) AS by_customer)` + rest + order + limit, args
}

// PaymentOperations lists every operation of a payment, oldest first.
func (q Queries) PaymentOperations(ctx context.Context, paymentID string) ([]operation.Operation, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+operationColumns+` FROM operations
		WHERE resource = 'payment' AND resource_id = $1 ORDER BY created_at, id`, paymentID)
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
