package verification

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
)

// ExpireArgs ends a verification still waiting for its code at its deadline.
type ExpireArgs struct {
	VerificationID string `json:"verification_id"`
}

// Kind names the job (dotted, docs/design/style.md).
func (ExpireArgs) Kind() string { return "card_verification.expire" }

// ExpireJob fails a code_sent verification past its deadline with
// verification_expired (docs/design/decisions.md section 15). Before the
// deadline by its key's clock (River schedules by the process's), or while
// the provider's answer is still awaited (pending, manual_review), it
// snoozes.
func (e *Engine) ExpireJob(args ExpireArgs) clock.Expiry {
	return func(ctx context.Context) (bool, time.Duration, error) { return e.expire(ctx, args.VerificationID) }
}

// expire is the expiry job's work at the verification's key's time (ctx's
// when it carries a key's clock, as in an advance): whether it expired
// the verification, or how long to wait before looking again.
func (e *Engine) expire(ctx context.Context, id string) (done bool, wait time.Duration, err error) {
	err = e.Transact(ctx, func(tx EngineTx) error {
		done, wait = false, 0
		v, err := tx.FindVerificationByID(ctx, id)
		if err != nil {
			return err
		}
		ctx, err := clock.OfKey(ctx, tx, v.AccessKeyID)
		if err != nil {
			return err
		}
		now := e.Service.now(ctx)
		switch {
		case v.Status.Final():
			return nil
		case now.Before(v.ExpiresAt):
			wait = v.ExpiresAt.Sub(now) + time.Second
			return nil
		case v.Status != CodeSent:
			wait = time.Hour
			return nil
		}
		v.Status, v.DeclineCode, v.UpdatedAt = Failed, DeclineExpired, now
		if err := e.Service.save(ctx, tx, v); err != nil {
			return err
		}
		done = true
		// The provider is asked to let the hold go, as an operation of its
		// own: retried, never lost, recorded without a status change.
		return e.Service.queue(ctx, tx, v, OpRelease, nil)
	})
	return done, wait, err
}

// DueStore finds the verifications' expiries that fall due for a key by a
// sandbox clock advance; an empty id when none.
type DueStore interface {
	NextVerificationExpiry(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error)
}

// ClockSource is the verifications' part of a sandbox clock advance
// (docs/design/decisions.md section 14): a verification waiting for its
// code expires at its own time, as its job does it.
func (e *Engine) ClockSource() clock.Source { return clockSource{e} }

type clockSource struct{ e *Engine }

// NextDue implements clock.Source.
func (c clockSource) NextDue(ctx context.Context, keyID string, upTo time.Time) (*clock.Due, error) {
	id, at, err := c.e.Store.NextVerificationExpiry(ctx, keyID, upTo)
	if err != nil || id == "" {
		return nil, err
	}
	return clock.DueAt(at, c.e.ExpireJob(ExpireArgs{VerificationID: id})), nil
}

// AddWorkers registers the verification's jobs.
func AddWorkers(w *river.Workers, e *Engine) {
	river.AddWorker(w, &clock.ExpiryWorker[ExpireArgs]{Expire: e.ExpireJob})
}
