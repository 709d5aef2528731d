package clock

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/fault"
)

// Expiry is a resource's deadline work at its key's time (ctx's when it
// carries a key's clock, as in an advance): whether it changed the
// resource, or how long to wait before its deadline by the key's clock.
// Payments' sessions and holds, verifications' codes and payouts' 3DS
// steps end this way (docs/design/decisions.md sections 14 and 15).
type Expiry func(ctx context.Context) (done bool, wait time.Duration, err error)

// ExpiryWorker runs the deadline jobs of args A: River schedules them by
// the process's clock, so a job that comes before the key's deadline
// snoozes until it; a lost compare-and-set (the resource moved meanwhile,
// by a request or another job) is an error, and River runs the job again.
type ExpiryWorker[A river.JobArgs] struct {
	river.WorkerDefaults[A]
	// Expire is the expiry of the resource the job names.
	Expire func(args A) Expiry
}

// Work runs the expiry, or snoozes until the key's deadline.
func (w *ExpiryWorker[A]) Work(ctx context.Context, job *river.Job[A]) error {
	_, wait, err := w.Expire(job.Args)(ctx)
	if err == nil && wait > 0 {
		return river.JobSnooze(wait)
	}
	return err
}

// DueAt is an expiry that a clock advance runs at at (a Source's answer).
func DueAt(at time.Time, expire Expiry) *Due {
	return &Due{At: at, Run: func(ctx context.Context) (string, error) {
		done, _, err := expire(ctx)
		return Expired(done, err)
	}}
}

// Expired is what a Due's Run answers after an expiry: RanExpirations
// when it changed something, "" when by then there was nothing to do. A
// lost compare-and-set (the resource moved meanwhile, by its job or a
// request: fault.ErrConflict) is nothing done, and the advance looks
// again.
func Expired(changed bool, err error) (string, error) {
	switch {
	case errors.Is(err, fault.ErrConflict):
		return "", nil
	case err != nil:
		return "", err
	case changed:
		return RanExpirations, nil
	}
	return "", nil
}
