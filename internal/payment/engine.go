package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
)

// ErrConflict: the payment changed since it was read (compare-and-set lost).
var ErrConflict = errors.New("payment changed concurrently")

// EngineStore is what the engine reads outside a transaction.
type EngineStore interface {
	FindOperation(ctx context.Context, id string) (*Operation, error)
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	OperationSecret(ctx context.Context, operationID string) ([]byte, error)
	FindSavedCardForKey(ctx context.Context, keyID, id string) (*SavedCard, error)
}

// EngineTx is what the engine writes, in one transaction per outcome.
type EngineTx interface {
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	FindOperation(ctx context.Context, id string) (*Operation, error)
	UpdatePayment(ctx context.Context, p *Payment) error
	UpdateOperation(ctx context.Context, op *Operation) error
	DeleteOperationSecret(ctx context.Context, operationID string) error
	CreateSavedCard(ctx context.Context, c *SavedCard) error
	CompleteRefund(ctx context.Context, r *Refund) error
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
	// ExpireSession moves an unpaid session whose expires_at is not after
	// now to expired, reporting whether it did.
	ExpireSession(ctx context.Context, paymentID string, now time.Time) (bool, error)
}

// Engine carries operations to providers (decisions 4): the state change
// and its job commit together; each call carries the operation id; a
// transient error is retried with backoff; an unknown outcome is resolved by
// a status inquiry, never by a new charge; an unreadable answer puts the
// payment in manual_review and the engine keeps asking.
type Engine struct {
	Service  *Service
	Store    EngineStore
	Transact func(ctx context.Context, fn func(EngineTx) error) error
	Log      *slog.Logger
	// PollEvery is how often a payment waiting for a 3DS or redirect step
	// asks the provider for the outcome.
	PollEvery time.Duration
	// CrashAt kills the process at a point of an operation, for the crash
	// tests only (PAYGATE_CRASH_AT): "before_call" (after the request's
	// commit, before the provider call) or "after_call" (the provider has
	// answered, nothing recorded yet). Empty in normal operation.
	CrashAt string
	// PublicURL is the base of Paygate's own pages: a hosted payment's 3DS
	// step returns the payer to PUBLIC_URL/checkout/{session}/return.
	PublicURL string
	// OpTimeout bounds one operate job (the provider call and its
	// bookkeeping); it must exceed the provider call timeout. Zero: 1 minute.
	OpTimeout time.Duration
	// Steps, when set, bounds how many payment jobs do their own work at
	// once (reads, opening sealed data, recording the outcome): a job that
	// waits for its provider holds no step. Twenty jobs fetched together
	// would otherwise crowd the requests out of the CPU and, on SQLite, out
	// of the group commits. serve gives it one step per core.
	Steps chan struct{}
}

// step takes one of Steps (waiting for it) and returns its release, which
// may be called more than once.
func (e *Engine) step(ctx context.Context) (release func(), err error) {
	if e.Steps == nil {
		return func() {}, nil
	}
	select {
	case e.Steps <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-e.Steps }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// crash kills the process without any cleanup, as kill -9 does.
func (e *Engine) crash(point string) {
	if e.CrashAt == point {
		e.Log.Warn("crashing on purpose (PAYGATE_CRASH_AT)", "point", point)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns
	}
}

// OperateArgs runs one operation.
type OperateArgs struct {
	OperationID string `json:"operation_id"`
}

// Kind names the job.
func (OperateArgs) Kind() string { return "payment.operate" }

// InsertOpts: money must not be dropped, so many attempts.
func (OperateArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 40} }

// OperateWorker runs payment.operate jobs.
type OperateWorker struct {
	river.WorkerDefaults[OperateArgs]
	Engine *Engine
}

// NextRetry backs off 1 s, 2 s, 4 s … up to 5 minutes.
func (w *OperateWorker) NextRetry(job *river.Job[OperateArgs]) time.Time {
	return w.Engine.Service.Now().Add(backoff(job.Attempt))
}

// Timeout bounds one provider call and its bookkeeping.
func (w *OperateWorker) Timeout(*river.Job[OperateArgs]) time.Duration {
	if w.Engine.OpTimeout > 0 {
		return w.Engine.OpTimeout
	}
	return time.Minute
}

// Work runs the operation.
func (w *OperateWorker) Work(ctx context.Context, job *river.Job[OperateArgs]) error {
	return w.Engine.run(ctx, job.Args.OperationID, job.Attempt, job.MaxAttempts)
}

func backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 9 {
		return 5 * time.Minute
	}
	return time.Duration(1<<(attempt-1)) * time.Second
}

func (e *Engine) run(ctx context.Context, opID string, attempt, maxAttempts int) error {
	release, err := e.step(ctx)
	if err != nil {
		return err
	}
	defer func() { release() }()
	op, err := e.Store.FindOperation(ctx, opID)
	if err != nil {
		return err
	}
	if op.State == OpDone {
		return nil
	}
	p, err := e.Store.FindPaymentByID(ctx, op.PaymentID)
	if err != nil {
		return err
	}
	ch, err := e.Store.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return err
	}
	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return err
	}
	e.crash("before_call")
	release() // the provider's time is not ours
	var res provider.PayResult
	if op.State == OpInquiring {
		res, err = provider.PaymentsOf(prov).Status(ctx, provider.StatusRequest{OperationID: op.ID, Profile: ch.Profile})
		if provider.KindOf(err) == provider.NotFound {
			// The provider never saw the operation: sending it is safe.
			res, err = e.send(ctx, prov, ch, op, p)
		}
	} else {
		res, err = e.send(ctx, prov, ch, op, p)
	}
	var stepErr error
	if release, stepErr = e.step(ctx); stepErr != nil {
		release = func() {}
		if err == nil {
			// Answered, then stopped before recording: the retry sends the
			// same operation id, and the provider answers what it did.
			return stepErr
		}
	}
	e.crash("after_call")
	if err != nil {
		return e.failed(ctx, op, ch, err, attempt, maxAttempts)
	}
	return e.apply(ctx, op.ID, ch, res)
}

// send makes the provider call of an operation.
func (e *Engine) send(ctx context.Context, prov provider.Provider, ch merchant.Channel, op *Operation, p *Payment) (provider.PayResult, error) {
	var sec Secret
	if sealed, err := e.Store.OperationSecret(ctx, op.ID); err == nil {
		if sec, err = e.Service.openSecret(op.ID, sealed); err != nil {
			return provider.PayResult{}, fmt.Errorf("open operation data: %w", err)
		}
	}
	switch op.Kind {
	case OpPay:
		req := provider.PayRequest{
			OperationID: op.ID, Authorize: p.OperationMode == ModeAuthorize, AmountMinor: p.AmountMinor,
			Currency: p.Currency, OrderID: p.OrderID, Description: p.Description, Customer: sec.Customer,
			Locale: p.Locale, ReturnURL: e.returnURL(p), SaveCard: p.SavePaymentMethod, Profile: ch.Profile,
			Instrument: provider.Instrument{Card: sec.Card, Wallet: sec.Wallet, Phone: sec.Phone},
			Browser:    browser(p),
		}
		if p.SavedCardID != "" && sec.Card == nil {
			c, err := e.Store.FindSavedCardForKey(ctx, p.AccessKeyID, p.SavedCardID)
			if err != nil {
				return provider.PayResult{}, err
			}
			tok, err := e.Service.Sealer.Open(c.TokenSealed, SavedCardAAD(c.ID))
			if err != nil {
				return provider.PayResult{}, err
			}
			req.Instrument.SavedToken, req.SaveCard = string(tok), false
		}
		return provider.PaymentsOf(prov).Pay(ctx, req)
	case OpConfirm:
		return provider.PaymentsOf(prov).Confirm(ctx, provider.ConfirmRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, Code: sec.Code, Profile: ch.Profile})
	case OpCapture:
		return provider.PaymentsOf(prov).Capture(ctx, provider.CaptureRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, AmountMinor: op.AmountMinor, Profile: ch.Profile})
	case OpCancel:
		return provider.PaymentsOf(prov).Cancel(ctx, provider.CancelRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, Profile: ch.Profile})
	case OpRefund:
		return provider.PaymentsOf(prov).Refund(ctx, provider.RefundRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, AmountMinor: op.AmountMinor, Profile: ch.Profile})
	}
	return provider.PayResult{}, provider.Errorf(provider.Invalid, "unknown operation kind %q", op.Kind)
}

// failed decides what a provider error means for the operation.
func (e *Engine) failed(ctx context.Context, op *Operation, ch merchant.Channel, err error, attempt, maxAttempts int) error {
	kind := provider.KindOf(err)
	e.Log.Warn("provider call failed", "operation_id", op.ID, "kind", op.Kind, "error_kind", string(kind), "attempt", attempt)
	switch kind {
	case provider.Transient:
		if attempt < maxAttempts {
			return err // River retries with backoff; resending this operation id is safe
		}
		return e.apply(ctx, op.ID, ch, provider.PayResult{Status: provider.StatusFailed, DeclineCode: "provider_unavailable"})
	case provider.RateLimited:
		var pe *provider.Error
		if errors.As(err, &pe) && pe.RetryAfter > 0 {
			return river.JobSnooze(pe.RetryAfter)
		}
		return river.JobSnooze(backoff(attempt))
	case provider.OutcomeUnknown, provider.Unreadable:
		// From now on only ask; an unreadable answer is also shown as manual_review.
		if err := e.Transact(ctx, func(tx EngineTx) error {
			cur, err := tx.FindOperation(ctx, op.ID)
			if err != nil || cur.State == OpDone {
				return err
			}
			cur.State, cur.Result, cur.UpdatedAt = OpInquiring, string(kind), e.Service.Now().UTC()
			if err := tx.UpdateOperation(ctx, cur); err != nil {
				return err
			}
			if kind != provider.Unreadable {
				return nil
			}
			p, err := tx.FindPaymentByID(ctx, op.PaymentID)
			if err != nil {
				return err
			}
			if !CanMove(p.Status, ManualReview) {
				return nil
			}
			p.Status, p.UpdatedAt = ManualReview, e.Service.Now().UTC()
			return tx.UpdatePayment(ctx, p)
		}); err != nil {
			return err
		}
		// Snoozing does not use up attempts: the engine keeps asking.
		return river.JobSnooze(backoff(attempt))
	}
	// Invalid, Unsupported, NotFound on a send: retrying will not help.
	return e.apply(ctx, op.ID, ch, provider.PayResult{Status: provider.StatusFailed, DeclineCode: "processing_error"})
}

func browser(p *Payment) *provider.Browser {
	if p.PayerIP == "" && len(p.Device) == 0 {
		return nil
	}
	return &provider.Browser{IP: p.PayerIP, Snapshot: p.Device}
}
