package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/webhook"
)

// What the cabinet's webhook endpoints and event log pages read beyond the
// API's queries (docs/cabinet.md, "Webhook endpoints and events").
// Read-only.

// DeliveryCounts counts the deliveries of each event by status, in one
// query on the deliveries' unique (event_id, endpoint_id) index: event id →
// status → count. An event without a delivery is absent.
func (q Queries) DeliveryCounts(ctx context.Context, eventIDs []string) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	marks := make([]string, len(eventIDs))
	args := make([]any, len(eventIDs))
	for i, id := range eventIDs {
		marks[i], args[i] = "$"+strconv.Itoa(i+1), id
	}
	rows, err := q.q.QueryContext(ctx, `SELECT event_id, status, COUNT(*) FROM webhook_deliveries
		WHERE event_id IN (`+strings.Join(marks, ", ")+`) GROUP BY event_id, status`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			event, status string
			n             int
		)
		if err := rows.Scan(&event, &status, &n); err != nil {
			return nil, err
		}
		if out[event] == nil {
			out[event] = map[string]int{}
		}
		out[event][status] = n
	}
	return out, rows.Err()
}

// EndpointHealth is how an endpoint's deliveries fare now.
type EndpointHealth struct {
	Pending int // deliveries still being tried
	Failed  int // deliveries given up (retries exhausted, endpoint disabled or removed)
	// LastPending is the latest attempt of a pending delivery (a failure,
	// or the retry would not be pending), nil when none was made.
	LastPending *webhook.Attempt
}

// FindEndpointHealth reads an endpoint's health. Both queries stay within
// the deliveries that are not succeeded, through the (endpoint_id, status)
// index and the attempts' (delivery_id, attempted_at) index, so an
// endpoint's delivered history, however long, is not read.
func (q Queries) FindEndpointHealth(ctx context.Context, endpointID string) (EndpointHealth, error) {
	var h EndpointHealth
	rows, err := q.q.QueryContext(ctx, `SELECT status, COUNT(*) FROM webhook_deliveries
		WHERE endpoint_id = $1 AND status IN ('pending', 'failed') GROUP BY status`, endpointID)
	if err != nil {
		return h, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			status string
			n      int
		)
		if err := rows.Scan(&status, &n); err != nil {
			return h, err
		}
		switch status {
		case webhook.Pending:
			h.Pending = n
		case webhook.Failed:
			h.Failed = n
		}
	}
	if err := rows.Err(); err != nil {
		return h, err
	}
	if h.Pending == 0 {
		return h, nil
	}
	var (
		a           webhook.Attempt
		at, latency int64
	)
	err = q.q.QueryRowContext(ctx, `SELECT a.id, a.delivery_id, a.attempted_at, a.status_code, a.latency_us, a.error
		FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
		WHERE d.endpoint_id = $1 AND d.status = 'pending' ORDER BY a.attempted_at DESC, a.id DESC LIMIT 1`, endpointID).
		Scan(&a.ID, &a.DeliveryID, &at, &a.StatusCode, &latency, &a.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	a.At, a.Latency = fromMicros(at), time.Duration(latency)*time.Microsecond
	h.LastPending = &a
	return h, nil
}
