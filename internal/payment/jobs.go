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

// ExpiryStore moves an unpaid session to expired.
type ExpiryStore interface {
	// ExpireSession moves the payment to expired if it is still created or
	// awaiting payment data and its expires_at is not after now. It reports
	// whether the payment changed.
	ExpireSession(ctx context.Context, paymentID string, now time.Time) (bool, error)
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
}

// ExpireSessionWorker expires sessions not paid by expires_at (decisions 4).
type ExpireSessionWorker struct {
	river.WorkerDefaults[ExpireSessionArgs]
	Store ExpiryStore
	Now   func() time.Time
}

// Work expires the session, or snoozes when Paygate's clock has not yet
// reached the deadline (River's clock and ours can differ slightly).
func (w *ExpireSessionWorker) Work(ctx context.Context, job *river.Job[ExpireSessionArgs]) error {
	now := w.Now().UTC()
	p, err := w.Store.FindPaymentByID(ctx, job.Args.PaymentID)
	if err != nil {
		return err
	}
	if p.ExpiresAt != nil && now.Before(*p.ExpiresAt) && (p.Status == Created || p.Status == AwaitingPaymentData) {
		return river.JobSnooze(p.ExpiresAt.Sub(now) + time.Second)
	}
	_, err = w.Store.ExpireSession(ctx, job.Args.PaymentID, now)
	return err
}
