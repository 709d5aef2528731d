package operation

import (
	"context"
	"time"

	"github.com/riverqueue/river"
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
