package payment

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
)

// PollArgs asks the provider for the outcome of a payment waiting for a 3DS
// or redirect step, until it has one, and abandons the step after
// ActionLifetime; a one-time code's step (otp) is not asked about, only
// abandoned.
type PollArgs struct {
	PaymentID   string `json:"payment_id"`
	OperationID string `json:"operation_id"`
}

// Kind names the job.
func (PollArgs) Kind() string { return "payment.poll" }

// ActionLifetime is how long a payer has for a 3DS or redirect step before
// the payment expires.
const ActionLifetime = time.Hour

// PollWorker runs payment.poll jobs.
type PollWorker struct {
	river.WorkerDefaults[PollArgs]
	Engine *Engine
}

// Work asks once; while the payer has not finished, it snoozes.
func (w *PollWorker) Work(ctx context.Context, job *river.Job[PollArgs]) error {
	e := w.Engine
	p, err := e.Store.FindPaymentByID(ctx, job.Args.PaymentID)
	if err != nil {
		return err
	}
	done, waiting, err := e.pollOnce(ctx, p, job.Args.OperationID)
	if done || err != nil {
		return err
	}
	// The payer's time runs on the key's clock (docs/design/decisions.md
	// section 14); no transaction is open here. An acquirer finishing the
	// payment (pending) is left to finish, however late.
	if ctx, err = clock.OfKey(ctx, e.Store, p.AccessKeyID); err != nil {
		return err
	}
	if waiting && e.Service.now(ctx).Sub(p.UpdatedAt) > ActionLifetime {
		return e.abandon(ctx, p.ID)
	}
	return river.JobSnooze(e.PollEvery)
}

// pollOnce asks the provider once for the outcome of the payer's step
// that operation opID started, and records it if the step has ended.
// done: nothing is left to wait for. waiting: the step may still be
// waiting for its payer (the acquirer says so, could not be asked, or is
// not asked: a one-time code only the merchant has), so it may be
// abandoned; not waiting and not done, the acquirer is finishing it.
func (e *Engine) pollOnce(ctx context.Context, p *Payment, opID string) (done, waiting bool, err error) {
	if p.Status != RequiresAction {
		return true, false, nil // confirmed or finished
	}
	if p.NextActionType == "otp" {
		return false, true, nil
	}
	ch, err := e.Store.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return false, false, err
	}
	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return false, false, err
	}
	res, err := provider.PaymentsOf(prov).Status(ctx, provider.StatusRequest{OperationID: opID, ProviderID: p.ProviderPaymentID, Profile: ch.Profile})
	release, stepErr := e.Ops.Step(ctx)
	if stepErr != nil {
		return false, false, stepErr
	}
	defer release()
	if err == nil && res.Status != provider.StatusRequiresAction && res.Status != provider.StatusPending {
		// Applied to the operation that started the step, although it is done.
		return true, false, e.Ops.Record(ctx, opID, Outcome{PayResult: res, Provider: ch.Provider})
	}
	return false, err != nil || res.Status == provider.StatusRequiresAction, nil
}

// Notified applies what an acquirer's verified notification concerns
// (docs/design/decisions.md section 16): the payment it names is read
// back from the acquirer, as a poll would, so the notification itself
// moves nothing. A payer's step (3DS, a hosted page) is asked about; each
// of the payment's operations waiting for an outcome is asked about now
// instead of at its next poll, and a final outcome recorded; nothing is
// ever sent from here, and an error leaves the operation to its own job. A payment Paygate does not know is not an
// error (the acquirer's account may serve others).
func (e *Engine) Notified(ctx context.Context, providerName string, n provider.Notice) error {
	var (
		p       *Payment
		err     error
		started = n.OperationID
	)
	if n.OperationID != "" {
		var op *operation.Operation
		if op, err = e.Store.FindOperation(ctx, n.OperationID); err == nil && op.Resource == Resource {
			p, err = e.Store.FindPaymentByID(ctx, op.ResourceID)
		}
	}
	if p == nil && n.ProviderID != "" {
		p, err = e.Store.FindPaymentByProviderID(ctx, providerName, n.ProviderID)
		started = ""
	}
	if p == nil {
		if err != nil && !errors.Is(err, e.Service.ErrNotFound) {
			return err
		}
		return nil
	}
	ch, err := e.Store.FindChannelByID(ctx, p.ChannelID)
	if err != nil || ch.Provider != providerName {
		return err // another acquirer's payment: nothing to read
	}
	if started != "" {
		if _, _, err := e.pollOnce(ctx, p, started); err != nil {
			return err
		}
	}
	ops, err := e.Store.OpenOperations(ctx, p.ID)
	if err != nil {
		return err
	}
	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if op.State != OpInquiring {
			continue // not sent yet: its own job sends it
		}
		// Only ask, and record only an outcome that is final: never send,
		// never give up here. The operation's own job stays in charge of
		// anything else.
		res, err := provider.PaymentsOf(prov).Status(ctx, provider.StatusRequest{OperationID: op.ID,
			ProviderID: statusProviderID(&op, p), Profile: ch.Profile})
		if err != nil || res.Status == provider.StatusPending || res.Status == provider.StatusRequiresAction {
			continue
		}
		var snooze *river.JobSnoozeError
		if err := e.Ops.Record(ctx, op.ID, Outcome{PayResult: res, Provider: ch.Provider}); err != nil && !errors.As(err, &snooze) {
			return err
		}
	}
	return nil
}

// ExpireAuthorizationArgs expires a hold not captured in time
// (docs/design/decisions.md section 4).
type ExpireAuthorizationArgs struct {
	PaymentID string `json:"payment_id"`
}

// Kind names the job.
func (ExpireAuthorizationArgs) Kind() string { return "payment.expire_authorization" }

// expireAuthorizationJob moves a still-authorized payment past its
// authorization_expires_at to expired, or snoozes while its key's clock
// has not reached it.
func (e *Engine) expireAuthorizationJob(args ExpireAuthorizationArgs) clock.Expiry {
	return func(ctx context.Context) (bool, time.Duration, error) {
		return e.expireAuthorization(ctx, args.PaymentID)
	}
}

// expireAuthorization expires a hold at its key's time (ctx's when it
// carries a key's clock), reporting whether it did, or how long to wait.
func (e *Engine) expireAuthorization(ctx context.Context, paymentID string) (done bool, wait time.Duration, err error) {
	err = e.Transact(ctx, func(tx EngineTx) error {
		done, wait = false, 0
		p, err := tx.FindPaymentByID(ctx, paymentID)
		if err != nil {
			return err
		}
		if p.Status != Authorized || p.AuthorizationExpiresAt == nil {
			return nil
		}
		ctx, err := clock.OfKey(ctx, tx, p.AccessKeyID)
		if err != nil {
			return err
		}
		now := e.Service.now(ctx)
		if now.Before(*p.AuthorizationExpiresAt) {
			wait = p.AuthorizationExpiresAt.Sub(now)
			return nil
		}
		p.Status, p.UpdatedAt = Expired, now
		done = true
		return e.Service.save(ctx, tx, p)
	})
	return done, wait, err
}

// MaxAbandons is how many abandon operations a payment's expired step
// gets (each retried for hours while its acquirer cannot be reached)
// before the payment expires without the acquirer's word.
const MaxAbandons = 3

// abandon ends a payer's step that outlived ActionLifetime
// (docs/payments.md, "The payer's step expires"). The payment expires only
// once its acquirer has canceled it: an abandon operation asks for that,
// and a payer who finished first makes the payment succeed (or fail) as
// if in time. The payment expires here at once when the step is the
// provider's own page, which closes before ActionLifetime is over
// (redirect.go); when the channel's acquirer cannot cancel; or after
// MaxAbandons abandons: then the log says that its acquirer may still
// take it.
func (e *Engine) abandon(ctx context.Context, paymentID string) error {
	return e.Transact(ctx, func(tx EngineTx) error {
		first, err := tx.FindPaymentByID(ctx, paymentID)
		if err != nil || first.Status != RequiresAction {
			return err
		}
		// One abandon at a time, across processes: the payment's lock
		// makes "none open, then queue one" one step.
		if _, err := tx.LockPaymentForKey(ctx, first.AccessKeyID, first.ID); err != nil {
			return err
		}
		p, ch, err := tx.FindPaymentWithChannel(ctx, paymentID)
		if err != nil || p.Status != RequiresAction {
			return err
		}
		ops, err := tx.OpenOperations(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, op := range ops {
			if op.Kind == OpAbandon {
				return nil // one at a time; its outcome polls again if need be
			}
		}
		ctx, err := clock.OfKey(ctx, tx, p.AccessKeyID)
		if err != nil {
			return err
		}
		now := e.Service.now(ctx)
		tried, err := tx.CountOperations(ctx, p.ID, OpAbandon)
		if err != nil {
			return err
		}
		if p.NextActionType == RedirectResult || !e.canCancel(ch) || tried >= MaxAbandons {
			if p.NextActionType != RedirectResult {
				e.Log.Warn("a payer's step expired, and its acquirer did not cancel the payment: it expires here, and its acquirer may still take it",
					"payment_id", p.ID, "channel", ch.Alias, "abandons", tried)
			}
			if e.Observe != nil {
				e.Observe.Attempt(ch.Alias, ch.Provider, string(Expired))
			}
			p.Status, p.UpdatedAt = Expired, now
			p.NextActionType, p.NextActionURL = "", ""
			return e.Service.save(ctx, tx, p)
		}
		op := &Operation{ID: e.Service.NewID(), Resource: Resource, ResourceID: p.ID, Kind: OpAbandon, CreatedAt: now, UpdatedAt: now}
		return operation.Queue(ctx, tx, e.Service.Sealer, op, (*Secret)(nil))
	})
}

// canCancel reports whether the channel's acquirer profile can cancel a
// payment.
func (e *Engine) canCancel(ch merchant.Channel) bool {
	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return false
	}
	caps, err := prov.Capabilities(ch.Profile)
	return err == nil && caps.Has(provider.Cancel)
}

// AddWorkers registers every payment job's worker on the engine.
func AddWorkers(w *river.Workers, e *Engine) {
	river.AddWorker(w, &clock.ExpiryWorker[ExpireSessionArgs]{Expire: e.expireSessionJob})
	river.AddWorker(w, &PollWorker{Engine: e})
	river.AddWorker(w, &clock.ExpiryWorker[ExpireAuthorizationArgs]{Expire: e.expireAuthorizationJob})
}
