package verification

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
)

// SecretVersion is the format of Secret written now. Its JSON names ARE
// that format: a secret queued before a deploy is opened by the next
// version, so a name is never changed (as internal/payment/secret.go).
const SecretVersion = 1

// Secret is what a verification's operation hands the provider and
// Paygate must not keep: the card (create) or the code (verify), sealed
// while the job waits and deleted once the provider has answered
// (docs/design/decisions.md section 8).
type Secret struct {
	Version int    `json:"v"`
	Card    *Card  `json:"card,omitempty"`
	Code    string `json:"code,omitempty"`
}

// EngineStore is what the verification's jobs read outside a transaction.
type EngineStore interface {
	FindVerificationByID(ctx context.Context, id string) (*Verification, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	DueStore
}

// EngineTx is what recording an outcome writes, in the operation engine's
// transaction, and what the expiry job writes.
type EngineTx interface {
	operation.Tx
	operation.QueueTx
	FindVerificationByID(ctx context.Context, id string) (*Verification, error)
	WriteTx
	// The expiry job decides at the clock of the verification's key
	// (docs/design/decisions.md section 14).
	clock.Reader
}

// Engine is the verification side of the operation engine: it makes a
// verification's provider calls and records their outcomes (Handler), and
// runs the expiry job.
type Engine struct {
	Service  *Service
	Store    EngineStore
	Transact func(ctx context.Context, fn func(EngineTx) error) error
}

// NewEngine builds the verification side of the operation engine.
func NewEngine(svc *Service, st EngineStore, transact func(ctx context.Context, fn func(EngineTx) error) error) *Engine {
	return &Engine{Service: svc, Store: st, Transact: transact}
}

// Handler is what the operation engine runs verifications' operations with.
func NewHandler[R LoadReader, T EngineTx](e *Engine) operation.Handler[R, T] { return handler[R, T]{e} }

type handler[R LoadReader, T EngineTx] struct{ e *Engine }

// Outcome is a provider's answer to a verification operation.
type Outcome struct {
	provider.VerificationResult
	// Decided: Paygate decided the outcome because the provider could not
	// be used (operation.Handler.Failed), the provider said nothing of the
	// card.
	Decided bool
}

// Pending implements operation.Outcome: a verification answer is never
// "ask again later".
func (o Outcome) Pending() bool { return o.Status == provider.StatusPending }

// Result implements operation.Outcome.
func (o Outcome) Result() string { return string(o.Status) }

type call struct {
	op   *operation.Operation
	v    *Verification
	ch   merchant.Channel
	prov provider.Verifications
	raw  provider.Provider // for the optional interfaces beyond Verifications
}

// Load implements operation.Handler: the verification, its channel and
// provider.
func (h handler[R, T]) Load(ctx context.Context, r R, op *operation.Operation) (operation.Call, error) {
	v, err := r.FindVerificationByID(ctx, op.ResourceID)
	if err != nil {
		return nil, err
	}
	ch, err := r.FindChannelByID(ctx, v.ChannelID)
	if err != nil {
		return nil, err
	}
	prov, err := h.e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return nil, err
	}
	return &call{op: op, v: v, ch: ch, prov: provider.VerificationsOf(prov), raw: prov}, nil
}

// LoadReader is what a verification operation's run reads before its
// call (the store and its transactions offer it).
type LoadReader interface {
	operation.Reader
	FindVerificationByID(ctx context.Context, id string) (*Verification, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
}

// ResourceKind implements operation.Call: verifications have no kinds.
func (c *call) ResourceKind() string { return "" }

// Send implements operation.Call.
func (c *call) Send(ctx context.Context, raw []byte) (operation.Outcome, error) {
	var sec Secret
	if raw != nil {
		if err := json.Unmarshal(raw, &sec); err != nil {
			return nil, fmt.Errorf("open operation data: %w", err)
		}
		if sec.Version > SecretVersion {
			return nil, fmt.Errorf("an operation secret of version %d, newer than this Paygate (%d)", sec.Version, SecretVersion)
		}
	}
	var (
		res provider.VerificationResult
		err error
	)
	switch c.op.Kind {
	case OpCreate:
		if sec.Card == nil {
			return nil, provider.Errorf(provider.Invalid, "the verification's card is gone")
		}
		res, err = c.prov.CreateVerification(ctx, provider.VerificationRequest{OperationID: c.op.ID, OrderID: c.v.OrderID,
			Currency: c.v.Currency, Profile: c.ch.Profile, Card: provider.Card{Number: sec.Card.Number,
				ExpMonth: sec.Card.ExpMonth, ExpYear: sec.Card.ExpYear, CVV: sec.Card.CVV}})
	case OpVerify:
		res, err = c.prov.Verify(ctx, provider.VerifyRequest{OperationID: c.op.ID, ProviderID: c.v.ProviderID,
			Code: sec.Code, Profile: c.ch.Profile})
	case OpRelease:
		rel, ok := c.raw.(provider.VerificationReleases)
		if !ok {
			// The acquirer lets the hold go by itself: nothing to ask.
			return Outcome{VerificationResult: provider.VerificationResult{Status: provider.StatusFailed}, Decided: true}, nil
		}
		res, err = rel.ReleaseVerification(ctx, provider.ReleaseRequest{OperationID: c.op.ID, ProviderID: c.v.ProviderID,
			Profile: c.ch.Profile})
	default:
		err = provider.Errorf(provider.Invalid, "unknown operation kind %q", c.op.Kind)
	}
	return Outcome{VerificationResult: res}, err
}

// Inquire implements operation.Call. The provider finds the verification
// by the operation that created or acted on it, and answers how it stands.
func (c *call) Inquire(ctx context.Context) (operation.Outcome, error) {
	res, err := c.prov.VerificationStatus(ctx, provider.StatusRequest{OperationID: c.op.ID, Profile: c.ch.Profile})
	return Outcome{VerificationResult: res}, err
}

// Failed implements operation.Handler.
func (handler[R, T]) Failed(_ *operation.Operation, code string) operation.Outcome {
	return Outcome{VerificationResult: provider.VerificationResult{Status: provider.StatusFailed, DeclineCode: code}, Decided: true}
}

// Reroute implements operation.Handler: a verification stays with its acquirer.
func (handler[R, T]) Reroute(context.Context, T, *operation.Operation, error) (bool, error) {
	return false, nil
}

// AcceptsLate implements operation.Handler: a verification's outcome is
// recorded once.
func (handler[R, T]) AcceptsLate(*operation.Operation) bool { return false }

// Apply implements operation.Handler: the provider's state of the
// verification becomes its status. Answers may arrive out of order
// (concurrent codes): a final status is never left, and a code answer
// never moves a verification back from a later state.
func (h handler[R, T]) Apply(ctx context.Context, tx T, op *operation.Operation, o operation.Outcome) error {
	out, ok := o.(Outcome)
	if !ok {
		return fmt.Errorf("verification: an outcome of type %T", o)
	}
	v, err := tx.FindVerificationByID(ctx, op.ResourceID)
	if err != nil {
		return err
	}
	if v.Status.Final() {
		return nil
	}
	learned := false
	if out.ProviderID != "" && v.ProviderID == "" {
		v.ProviderID, learned = out.ProviderID, true
	}
	if b := out.BankReference; b != nil && v.BankReference == nil {
		v.BankReference, learned = &BankReference{PaymentID: b.PaymentID, Name: b.Name}, true
	}
	switch out.Status {
	case provider.StatusCodeSent:
		v.Status = CodeSent
	case provider.StatusSucceeded:
		v.Status = Verified
	case provider.StatusDeclined, provider.StatusFailed:
		if out.Decided && op.Kind == OpVerify {
			// The provider could not be asked: the code said nothing of the
			// card, and the verification keeps waiting (or expires).
			return nil
		}
		v.Status, v.DeclineCode = Failed, out.DeclineCode
		if v.DeclineCode == "" {
			v.DeclineCode = "processing_error"
		}
	default:
		return nil
	}
	if v.Status == v.StoredStatus && !learned {
		return nil
	}
	v.UpdatedAt = h.e.Service.now(ctx)
	return h.e.Service.save(ctx, tx, v)
}

// Unreadable implements operation.Handler: manual_review while the engine
// keeps asking; never a bad card (docs/design/decisions.md section 4).
func (h handler[R, T]) Unreadable(ctx context.Context, tx T, op *operation.Operation) error {
	v, err := tx.FindVerificationByID(ctx, op.ResourceID)
	if err != nil {
		return err
	}
	if !CanMove(v.Status, ManualReview) {
		return nil
	}
	v.Status, v.UpdatedAt = ManualReview, h.e.Service.now(ctx)
	return h.e.Service.save(ctx, tx, v)
}
