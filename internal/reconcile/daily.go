package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
)

// Lag is how long after a day closes it is reconciled: the two hours of
// the edge rule, and an hour for the acquirers' records to settle.
const Lag = Edge + time.Hour

// DailyArgs is the hourly job that reconciles each account's last closed
// day once (docs/design/decisions.md section 18).
type DailyArgs struct{}

// Kind names the job.
func (DailyArgs) Kind() string { return "reconcile.daily" }

// Accounts lists the accounts to reconcile: the enabled ones.
type Accounts interface {
	ReconcilableAccounts(ctx context.Context) ([]string, error)
}

// DoneStore says whether a day has a finished run.
type DoneStore interface {
	ReconciliationDone(ctx context.Context, providerName string, day time.Time) (bool, error)
}

// DailyWorker runs DailyArgs: for every enabled account whose acquirer
// offers records, the latest day closed Lag ago, unless it has a finished
// run; two workers never run one day at once (Service.Run's claim).
type DailyWorker struct {
	river.WorkerDefaults[DailyArgs]
	Service  *Service
	Accounts Accounts
	Done     DoneStore
	Log      *slog.Logger
}

// Timeout: a day of a million payments takes minutes (docs/benchmarks.md),
// more than the engine's jobs may; less than StaleAfter, so that the run
// ends before another may take its day over.
func (w *DailyWorker) Timeout(*river.Job[DailyArgs]) time.Duration {
	return StaleAfter - 15*time.Minute
}

// Work runs Due and logs what failed: the next hour's job tries again, so
// an acquirer that does not answer is not asked again at once.
func (w *DailyWorker) Work(ctx context.Context, _ *river.Job[DailyArgs]) error {
	if err := w.Due(ctx); err != nil && w.Log != nil {
		w.Log.Warn("a daily reconciliation failed; the next hour's tries again", "error", err)
	}
	return nil
}

// Due reconciles what is due; an account that cannot be reconciled (no
// records) or is being reconciled elsewhere is left.
func (w *DailyWorker) Due(ctx context.Context) error {
	day := Day(w.Service.now().Add(-24*time.Hour - Lag))
	names, err := w.Accounts.ReconcilableAccounts(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		done, err := w.Done.ReconciliationDone(ctx, name, day)
		if err != nil || done {
			errs = append(errs, err)
			continue
		}
		if _, err := w.Service.Run(ctx, name, day); err != nil && !errors.Is(err, ErrNoRecords) && !errors.Is(err, ErrRunning) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
