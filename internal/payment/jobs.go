package payment

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// ExpireSessionArgs asks for a hosted session to be expired at its deadline.
type ExpireSessionArgs struct {
	PaymentID string `json:"payment_id"`
}

// Kind names the job (dotted, style.md).
func (ExpireSessionArgs) Kind() string { return "payment.expire_session" }

// ExpireSessionWorker expires sessions not paid by expires_at (decisions 4).
type ExpireSessionWorker struct {
	river.WorkerDefaults[ExpireSessionArgs]
	Engine *Engine
}

// Work expires the session, or snoozes when Paygate's clock has not yet
// reached the deadline (River's clock and ours can differ slightly). The
// change and its event commit together.
func (w *ExpireSessionWorker) Work(ctx context.Context, job *river.Job[ExpireSessionArgs]) error {
	e := w.Engine
	now := e.Service.Now().UTC()
	var wait time.Duration
	err := e.Transact(ctx, func(tx EngineTx) error {
		p, err := tx.FindPaymentByID(ctx, job.Args.PaymentID)
		if err != nil {
			return err
		}
		if p.ExpiresAt != nil && now.Before(*p.ExpiresAt) && (p.Status == Created || p.Status == AwaitingPaymentData) {
			wait = p.ExpiresAt.Sub(now) + time.Second
			return nil
		}
		_, err = tx.ExpireSession(ctx, job.Args.PaymentID, now)
		return err
	})
	if err == nil && wait > 0 {
		return river.JobSnooze(wait)
	}
	return err
}
