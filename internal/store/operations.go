package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store/dbconn"
)

// operationColumns reads an operation. refund_id holds Operation.Ref.
const operationColumns = `id, resource, resource_id, kind, state, amount_minor, refund_id, result, created_at, updated_at`

// CreateOperation stores an operation and, when given, its sealed secret;
// a handed-off run's operation, its lease (rescue_at).
func (q Queries) CreateOperation(ctx context.Context, op *operation.Operation, sealed []byte) error {
	// Deferred: nothing reads the inserts' results (dbconn/pipeline.go).
	_, err := q.q.ExecContext(dbconn.Deferred(ctx), `INSERT INTO operations (id, resource, resource_id, kind, state,
		amount_minor, refund_id, result, created_at, updated_at, rescue_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		op.ID, op.Resource, op.ResourceID, op.Kind, string(op.State), op.AmountMinor, op.Ref, op.Result,
		micros(op.CreatedAt), micros(op.UpdatedAt), leaseMicros(op.RescueAt))
	if err != nil || sealed == nil {
		return err
	}
	_, err = q.q.ExecContext(dbconn.Deferred(ctx), `INSERT INTO operation_secrets (operation_id, sealed) VALUES ($1, $2)`, op.ID, sealed)
	return err
}

func scanOperation(row interface{ Scan(...any) error }) (*operation.Operation, error) {
	var (
		op               operation.Operation
		state            string
		created, updated int64
	)
	err := row.Scan(&op.ID, &op.Resource, &op.ResourceID, &op.Kind, &state, &op.AmountMinor, &op.Ref, &op.Result, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	op.State, op.CreatedAt, op.UpdatedAt = operation.State(state), fromMicros(created), fromMicros(updated)
	return &op, err
}

// FindOperation finds an operation by id.
func (q Queries) FindOperation(ctx context.Context, id string) (*operation.Operation, error) {
	return scanOperation(q.q.QueryRowContext(ctx, `SELECT `+operationColumns+` FROM operations WHERE id = $1`, id))
}

// LockOperation finds an operation and holds it until the transaction ends
// (PostgreSQL: FOR UPDATE; SQLite's transaction holds the write lock
// already), so that two runs of one operation recording their outcomes at
// once take turns: the second finds the first's outcome (a handed-off run
// and River's run of the job rescued from its lease, docs/operations.md,
// "Jobs run where they are queued (handoff)").
func (q Queries) LockOperation(ctx context.Context, id string) (*operation.Operation, error) {
	if q.tx == nil {
		return nil, ErrNeedsTx
	}
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	return scanOperation(q.q.QueryRowContext(ctx, `SELECT `+operationColumns+` FROM operations WHERE id = $1`+lock, id))
}

// FindOperationToRun reads, in one statement, what the operation engine
// reads before a provider call besides the resource itself: the
// operation, its sealed secret (nil once deleted) and the clock offset of
// the key that owns its resource (ResourceClockOffset: zero for a resource
// it does not know).
func (q Queries) FindOperationToRun(ctx context.Context, id string) (*operation.Operation, []byte, time.Duration, error) {
	row := q.q.QueryRowContext(ctx, `SELECT o.id, o.resource, o.resource_id, o.kind, o.state,
		o.amount_minor, o.refund_id, o.result, o.created_at, o.updated_at, s.sealed, COALESCE(k.clock_offset_micros, 0)
		FROM operations o
		LEFT JOIN operation_secrets s ON s.operation_id = o.id
		LEFT JOIN payments p ON o.resource = 'payment' AND p.id = o.resource_id
		LEFT JOIN payouts po ON o.resource = 'payout' AND po.id = o.resource_id
		LEFT JOIN card_verifications v ON o.resource = 'card_verification' AND v.id = o.resource_id
		LEFT JOIN access_keys k ON k.id = COALESCE(p.access_key_id, po.access_key_id, v.access_key_id)
		WHERE o.id = $1`, id)
	parts, err := splitRow(row, 12)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, nil, 0, err
	}
	op, err := scanOperation(parts)
	if err != nil {
		return nil, nil, 0, err
	}
	var (
		sealed []byte
		off    int64
	)
	if err := parts.Scan(&sealed, &off); err != nil {
		return nil, nil, 0, err
	}
	return op, sealed, time.Duration(off) * time.Microsecond, nil
}

// LatestOperation returns the newest operation of a kind for a payment.
func (q Queries) LatestOperation(ctx context.Context, paymentID, kind string) (*operation.Operation, error) {
	return scanOperation(q.q.QueryRowContext(ctx, `SELECT `+operationColumns+` FROM operations
		WHERE resource = 'payment' AND resource_id = $1 AND kind = $2 ORDER BY created_at DESC, id DESC LIMIT 1`,
		paymentID, kind))
}

// UpdateOperation stores an operation's state and result. Done, it clears
// the lease of a handed-off run (internal/handoff): nothing is left to
// rescue. Not done (inquiring), the run keeps its lease until it hands the
// job back to River.
func (q Queries) UpdateOperation(ctx context.Context, op *operation.Operation) error {
	res, err := q.q.ExecContext(ctx, `UPDATE operations SET state = $2, result = $3, updated_at = $4,
		rescue_at = CASE WHEN $5 THEN NULL ELSE rescue_at END WHERE id = $1`,
		op.ID, string(op.State), op.Result, micros(op.UpdatedAt), op.State == operation.Done)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// OperationSecret returns an operation's sealed secret, ErrNotFound once deleted.
func (q Queries) OperationSecret(ctx context.Context, operationID string) ([]byte, error) {
	var b []byte
	err := q.q.QueryRowContext(ctx, `SELECT sealed FROM operation_secrets WHERE operation_id = $1`, operationID).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return b, err
}

// DeleteOperationSecret forgets an operation's secret (the provider has seen it).
func (q Queries) DeleteOperationSecret(ctx context.Context, operationID string) error {
	_, err := q.q.ExecContext(dbconn.Deferred(ctx), `DELETE FROM operation_secrets WHERE operation_id = $1`, operationID)
	return err
}

// CreateRefund stores a refund.
func (q Queries) CreateRefund(ctx context.Context, r *payment.Refund) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO refunds (id, payment_id, amount_minor, status, created_at, completed_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, r.PaymentID, r.AmountMinor, r.Status, micros(r.CreatedAt), nullMicros(r.CompletedAt))
	return err
}

// CompleteRefund records a refund's outcome.
func (q Queries) CompleteRefund(ctx context.Context, r *payment.Refund) error {
	_, err := q.q.ExecContext(ctx, `UPDATE refunds SET status = $2, completed_at = $3 WHERE id = $1`,
		r.ID, r.Status, nullMicros(r.CompletedAt))
	return err
}

// ListRefunds lists a payment's refunds, oldest first.
func (q Queries) ListRefunds(ctx context.Context, paymentID string) ([]payment.Refund, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, payment_id, amount_minor, status, created_at, completed_at
		FROM refunds WHERE payment_id = $1 ORDER BY created_at, id`, paymentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []payment.Refund{}
	for rows.Next() {
		var (
			r         payment.Refund
			created   int64
			completed sql.NullInt64
		)
		if err := rows.Scan(&r.ID, &r.PaymentID, &r.AmountMinor, &r.Status, &created, &completed); err != nil {
			return nil, err
		}
		r.CreatedAt, r.CompletedAt = fromMicros(created), timePtr(completed)
		out = append(out, r)
	}
	return out, rows.Err()
}

// CountOperations counts a payment's operations of a kind.
func (q Queries) CountOperations(ctx context.Context, paymentID, kind string) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT count(*) FROM operations WHERE resource = 'payment' AND resource_id = $1 AND kind = $2`,
		paymentID, kind).Scan(&n)
	return n, err
}

// OpenOperations lists a payment's operations that are not done.
func (q Queries) OpenOperations(ctx context.Context, paymentID string) ([]payment.Operation, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+operationColumns+` FROM operations
		WHERE resource = 'payment' AND resource_id = $1 AND state <> $2 ORDER BY created_at, id`,
		paymentID, string(payment.OpDone))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []payment.Operation
	for rows.Next() {
		op, err := scanOperation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *op)
	}
	return out, rows.Err()
}
