package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/webhook"
)

// A transaction hands jobs off to this process (internal/handoff): the
// rows it writes for them carry a lease (rescue_at), it
// runs what waits for its commit, and the rescue takes the leases of a
// process that died.

// UseHandoff sets the workers that run jobs queued here in this process;
// nil: River runs every job.
func (s *Store) UseHandoff(w *handoff.Workers) { s.handoff = w }

// Handoff implements handoff.Tx.
func (t *Tx) Handoff() *handoff.Workers { return t.store.handoff }

// ClearOperationLease clears the lease of an operation's handed-off run
// and reports whether it still held one (a rescue may have taken it).
func (q Queries) ClearOperationLease(ctx context.Context, id string) (bool, error) {
	return q.clearLease(ctx, "operations", id)
}

// ClearDeliveryLease clears the lease of a delivery's handed-off first
// attempt and reports whether it still held one.
func (q Queries) ClearDeliveryLease(ctx context.Context, id string) (bool, error) {
	return q.clearLease(ctx, "webhook_deliveries", id)
}

func (q Queries) clearLease(ctx context.Context, table, id string) (bool, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE `+table+` SET rescue_at = NULL WHERE id = $1 AND rescue_at IS NOT NULL`, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// LapsedOperations clears the leases of at most limit operations that
// lapsed before before (their process died with the run in hand) and
// returns those operations, to be queued in the same transaction. Two
// rescues at once take each lease once: the UPDATE locks the row, and one
// taken by the other no longer matches.
func (q Queries) LapsedOperations(ctx context.Context, before time.Time, limit int) ([]*operation.Operation, error) {
	rows, err := q.q.QueryContext(ctx, q.claimLapsed("operations")+` RETURNING `+operationColumns, micros(before), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*operation.Operation
	for rows.Next() {
		op, err := scanOperation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, op)
	}
	return out, rows.Err()
}

// LapsedDeliveries is LapsedOperations for deliveries' first attempts.
func (q Queries) LapsedDeliveries(ctx context.Context, before time.Time, limit int) ([]*webhook.Delivery, error) {
	return q.queryDeliveries(ctx, q.claimLapsed("webhook_deliveries")+` RETURNING `+deliveryColumns, micros(before), limit)
}

// claimLapsed clears the lapsed leases of table ($1: before, $2: limit).
// On PostgreSQL a lease being cleared by another transaction (its run
// recording, another rescue) is skipped, not waited for.
func (q Queries) claimLapsed(table string) string {
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return `UPDATE ` + table + ` SET rescue_at = NULL WHERE id IN (SELECT id FROM ` + table + `
		WHERE rescue_at IS NOT NULL AND rescue_at < $1 ORDER BY rescue_at LIMIT $2` + lock + `)`
}

// AfterCommit implements handoff.Tx: fn runs once the transaction's fate
// is known, true after its commit, false after a rollback, a failed
// commit, or a rollback to a savepoint taken before fn was added.
func (t *Tx) AfterCommit(fn func(committed bool)) { t.after.fns = append(t.after.fns, fn) }

// afterCommit holds a transaction's AfterCommit functions and the
// savepoints taken among them.
type afterCommit struct {
	fns   []func(bool)
	marks []savepointMark
}

type savepointMark struct {
	name string
	n    int // len(fns) when it was taken
}

func (a *afterCommit) mark(name string) {
	a.marks = append(a.marks, savepointMark{name, len(a.fns)})
}

// undo runs, with false, the functions added since savepoint name, which
// stays (ROLLBACK TO keeps it; later ones are gone).
func (a *afterCommit) undo(name string) {
	for i := len(a.marks) - 1; i >= 0; i-- {
		if a.marks[i].name == name {
			a.fire(a.marks[i].n, false)
			a.marks = a.marks[:i+1]
			return
		}
	}
}

// fire runs the functions from the from'th on, once each.
func (a *afterCommit) fire(from int, committed bool) {
	if from >= len(a.fns) {
		return
	}
	fns := a.fns[from:]
	a.fns = a.fns[:from]
	for _, fn := range fns {
		fn(committed)
	}
}

// leaseMicros is a lease as stored: NULL for none.
func leaseMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(t), Valid: true}
}
