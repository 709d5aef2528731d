package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/store/dbconn"
	"github.com/paygate/paygate/internal/webhook"
)

// CreateWebhookEndpoint stores a new endpoint.
func (q Queries) CreateWebhookEndpoint(ctx context.Context, e *webhook.Endpoint) error {
	types, err := json.Marshal(nonNil(e.EventTypes))
	if err != nil {
		return err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO webhook_endpoints
		(id, access_key_id, url, event_types, secret_sealed, previous_secret_sealed, previous_secret_until,
		 disabled_at, disabled_reason, deleted_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.ID, e.AccessKeyID, e.URL, string(types), e.SecretSealed, e.PreviousSecretSealed, nullMicros(e.PreviousSecretUntil),
		nullMicros(e.DisabledAt), e.DisabledReason, nullMicros(e.DeletedAt), micros(e.CreatedAt))
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const endpointColumns = `id, access_key_id, url, event_types, secret_sealed, previous_secret_sealed,
	previous_secret_until, disabled_at, disabled_reason, deleted_at, created_at`

func scanEndpoint(row interface{ Scan(...any) error }) (*webhook.Endpoint, error) {
	var (
		e                       webhook.Endpoint
		types                   string
		until, disabled, delete sql.NullInt64
		created                 int64
	)
	err := row.Scan(&e.ID, &e.AccessKeyID, &e.URL, &types, &e.SecretSealed, &e.PreviousSecretSealed,
		&until, &disabled, &e.DisabledReason, &delete, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	e.PreviousSecretUntil, e.DisabledAt, e.DeletedAt, e.CreatedAt = timePtr(until), timePtr(disabled), timePtr(delete), fromMicros(created)
	return &e, json.Unmarshal([]byte(types), &e.EventTypes)
}

func (q Queries) endpoints(ctx context.Context, query string, args ...any) ([]*webhook.Endpoint, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*webhook.Endpoint{}
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// FindWebhookEndpoint finds an endpoint by id, whatever key owns it,
// removed ones included (their deliveries still name them).
func (q Queries) FindWebhookEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error) {
	return scanEndpoint(q.q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1`, id))
}

// FindWebhookEndpointForKey finds a key's endpoint that is not removed;
// another key's is ErrNotFound.
func (q Queries) FindWebhookEndpointForKey(ctx context.Context, keyID, id string) (*webhook.Endpoint, error) {
	return scanEndpoint(q.q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND access_key_id = $2 AND deleted_at IS NULL`, id, keyID))
}

// ListWebhookEndpoints lists a key's endpoints that are not removed,
// disabled ones included, oldest first.
func (q Queries) ListWebhookEndpoints(ctx context.Context, keyID string) ([]*webhook.Endpoint, error) {
	return q.endpoints(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE access_key_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, keyID)
}

// ListAllWebhookEndpoints lists every key's endpoints that are not removed.
func (q Queries) ListAllWebhookEndpoints(ctx context.Context) ([]*webhook.Endpoint, error) {
	return q.endpoints(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE deleted_at IS NULL ORDER BY created_at, id`)
}

// RemoveWebhookEndpoint removes a key's endpoint: nothing more is sent to
// it. The row stays for the deliveries that name it. ErrNotFound when the
// key has no such endpoint (or it is already removed).
func (q Queries) RemoveWebhookEndpoint(ctx context.Context, keyID, id string, at time.Time) error {
	res, err := q.q.ExecContext(ctx, `UPDATE webhook_endpoints SET deleted_at = $3
		WHERE id = $1 AND access_key_id = $2 AND deleted_at IS NULL`, id, keyID, micros(at))
	if err != nil {
		return err
	}
	return oneRow(res)
}

// RotateWebhookSecret replaces an endpoint's secret; previous (nil for
// none) keeps signing until until.
func (q Queries) RotateWebhookSecret(ctx context.Context, id string, sealed, previous []byte, until *time.Time) error {
	res, err := q.q.ExecContext(ctx, `UPDATE webhook_endpoints
		SET secret_sealed = $2, previous_secret_sealed = $3, previous_secret_until = $4 WHERE id = $1`,
		id, sealed, previous, nullMicros(until))
	if err != nil {
		return err
	}
	return oneRow(res)
}

// DisableWebhookEndpoint stops deliveries to an endpoint (a 410 answer);
// disabling twice keeps the first time and reason.
func (q Queries) DisableWebhookEndpoint(ctx context.Context, id string, at time.Time, reason string) error {
	res, err := q.q.ExecContext(ctx, `UPDATE webhook_endpoints
		SET disabled_reason = CASE WHEN disabled_at IS NULL THEN $3 ELSE disabled_reason END,
		    disabled_at = COALESCE(disabled_at, $2)
		WHERE id = $1`, id, micros(at), reason)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// FindRecordedEvent finds an event with its body exactly as stored.
func (q Queries) FindRecordedEvent(ctx context.Context, id string) (*webhook.Recorded, error) {
	e, err := q.FindEvent(ctx, id)
	if err != nil {
		return nil, err
	}
	return &webhook.Recorded{ID: e.ID, AccessKeyID: e.AccessKeyID, Type: e.Type, Body: e.Body}, nil
}

// CreateDelivery inserts a delivery unless its event already has one to
// its endpoint, and reports whether it did; with its first attempt's
// lease when handed off (rescue_at).
func (q Queries) CreateDelivery(ctx context.Context, d *webhook.Delivery) (bool, error) {
	res, err := q.q.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`, rescue_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (event_id, endpoint_id) DO NOTHING`, append(deliveryArgs(d), leaseMicros(d.RescueAt))...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RequeueDelivery inserts d, or when its event already has a delivery to
// its endpoint, starts a new round of that one: pending, no attempts, due
// at d's NextAttemptAt, the next generation (a handed-off attempt's lease
// cleared: the new round's job runs it). It returns the stored row.
func (q Queries) RequeueDelivery(ctx context.Context, d *webhook.Delivery) (*webhook.Delivery, error) {
	return scanDelivery(q.q.QueryRowContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (event_id, endpoint_id) DO UPDATE SET
			status = excluded.status, reason = '', attempts = 0, first_attempt_at = NULL,
			next_attempt_at = excluded.next_attempt_at, generation = webhook_deliveries.generation + 1,
			updated_at = excluded.updated_at, rescue_at = NULL
		RETURNING `+deliveryColumns, deliveryArgs(d)...))
}

const deliveryColumns = `id, event_id, endpoint_id, status, reason, attempts, generation, first_attempt_at,
	next_attempt_at, created_at, updated_at`

func deliveryArgs(d *webhook.Delivery) []any {
	return []any{d.ID, d.EventID, d.EndpointID, d.Status, d.Reason, d.Attempts, d.Generation,
		nullMicros(d.FirstAttemptAt), nullMicros(d.NextAttemptAt), micros(d.CreatedAt), micros(d.UpdatedAt)}
}

func scanDelivery(row interface{ Scan(...any) error }) (*webhook.Delivery, error) {
	var (
		d                    webhook.Delivery
		first, next          sql.NullInt64
		created, updatedTime int64
	)
	err := row.Scan(&d.ID, &d.EventID, &d.EndpointID, &d.Status, &d.Reason, &d.Attempts, &d.Generation,
		&first, &next, &created, &updatedTime)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	d.FirstAttemptAt, d.NextAttemptAt = timePtr(first), timePtr(next)
	d.CreatedAt, d.UpdatedAt = fromMicros(created), fromMicros(updatedTime)
	return &d, nil
}

// FindDelivery finds a delivery by id.
func (q Queries) FindDelivery(ctx context.Context, id string) (*webhook.Delivery, error) {
	return scanDelivery(q.q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, id))
}

// FindDeliveryToSend reads a delivery with its endpoint and its event in
// one statement: what a deliver job reads before its attempt.
func (q Queries) FindDeliveryToSend(ctx context.Context, id string) (*webhook.Delivery, *webhook.Endpoint, *webhook.Recorded, error) {
	row := q.q.QueryRowContext(ctx, `SELECT `+qualified("d", deliveryColumns)+`, `+qualified("e", endpointColumns)+`, `+
		qualified("ev", eventColumns)+` FROM webhook_deliveries d
		JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.id = d.event_id
		WHERE d.id = $1`, id)
	parts, err := splitRow(row, 29)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, nil, err
	}
	del, err := scanDelivery(parts)
	if err != nil {
		return nil, nil, nil, err
	}
	ep, err := scanEndpoint(parts)
	if err != nil {
		return nil, nil, nil, err
	}
	ev, err := scanEvent(parts)
	if err != nil {
		return nil, nil, nil, err
	}
	return del, ep, &webhook.Recorded{ID: ev.ID, AccessKeyID: ev.AccessKeyID, Type: ev.Type, Body: ev.Body}, nil
}

// UpdateDelivery stores d's state if the stored delivery is still of
// generation, and reports whether it was (compare-and-set: a resend or a
// second run of the same job loses). It clears a handed-off attempt's
// lease: the attempt is recorded, and a pending delivery's next job is
// queued with it.
func (q Queries) UpdateDelivery(ctx context.Context, d *webhook.Delivery, generation int) (bool, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $3, reason = $4, attempts = $5,
		generation = $6, first_attempt_at = $7, next_attempt_at = $8, updated_at = $9, rescue_at = NULL
		WHERE id = $1 AND generation = $2`, d.ID, generation, d.Status, d.Reason, d.Attempts, d.Generation,
		nullMicros(d.FirstAttemptAt), nullMicros(d.NextAttemptAt), micros(d.UpdatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// OverdueDeliveries lists pending deliveries that were due before the
// given time, the longest overdue first, at most limit. A delivery whose
// first attempt holds a lease is left to the lease's rescue: its run may
// still be under way (docs/webhooks.md, "Delivery guarantees").
func (q Queries) OverdueDeliveries(ctx context.Context, before time.Time, limit int) ([]*webhook.Delivery, error) {
	return q.listDeliveries(ctx, `WHERE status = 'pending' AND next_attempt_at < $1 AND rescue_at IS NULL ORDER BY next_attempt_at LIMIT $2`, micros(before), limit)
}

// ListDeliveries lists an event's deliveries, oldest first.
func (q Queries) ListDeliveries(ctx context.Context, eventID string) ([]*webhook.Delivery, error) {
	return q.listDeliveries(ctx, `WHERE event_id = $1 ORDER BY created_at, id`, eventID)
}

func (q Queries) listDeliveries(ctx context.Context, where string, args ...any) ([]*webhook.Delivery, error) {
	return q.queryDeliveries(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries `+where, args...)
}

// queryDeliveries runs a query whose rows are deliveryColumns.
func (q Queries) queryDeliveries(ctx context.Context, query string, args ...any) ([]*webhook.Delivery, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*webhook.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// RecordAttempt stores one attempt.
func (q Queries) RecordAttempt(ctx context.Context, a *webhook.Attempt) error {
	_, err := q.q.ExecContext(dbconn.Deferred(ctx), `INSERT INTO webhook_attempts
		(id, delivery_id, attempted_at, status_code, latency_us, response, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.ID, a.DeliveryID, micros(a.At), a.StatusCode, a.Latency.Microseconds(), a.Response, a.Error)
	return err
}

// ListAttempts lists the attempts of every delivery of an event, in the
// order they were made.
func (q Queries) ListAttempts(ctx context.Context, eventID string) ([]*webhook.Attempt, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT a.id, a.delivery_id, a.attempted_at, a.status_code, a.latency_us,
		a.response, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
		WHERE d.event_id = $1 ORDER BY a.attempted_at, a.id`, eventID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*webhook.Attempt
	for rows.Next() {
		var (
			a           webhook.Attempt
			at, latency int64
		)
		if err := rows.Scan(&a.ID, &a.DeliveryID, &at, &a.StatusCode, &latency, &a.Response, &a.Error); err != nil {
			return nil, err
		}
		a.At, a.Latency = fromMicros(at), time.Duration(latency)*time.Microsecond
		out = append(out, &a)
	}
	return out, rows.Err()
}
