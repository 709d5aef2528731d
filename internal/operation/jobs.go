package operation

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/provider"
)

// RunArgs runs one operation, whatever its resource.
type RunArgs struct {
	OperationID string `json:"operation_id"`
	// Again: an earlier run of the operation may have sent its call (the
	// job of a handed-off run handed back, or rescued once its lease
	// lapsed): the job's first River attempt is the operation's second run
	// (Engine.Run).
	Again bool `json:"again,omitempty"`
}

// Kind names the job (dotted, docs/design/style.md).
func (RunArgs) Kind() string { return "operation.run" }

// InsertOpts: money must not be dropped, so many attempts: with tries
// every 30 s at most, three hours of an acquirer's outage.
func (RunArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 360} }

// runner is the run policy of the engine's jobs.
type runner[R Reader, T Tx] struct{ e *Engine[R, T] }

// NextRetry backs off 1 s, 2 s, 4 s … up to 30 seconds.
func (r runner[R, T]) nextRetry(attempt int) time.Time { return r.e.Now().Add(Backoff(attempt)) }

func (r runner[R, T]) timeout() time.Duration {
	if r.e.OpTimeout > 0 {
		return r.e.OpTimeout
	}
	return time.Minute
}

// RunWorker runs operation.run jobs.
type RunWorker[R Reader, T Tx] struct {
	river.WorkerDefaults[RunArgs]
	runner[R, T]
}

// NextRetry backs off 1 s, 2 s, 4 s … up to 30 seconds.
func (w *RunWorker[R, T]) NextRetry(job *river.Job[RunArgs]) time.Time {
	return w.nextRetry(job.Attempt)
}

// Timeout bounds one provider call and its bookkeeping.
func (w *RunWorker[R, T]) Timeout(*river.Job[RunArgs]) time.Duration { return w.timeout() }

// Work runs the operation. River counts its own attempts; the operation's
// runs are one more when an earlier run was handed back or rescued
// (RunArgs.Again).
func (w *RunWorker[R, T]) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	attempt, limit := job.Attempt, job.MaxAttempts
	if job.Args.Again {
		attempt, limit = attempt+1, limit+1
	}
	return w.e.Run(ctx, job.Args.OperationID, attempt, limit)
}

// AddWorkers registers the engine's workers.
func AddWorkers[R Reader, T Tx](w *river.Workers, e *Engine[R, T]) {
	river.AddWorker(w, &RunWorker[R, T]{runner: runner[R, T]{e}})
}

// AddHandoff registers the engine's runs of jobs handed off by the
// transaction that queued them (internal/handoff), and the rescue of their
// leases.
func AddHandoff[R Reader, T interface {
	Tx
	handoff.Tx
}](w *handoff.Workers, e *Engine[R, T]) {
	r := runner[R, T]{e}
	handoff.AddPrepared(w, RunArgs{}.Kind(), r.runHandedOff, r.prepare, e.Rescue)
}

// LeaseTx clears and rescues the leases of handed-off runs (the store's
// transaction).
type LeaseTx interface {
	ClearOperationLease(ctx context.Context, id string) (held bool, err error)
	// LapsedOperations clears the leases lapsed before before, at most
	// limit, and returns their operations.
	LapsedOperations(ctx context.Context, before time.Time, limit int) ([]*Operation, error)
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// againArgs is the job that runs an operation again after a run that may
// have sent its call.
func againArgs(opID string) RunArgs { return RunArgs{OperationID: opID, Again: true} }

// rescueBatch bounds the leases one rescue takes; the next takes the rest.
const rescueBatch = 500

// Rescue queues River's job for every operation whose handed-off run's
// lease lapsed before before (its process stopped before the outcome), in
// the transaction that clears the leases: a handoff.Rescuer. The job
// starts again from the operation as stored: its call carries the
// operation's id, so a provider that saw the first one answers the same.
func (e *Engine[R, T]) Rescue(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := e.Transact(ctx, func(tx T) error {
		n = 0
		lapsed, err := tx.LapsedOperations(ctx, before, rescueBatch)
		if err != nil {
			return err
		}
		for _, op := range lapsed {
			if op.State == Done {
				continue
			}
			if err := tx.Enqueue(ctx, againArgs(op.ID), nil); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// prepare reads, in the transaction that queues the operation, what its
// run reads before the call (the operation, its secret, its key's clock,
// the resource), so that the run starts with the call. What Queue holds
// already (the operation and its secret as written, and the key's clock
// when the request's context carries it) is not read again.
func (r runner[R, T]) prepare(ctx context.Context, tx T, args river.JobArgs, q *queued) (*loaded[R, T], error) {
	rd := r.e.ReaderOf(tx)
	if clock.Known(ctx) || !r.e.KeyClocks {
		return r.e.loadQueued(ctx, rd, q)
	}
	return r.e.load(ctx, rd, q.op.ID)
}

// runHandedOff runs an operation as its job's first attempt would, in the
// process whose transaction queued it. The outcome recorded clears the
// operation's lease with it (Record); a run that ends without one (an
// error to retry, a snooze) hands the job back to River at the time River
// would have run it again. If even that fails, the job runs once the
// lease lapses (Rescue).
func (r runner[R, T]) runHandedOff(ctx context.Context, j handoff.Job[*loaded[R, T]]) error {
	opID := j.Args.(RunArgs).OperationID
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	var err error
	if j.Prepared {
		err = r.e.runLoaded(ctx, j.Data, 1, RunArgs{}.InsertOpts().MaxAttempts, func() {})
	} else {
		err = r.e.Run(ctx, opID, 1, RunArgs{}.InsertOpts().MaxAttempts)
	}
	if err == nil {
		return nil
	}
	unlease := func(ctx context.Context, tx T) (bool, error) { return tx.ClearOperationLease(ctx, opID) }
	// River's run is the operation's second unless this one surely sent
	// nothing: its call never left, or the acquirer asked it to wait (a
	// snooze; an operation asked about snoozes too, but inquiring, it never
	// moves).
	args := againArgs(opID)
	var snooze *river.JobSnoozeError
	if provider.IsUnsent(err) || errors.As(err, &snooze) {
		args.Again = false
	}
	if berr := handoff.HandBack(ctx, r.e.Transact, unlease, args, err, r.nextRetry(1), r.e.Now()); berr != nil {
		r.e.Log.Warn("handing an operation back to River failed: it runs once its lease lapses",
			"operation_id", opID, "error", berr)
	}
	return err
}
