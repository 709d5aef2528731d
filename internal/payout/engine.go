package payout

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/savedcard"
)

// EngineStore is what the payout's calls read outside a transaction.
type EngineStore interface {
	FindPayoutByID(ctx context.Context, id string) (*Payout, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	// FindSavedCardForCharge finds the card an accepted payout goes to,
	// deleted since or not: the payout was accepted with it
	// (docs/api.md, "Stored cards").
	FindSavedCardForCharge(ctx context.Context, keyID, id string) (*savedcard.Card, error)
	// The expiry job decides at the clock of the payout's key, and a
	// sandbox clock advance runs what falls due (docs/design/decisions.md
	// section 14).
	clock.Reader
	DueStore
}

// EngineTx is what recording a payout's outcome writes, in the operation
// engine's transaction, and what the payout's jobs write.
type EngineTx interface {
	operation.Tx
	FindPayoutByID(ctx context.Context, id string) (*Payout, error)
	WriteTx
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Operations is the operation engine, as the payout's jobs use it.
type Operations interface {
	// Record records an outcome for an operation (operation.Engine.Record).
	Record(ctx context.Context, operationID string, out operation.Outcome) error
}

// Engine is the payout side of the operation engine: it makes a payout's
// provider calls and records their outcomes (Handler), and runs the
// payout's own job, the end of a 3DS step left waiting.
type Engine struct {
	Service  *Service
	Store    EngineStore
	Transact func(ctx context.Context, fn func(EngineTx) error) error
	Ops      Operations
	Log      *slog.Logger
}

// NewEngine builds the payout side of the operation engine.
func NewEngine(svc *Service, st EngineStore, transact func(ctx context.Context, fn func(EngineTx) error) error,
	ops Operations, log *slog.Logger) *Engine {
	return &Engine{Service: svc, Store: st, Transact: transact, Ops: ops, Log: log}
}

// Handler is what the operation engine runs payouts' operations with
// (registered as ops.Handle(payout.Resource, ...)).
func NewHandler[R LoadReader, T EngineTx](e *Engine) operation.Handler[R, T] { return handler[R, T]{e} }

type handler[R LoadReader, T EngineTx] struct{ e *Engine }

// Outcome is a provider's answer to a payout operation.
type Outcome struct{ provider.PayoutResult }

// Pending implements operation.Outcome.
func (o Outcome) Pending() bool { return o.Status == provider.StatusPending }

// Result implements operation.Outcome.
func (o Outcome) Result() string { return string(o.Status) }

// call is one payout operation ready for its provider.
type call struct {
	e    *Engine
	op   *operation.Operation
	p    *Payout
	ch   merchant.Channel
	prov provider.Payouts
}

// Load implements operation.Handler: the payout, its channel and provider.
func (h handler[R, T]) Load(ctx context.Context, r R, op *operation.Operation) (operation.Call, error) {
	p, err := r.FindPayoutByID(ctx, op.ResourceID)
	if err != nil {
		return nil, err
	}
	ch, err := r.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return nil, err
	}
	prov, err := h.e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return nil, err
	}
	return &call{e: h.e, op: op, p: p, ch: ch, prov: provider.PayoutsOf(prov)}, nil
}

// LoadReader is what a payout operation's run reads before its call
// (the store and its transactions offer it).
type LoadReader interface {
	operation.Reader
	FindPayoutByID(ctx context.Context, id string) (*Payout, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
}

// ResourceKind implements operation.Call: payouts have no kinds.
func (c *call) ResourceKind() string { return "" }

// Inquire implements operation.Call: the provider finds the payout by the
// operation that acted on it; NotFound when it never saw that operation.
func (c *call) Inquire(ctx context.Context) (operation.Outcome, error) {
	res, err := c.prov.PayoutStatus(ctx, provider.StatusRequest{OperationID: c.op.ID, Profile: c.ch.Profile})
	return Outcome{res}, err
}

// Send implements operation.Call.
func (c *call) Send(ctx context.Context, secret []byte) (operation.Outcome, error) {
	var sec Secret
	if secret != nil {
		if err := sec.decode(secret); err != nil {
			return nil, fmt.Errorf("open payout operation data: %w", err)
		}
	}
	op, p, ch := c.op, c.p, c.ch
	switch op.Kind {
	case OpCreate:
		req := provider.PayoutRequest{OperationID: op.ID, OrderID: p.OrderID, AmountMinor: p.AmountMinor,
			Currency: p.Currency, Account: p.Account, Description: p.Description, Customer: sec.Customer.Provider(),
			ReturnURL: p.ReturnURL, Profile: ch.Profile,
			Instrument: provider.Instrument{Card: sec.Card.Provider(), Wallet: sec.Wallet.Provider()}}
		if p.PayerIP != "" || len(p.Device) > 0 {
			req.Browser = &provider.Browser{IP: p.PayerIP, Snapshot: p.Device}
		}
		if p.SavedCardID != "" {
			sc, err := c.e.Store.FindSavedCardForCharge(ctx, p.AccessKeyID, p.SavedCardID)
			if err != nil {
				return nil, err
			}
			tok, err := savedcard.Token(c.e.Service.Sealer, sc)
			if err != nil {
				return nil, err
			}
			req.Instrument.SavedToken = tok
		}
		res, err := c.prov.CreatePayout(ctx, req)
		return Outcome{res}, err
	case OpConfirm:
		res, err := c.prov.ConfirmPayout(ctx, provider.ConfirmRequest{OperationID: op.ID, ProviderID: p.ProviderID,
			Code: sec.Code, Profile: ch.Profile})
		return Outcome{res}, err
	}
	return nil, provider.Errorf(provider.Invalid, "unknown payout operation kind %q", op.Kind)
}

// Failed implements operation.Handler.
func (handler[R, T]) Failed(_ *operation.Operation, code string) operation.Outcome {
	return Outcome{provider.PayoutResult{Status: provider.StatusFailed, DeclineCode: code}}
}

// Reroute implements operation.Handler: a payout stays with its acquirer.
func (handler[R, T]) Reroute(context.Context, T, *operation.Operation, error) (bool, error) {
	return false, nil
}

// AcceptsLate implements operation.Handler: the end of a 3DS step, asked
// for by the expiry job, is recorded on the operation that started it.
func (handler[R, T]) AcceptsLate(*operation.Operation) bool { return true }

// Unreadable implements operation.Handler: the payout shows manual_review
// while the engine keeps asking, never resending.
func (h handler[R, T]) Unreadable(ctx context.Context, tx T, op *operation.Operation) error {
	p, err := tx.FindPayoutByID(ctx, op.ResourceID)
	if err != nil || !CanMove(p.Status, ManualReview) {
		return err
	}
	p.Status, p.UpdatedAt = ManualReview, h.e.Service.now(ctx)
	return h.e.Service.save(ctx, tx, p)
}

// Apply implements operation.Handler: the outcome becomes the payout's
// status (if the life cycle allows it), in the engine's transaction.
func (h handler[R, T]) Apply(ctx context.Context, tx T, op *operation.Operation, o operation.Outcome) error {
	out, ok := o.(Outcome)
	if !ok {
		return fmt.Errorf("payout: an outcome of type %T", o)
	}
	p, err := tx.FindPayoutByID(ctx, op.ResourceID)
	if err != nil {
		return err
	}
	return h.e.apply(ctx, tx, op.ID, p, out.PayoutResult)
}

// apply moves p after a provider's answer about it.
func (e *Engine) apply(ctx context.Context, tx EngineTx, opID string, p *Payout, res provider.PayoutResult) error {
	now := e.Service.now(ctx)
	var next Status
	switch res.Status {
	case provider.StatusSucceeded:
		next = Succeeded
	case provider.StatusDeclined:
		next = Declined
	case provider.StatusFailed:
		next = Failed
	case provider.StatusRequiresAction:
		next = RequiresAction
		if res.NextAction == nil {
			next, res.DeclineCode = Failed, "processing_error"
		}
	default:
		return nil // nothing the payout's life cycle knows
	}
	if !CanMove(p.Status, next) {
		if next != p.Status {
			e.Log.Info("outcome not applied: the payout moved on", "payout_id", p.ID, "from", string(p.Status), "to", string(next))
		}
		return nil
	}
	if res.ProviderID != "" {
		p.ProviderID = res.ProviderID
	}
	if res.BankReference != nil {
		p.BankReference = &BankReference{PaymentID: res.BankReference.PaymentID, Name: res.BankReference.Name}
	}
	p.Status, p.UpdatedAt = next, now
	p.NextActionType, p.NextActionURL = "", ""
	switch next {
	case Declined, Failed:
		p.DeclineCode = res.DeclineCode
		if p.DeclineCode == "" {
			p.DeclineCode = "processing_error"
		}
		p.ClientDescription = declineText(p.DeclineCode)
	case RequiresAction:
		p.NextActionType, p.NextActionURL = res.NextAction.Type, res.NextAction.URL
		if p.ActionExpiresAt == nil {
			at := now.Add(ActionLifetime)
			p.ActionExpiresAt = &at
		}
	}
	if err := e.Service.save(ctx, tx, p); err != nil {
		return err
	}
	if next == RequiresAction {
		args, opts := expireJob(ctx, p, opID)
		return tx.Enqueue(ctx, args, opts)
	}
	return nil
}
