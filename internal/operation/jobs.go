package operation

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/handoff"
)

// RunArgs runs one operation, whatever its resource.
type RunArgs struct {
	OperationID string `json:"operation_id"`
}

// Kind names the job (dotted, docs/design/style.md).
func (RunArgs) Kind() string { return "operation.run" }

// InsertOpts: money must not be dropped, so many attempts.
func (RunArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 40} }

// LegacyPaymentArgs is the job a payment's operation had before operations
// served every resource ("payment.operate", the same arguments). Jobs
// queued by an earlier version run after an upgrade, and payments'
// operations are still queued under it for one release (Enqueue).
type LegacyPaymentArgs RunArgs

// Kind names the job.
func (LegacyPaymentArgs) Kind() string { return "payment.operate" }

// InsertOpts as RunArgs.
func (LegacyPaymentArgs) InsertOpts() river.InsertOpts { return RunArgs{}.InsertOpts() }

// runner is the policy both kinds share.
type runner struct{ e *Engine }

// NextRetry backs off 1 s, 2 s, 4 s … up to 5 minutes.
func (r runner) nextRetry(attempt int) time.Time { return r.e.Now().Add(Backoff(attempt)) }

func (r runner) timeout() time.Duration {
	if r.e.OpTimeout > 0 {
		return r.e.OpTimeout
	}
	return time.Minute
}

// RunWorker runs operation.run jobs.
type RunWorker struct {
	river.WorkerDefaults[RunArgs]
	runner
}

// NextRetry backs off 1 s, 2 s, 4 s … up to 5 minutes.
func (w *RunWorker) NextRetry(job *river.Job[RunArgs]) time.Time { return w.nextRetry(job.Attempt) }

// Timeout bounds one provider call and its bookkeeping.
func (w *RunWorker) Timeout(*river.Job[RunArgs]) time.Duration { return w.timeout() }

// Work runs the operation.
func (w *RunWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	return w.e.Run(ctx, job.Args.OperationID, job.Attempt, job.MaxAttempts)
}

// legacyWorker runs payment.operate jobs as RunWorker does.
type legacyWorker struct {
	river.WorkerDefaults[LegacyPaymentArgs]
	runner
}

func (w *legacyWorker) NextRetry(job *river.Job[LegacyPaymentArgs]) time.Time {
	return w.nextRetry(job.Attempt)
}

func (w *legacyWorker) Timeout(*river.Job[LegacyPaymentArgs]) time.Duration { return w.timeout() }

func (w *legacyWorker) Work(ctx context.Context, job *river.Job[LegacyPaymentArgs]) error {
	return w.e.Run(ctx, job.Args.OperationID, job.Attempt, job.MaxAttempts)
}

// AddWorkers registers the engine's workers.
func AddWorkers(w *river.Workers, e *Engine) {
	river.AddWorker(w, &RunWorker{runner: runner{e}})
	river.AddWorker(w, &legacyWorker{runner: runner{e}})
}

// AddHandoff registers the engine's runs of jobs handed off by the
// transaction that queued them (internal/handoff), and the rescue of their
// leases.
func AddHandoff(w *handoff.Workers, e *Engine) {
	r := runner{e}
	w.Add(RunArgs{}.Kind(), r.runHandedOff, r.prepare, e.Rescue)
	w.Add(LegacyPaymentArgs{}.Kind(), r.runHandedOff, r.prepare, nil)
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

// rescueBatch bounds the leases one rescue takes; the next takes the rest.
const rescueBatch = 500

// Rescue queues River's job for every operation whose handed-off run's
// lease lapsed before before (its process stopped before the outcome), in
// the transaction that clears the leases: a handoff.Rescuer. The job
// starts again from the operation as stored: its call carries the
// operation's id, so a provider that saw the first one answers the same.
func (e *Engine) Rescue(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := e.Transact(ctx, func(tx Tx) error {
		n = 0
		l, ok := tx.(LeaseTx)
		if !ok {
			return errors.New("operation: the transaction cannot rescue leases")
		}
		lapsed, err := l.LapsedOperations(ctx, before, rescueBatch)
		if err != nil {
			return err
		}
		for _, op := range lapsed {
			if op.State == Done {
				continue
			}
			if err := l.Enqueue(ctx, jobArgs(op), nil); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func operationID(args river.JobArgs) string {
	switch a := args.(type) {
	case RunArgs:
		return a.OperationID
	case LegacyPaymentArgs:
		return a.OperationID
	}
	return ""
}

// prepare reads, in the transaction that queues the operation, what its
// run reads before the call (the operation, its secret, its key's clock,
// the resource), so that the run starts with the call. What Queue holds
// already (the operation and its secret as written, and the key's clock
// when the request's context carries it) is not read again.
func (r runner) prepare(ctx context.Context, tx any, args river.JobArgs, given any) (any, error) {
	if q, ok := given.(*queued); ok && (clock.Known(ctx) || !r.e.KeyClocks) {
		return r.e.loadQueued(ctx, tx, q)
	}
	return r.e.load(ctx, tx, operationID(args), true)
}

// runHandedOff runs an operation as its job's first attempt would, in the
// process whose transaction queued it. The outcome recorded clears the
// operation's lease with it (Record); a run that ends without one (an
// error to retry, a snooze) hands the job back to River at the time River
// would have run it again. If even that fails, the job runs once the
// lease lapses (Rescue).
func (r runner) runHandedOff(ctx context.Context, j handoff.Job) error {
	opID := operationID(j.Args)
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	var err error
	if l, ok := j.Data.(*loaded); ok {
		err = r.e.runLoaded(ctx, l, 1, RunArgs{}.InsertOpts().MaxAttempts, func() {})
	} else {
		err = r.e.Run(ctx, opID, 1, RunArgs{}.InsertOpts().MaxAttempts)
	}
	if err == nil {
		return nil
	}
	transact := func(ctx context.Context, fn func(tx any) error) error {
		return r.e.Transact(ctx, func(tx Tx) error { return fn(tx) })
	}
	unlease := func(ctx context.Context, tx any) (bool, error) {
		l, ok := tx.(LeaseTx)
		if !ok {
			return false, errors.New("operation: the transaction holds no leases")
		}
		return l.ClearOperationLease(ctx, opID)
	}
	if berr := handoff.HandBack(ctx, transact, unlease, j.Args, err, r.nextRetry(1), r.e.Now()); berr != nil {
		r.e.Log.Warn("handing an operation back to River failed: it runs once its lease lapses",
			"operation_id", opID, "error", berr)
	}
	return err
}
