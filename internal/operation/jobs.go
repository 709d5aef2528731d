package operation

import (
	"context"
	"time"

	"github.com/riverqueue/river"

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
// transaction that queued them (internal/handoff).
func AddHandoff(w *handoff.Workers, e *Engine) {
	r := runner{e}
	w.Add(RunArgs{}.Kind(), r.runHandedOff, r.prepare)
	w.Add(LegacyPaymentArgs{}.Kind(), r.runHandedOff, r.prepare)
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
// the resource), so that the run starts with the call.
func (r runner) prepare(ctx context.Context, tx any, args river.JobArgs) (any, error) {
	return r.e.load(ctx, tx, operationID(args), true)
}

// runHandedOff runs an operation as its job's first attempt would, in the
// process whose transaction queued it. An outcome recorded deletes the
// job with it (Record); a run that ends without one (an error to retry, a
// snooze) hands the job back to River at the time River would have run it
// again. If even that fails, the job runs when its safety net falls due.
func (r runner) runHandedOff(ctx context.Context, j handoff.Job) error {
	opID := operationID(j.Args)
	ctx, cancel := context.WithTimeout(handoff.Running(ctx, j, opID), r.timeout())
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
	if berr := handoff.HandBack(ctx, transact, opID, j.Args, err, r.nextRetry(1), r.e.Now()); berr != nil {
		r.e.Log.Warn("handing an operation back to River failed: it runs when its safety net falls due",
			"operation_id", opID, "error", berr)
	}
	return err
}
