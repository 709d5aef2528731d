package payment

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/clock"
)

// ExpireSessionArgs asks for a hosted session to be expired at its deadline.
type ExpireSessionArgs struct {
	PaymentID string `json:"payment_id"`
}

// Kind names the job (dotted, docs/design/style.md).
func (ExpireSessionArgs) Kind() string { return "payment.expire_session" }

// expireSessionJob expires a session not paid by expires_at
// (docs/design/decisions.md section 4), or snoozes while its key's clock
// has not yet reached the deadline (River schedules by the process's
// clock, which the key's may run ahead of). The change and its event
// commit together.
func (e *Engine) expireSessionJob(args ExpireSessionArgs) clock.Expiry {
	return func(ctx context.Context) (bool, time.Duration, error) { return e.expireSession(ctx, args.PaymentID) }
}

// expireSession expires the session at its key's time (ctx's when it
// carries a key's clock, as in an advance), reporting whether it did, or
// how long to wait for its deadline.
func (e *Engine) expireSession(ctx context.Context, paymentID string) (done bool, wait time.Duration, err error) {
	err = e.Transact(ctx, func(tx EngineTx) error {
		done, wait = false, 0
		p, err := tx.FindPaymentByID(ctx, paymentID)
		if err != nil {
			return err
		}
		ctx, err := clock.OfKey(ctx, tx, p.AccessKeyID)
		if err != nil {
			return err
		}
		now := e.Service.now(ctx)
		// Before the deadline it waits, whatever the status: an attempt
		// declined just before it reopens the session, which this job
		// must then still expire (and release its allowance).
		if p.ExpiresAt != nil && now.Before(*p.ExpiresAt) && !p.Status.Final() {
			wait = p.ExpiresAt.Sub(now) + time.Second
			return nil
		}
		done, err = e.Service.ExpireSession(ctx, tx, paymentID, now)
		return err
	})
	return done, wait, err
}

// ExpireTx is what expiring a session needs.
type ExpireTx interface {
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	WriteTx
}

// ExpireSession moves an unpaid session past its deadline to expired, with
// its event, reporting whether it did (docs/design/decisions.md section 4).
func (s *Service) ExpireSession(ctx context.Context, tx ExpireTx, paymentID string, now time.Time) (bool, error) {
	p, err := tx.FindPaymentByID(ctx, paymentID)
	if err != nil {
		return false, err
	}
	if (p.Status != Created && p.Status != AwaitingPaymentData) || p.ExpiresAt == nil || now.Before(*p.ExpiresAt) {
		return false, nil
	}
	p.Status, p.UpdatedAt = Expired, now.UTC().Truncate(time.Microsecond)
	if err := s.save(ctx, tx, p); err != nil {
		return false, err // ErrConflict: it moved meanwhile; the job runs again
	}
	return true, nil
}
