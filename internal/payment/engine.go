package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/savedcard"
)

// EngineStore is what the payment's jobs read outside a transaction.
type EngineStore interface {
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	// FindSavedCardForCharge reads the card a payment was accepted with,
	// even if deleted since (docs/design/decisions.md section 13).
	FindSavedCardForCharge(ctx context.Context, keyID, id string) (*savedcard.Card, error)
	// The jobs decide at the clock of the payment's key, and a sandbox
	// clock advance runs what falls due (docs/design/decisions.md
	// section 14).
	clock.Reader
	DueStore
	// An acquirer's notification names a payment by the acquirer's id or
	// by an operation (Notified).
	FindPaymentByProviderID(ctx context.Context, providerName, providerPaymentID string) (*Payment, error)
	FindOperation(ctx context.Context, id string) (*operation.Operation, error)
	OpenOperations(ctx context.Context, paymentID string) ([]Operation, error)
}

// EngineTx is what recording a payment's outcome writes, in the operation
// engine's transaction, and what the payment's jobs write.
type EngineTx interface {
	operation.Tx
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	// The payment with its channel: an attempt's end is counted by its
	// channel (Observer).
	FindPaymentWithChannel(ctx context.Context, id string) (*Payment, merchant.Channel, error)
	// A payer's step that expired is abandoned once (abandon), and polled
	// again from its pay operation (pollAgain).
	OpenOperations(ctx context.Context, paymentID string) ([]Operation, error)
	CountOperations(ctx context.Context, paymentID, kind string) (int, error)
	LockPaymentForKey(ctx context.Context, keyID, id string) (*Payment, error)
	LatestOperation(ctx context.Context, paymentID, kind string) (*Operation, error)
	WriteTx
	CreateSavedCard(ctx context.Context, c *savedcard.Card) error
	CompleteRefund(ctx context.Context, r *Refund) error
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
	clock.Reader
	RerouteTx
}

// Resource names payments among the resources whose operations the
// operation engine runs (operation.Operation.Resource).
const Resource = "payment"

// Operations is the operation engine, as the payment jobs use it.
type Operations interface {
	// Record records an outcome for an operation (operation.Engine.Record).
	Record(ctx context.Context, operationID string, out operation.Outcome) error
	// Step takes one of the engine's steps (operation.Engine.Step).
	Step(ctx context.Context) (release func(), err error)
	// Run runs one attempt of an operation (operation.Engine.Run): asks
	// the provider of one whose outcome is awaited.
	Run(ctx context.Context, opID string, attempt, maxAttempts int) error
}

// Engine is the payment side of the operation engine (internal/operation
// runs the calls): it makes a payment's provider calls and records their
// outcomes on the payment (Handler), and runs the payment's own jobs: the
// poll of a 3DS or redirect step, and the expiries.
type Engine struct {
	Service  *Service
	Store    EngineStore
	Transact func(ctx context.Context, fn func(EngineTx) error) error
	Log      *slog.Logger
	// Ops records outcomes and bounds the work of the payment's jobs.
	Ops Operations
	// PollEvery is how often a payment waiting for a 3DS or redirect step
	// asks the provider for the outcome.
	PollEvery time.Duration
	// MaxAttempts bounds a payment's attempts, one channel each
	// (docs/design/decisions.md section 17); 0: DefaultMaxAttempts.
	MaxAttempts int
	// Observe hears attempts' ends and reroutes; nil: nobody.
	Observe Observer
	// PublicURL is the base of Paygate's own pages: a hosted payment's 3DS
	// step returns the payer to PUBLIC_URL/checkout/{session}/return.
	PublicURL string
}

// NewEngine builds the payment side of the operation engine; each
// dependency is an argument (docs/architecture.md, "The composition
// root"). publicURL is the base of Paygate's own pages.
func NewEngine(svc *Service, st EngineStore, transact func(ctx context.Context, fn func(EngineTx) error) error,
	ops Operations, log *slog.Logger, pollEvery time.Duration, publicURL string, maxAttempts int, obs Observer) *Engine {
	return &Engine{Service: svc, Store: st, Transact: transact, Ops: ops, Log: log, PollEvery: pollEvery, PublicURL: publicURL,
		MaxAttempts: maxAttempts, Observe: obs}
}

// Observer hears how attempts end and when a payment moves to its next
// channel, by the channel's alias and its provider account (the metrics
// of docs/design/decisions.md section 17).
type Observer interface {
	Attempt(channel, provider, outcome string)
	Reroute(channel, provider, reason string)
}

// Handler is what the operation engine runs payments' operations with.
func NewHandler[R LoadReader, T EngineTx](e *Engine) operation.Handler[R, T] { return handler[R, T]{e} }

// handler implements operation.Handler for payments.
type handler[R LoadReader, T EngineTx] struct{ e *Engine }

// Outcome is a provider's answer to a payment operation.
type Outcome struct {
	provider.PayResult
	// Provider is the provider that answered: a saved card records it.
	Provider string
	// GaveUp: the engine gave the operation up, or the acquirer refused
	// it, without an answer that says what became of the payment
	// (handler.Failed). An abandon that gave up leaves the payment to its
	// poll.
	GaveUp bool
}

// Pending implements operation.Outcome.
func (o Outcome) Pending() bool { return o.Status == provider.StatusPending }

// Result implements operation.Outcome.
func (o Outcome) Result() string { return string(o.Status) }

// call is one payment operation ready for its provider.
type call struct {
	e    *Engine
	op   *Operation
	p    *Payment
	ch   merchant.Channel
	prov provider.Payments
}

// Load implements operation.Handler: the payment with its channel (one
// round trip), and its provider.
func (h handler[R, T]) Load(ctx context.Context, r R, op *Operation) (operation.Call, error) {
	p, ch, err := r.FindPaymentWithChannel(ctx, op.ResourceID)
	if err != nil {
		return nil, err
	}
	prov, err := h.e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return nil, err
	}
	return &call{e: h.e, op: op, p: p, ch: ch, prov: provider.PaymentsOf(prov)}, nil
}

// LoadReader is what a payment operation's run reads before its call:
// the engine's reads and the payment with its channel, in one round trip
// (the store and its transactions offer it).
type LoadReader interface {
	operation.Reader
	FindPaymentWithChannel(ctx context.Context, id string) (*Payment, merchant.Channel, error)
}

// ResourceKind implements operation.Call: the payment's kind, which
// the crash tests' hook may narrow to (a subscription's charge: recurring).
func (c *call) ResourceKind() string { return string(c.p.Kind) }

// Inquire implements operation.Call.
func (c *call) Inquire(ctx context.Context) (operation.Outcome, error) {
	res, err := c.prov.Status(ctx, provider.StatusRequest{OperationID: c.op.ID, ProviderID: statusProviderID(c.op, c.p), Profile: c.ch.Profile})
	return Outcome{PayResult: res, Provider: c.ch.Provider}, err
}

// Send implements operation.Call: the provider call of the operation's kind.
func (c *call) Send(ctx context.Context, secret []byte) (operation.Outcome, error) {
	var sec Secret
	if secret != nil {
		if err := sec.decode(secret); err != nil {
			return nil, fmt.Errorf("open operation data: %w", err)
		}
	}
	res, err := c.send(ctx, sec)
	return Outcome{PayResult: res, Provider: c.ch.Provider}, err
}

func (c *call) send(ctx context.Context, sec Secret) (provider.PayResult, error) {
	op, p, ch, prov := c.op, c.p, c.ch, c.prov
	switch op.Kind {
	case OpPay:
		req := provider.PayRequest{
			OperationID: op.ID, Authorize: p.OperationMode == ModeAuthorize, AmountMinor: p.AmountMinor,
			Currency: p.Currency, OrderID: p.OrderID, Description: p.Description, Customer: sec.Customer.Provider(),
			Locale: p.Locale, ReturnURL: c.e.returnURL(p), SaveCard: p.SavesCard(), Profile: ch.Profile,
			Instrument: provider.Instrument{Card: sec.Card.Provider(), Wallet: sec.Wallet.Provider(), Phone: sec.Phone},
			Browser:    browser(p),
			OffSession: p.Kind == KindRecurring, Payer: payer(p),
		}
		if p.SavedCardID != "" && sec.Card == nil {
			sc, err := c.e.Store.FindSavedCardForCharge(ctx, p.AccessKeyID, p.SavedCardID)
			if err != nil {
				return provider.PayResult{}, err
			}
			tok, err := savedcard.Token(c.e.Service.Sealer, sc)
			if err != nil {
				return provider.PayResult{}, err
			}
			req.Instrument.SavedToken, req.SaveCard = tok, false
		}
		return prov.Pay(ctx, req)
	case OpConfirm:
		return prov.Confirm(ctx, provider.ConfirmRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, Code: sec.Code, Profile: ch.Profile})
	case OpCapture:
		return prov.Capture(ctx, provider.CaptureRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, AmountMinor: op.AmountMinor, Profile: ch.Profile})
	case OpCancel, OpAbandon:
		// An abandon ends the payer's step only if canceled; anything else
		// (refused: the payer finished first) is left to the poll (Apply).
		// A payment that no longer waits for its payer (its outcome came
		// meanwhile) is not canceled: a hold the merchant was told of stays.
		if op.Kind == OpAbandon && p.Status != RequiresAction {
			return provider.PayResult{}, provider.Errorf(provider.Invalid, "the payment no longer waits for its payer")
		}
		return prov.Cancel(ctx, provider.CancelRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, Profile: ch.Profile})
	case OpRefund:
		return prov.Refund(ctx, provider.RefundRequest{OperationID: op.ID, ProviderID: p.ProviderPaymentID, AmountMinor: op.AmountMinor, Profile: ch.Profile})
	}
	return provider.PayResult{}, provider.Errorf(provider.Invalid, "unknown operation kind %q", op.Kind)
}

// statusProviderID is the provider's id an operation's Status may use: the
// payment's for a follow-up (capture, cancel, refund, confirm), and the
// provider's page for a payment the payer is paying there; none for a pay
// operation otherwise, which the provider finds by its own id (the
// payment's provider id may be an earlier attempt's).
func statusProviderID(op *Operation, p *Payment) string {
	if op.Kind != OpPay || p.NextActionType == RedirectResult {
		return p.ProviderPaymentID
	}
	return ""
}

// payer is the opaque id of a payment's payer at its merchant key
// (provider.PayRequest.Payer): a hash, so that no acquirer learns the
// merchant's own customer reference or Paygate's key id.
func payer(p *Payment) string {
	if p.CustomerReference == "" {
		return ""
	}
	h := sha256.Sum256([]byte(p.AccessKeyID + "\x00" + p.CustomerReference))
	return hex.EncodeToString(h[:16])
}

// Failed implements operation.Handler.
func (handler[R, T]) Failed(op *Operation, code string) operation.Outcome {
	return Outcome{PayResult: provider.PayResult{Status: provider.StatusFailed, DeclineCode: code}, GaveUp: op.Kind == OpAbandon}
}

// Reroute implements operation.Handler: a pay call that never reached its
// acquirer moves the payment to its next channel, when that is safe
// (Engine.reroute).
func (h handler[R, T]) Reroute(ctx context.Context, tx T, op *Operation, cause error) (bool, error) {
	p, ch, err := tx.FindPaymentWithChannel(ctx, op.ResourceID)
	if err != nil {
		return false, err
	}
	return h.e.reroute(ctx, tx, op, p, ch, Failed, "provider_unavailable", reasonOf(cause))
}

// AcceptsLate implements operation.Handler: a 3DS or redirect step ends
// after the pay or confirm operation that started it is done.
func (handler[R, T]) AcceptsLate(op *Operation) bool { return op.Kind == OpPay || op.Kind == OpConfirm }

// Unreadable implements operation.Handler: the payment shows manual_review
// while the engine keeps asking (docs/design/decisions.md section 4).
func (h handler[R, T]) Unreadable(ctx context.Context, tx T, op *Operation) error {
	if op.Kind == OpAbandon {
		return nil // the payer's step stays as it is while the engine asks
	}
	p, err := tx.FindPaymentByID(ctx, op.ResourceID)
	if err != nil {
		return err
	}
	if !CanMove(p.Status, ManualReview) {
		return nil
	}
	p.Status, p.UpdatedAt = ManualReview, h.e.Service.now(ctx)
	return h.e.Service.save(ctx, tx, p)
}

func browser(p *Payment) *provider.Browser {
	if p.PayerIP == "" && len(p.Device) == 0 {
		return nil
	}
	return &provider.Browser{IP: p.PayerIP, Snapshot: p.Device}
}
