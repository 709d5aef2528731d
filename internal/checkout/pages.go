// Package checkout is the hosted checkout (docs/design/decisions.md
// sections 4 and 9): the payer's pages at checkout_url, their style sheet
// and script, and their anti-forgery tokens. It serves pages, not API: its
// answers are HTML, and its handlers are mounted by the server, whose
// routes.go lists every pattern and whose middleware (request id, panic
// recovery, access log, metrics, draining) wraps them as it wraps the API.
// docs/checkout.md describes the flow for merchants.
package checkout

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/forwarded"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
)

// Config is what the pages need to know of the deployment.
type Config struct {
	Environment string // merchant.Sandbox or merchant.Production
	// PublicURL is the base of the links given to payers; when it is https,
	// requests at its host get the __Host- cookie (forgery.go).
	PublicURL string
	// ProviderOrigins are the origins of the providers' payer pages (3DS,
	// hosted checkout): the forms may lead there (CSP form-action).
	ProviderOrigins []string
	// AccountOrigins, when set, adds the origins of the acquirer
	// accounts' pages as the accounts are read now (they change while
	// Paygate runs).
	AccountOrigins func() []string
	// Proxies are the trusted proxies, whose forwarded headers give the
	// payer's address and scheme.
	Proxies forwarded.Proxies
}

// Store runs the pages' transactions; *store.Store is one. What they read
// and change in them, the payment service does (Payments). The
// transaction is a *store.Tx because the payment service's checkout
// methods take it whole (payment.CheckoutTx).
type Store interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
}

// Payments are the payment service's calls the pages make; *payment.Service
// is one.
type Payments interface {
	FindSession(ctx context.Context, sessionID string) (*payment.Payment, error)
	CheckoutSession(ctx context.Context, tx payment.CheckoutTx, sessionID string) (*payment.Payment, error)
	CheckoutChannel(ctx context.Context, tx payment.CheckoutTx, p *payment.Payment) (merchant.Channel, error)
	OpenCheckout(ctx context.Context, tx payment.CheckoutTx, sessionID string) (*payment.Payment, error)
	SubmitCheckout(ctx context.Context, tx payment.CheckoutTx, p *payment.Payment, f payment.CheckoutForm) error
	Confirm(ctx context.Context, tx payment.OperationTx, p *payment.Payment, code string) (*payment.Payment, error)
	Customer(p *payment.Payment) (*instrument.Customer, error)
	SavedCards(ctx context.Context, tx interface {
		ListSavedCards(ctx context.Context, keyID, customerRef string) ([]savedcard.Card, error)
		FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
	}, p *payment.Payment) ([]savedcard.Card, error)
}

// Engine opens the provider's own page of a provider_redirect session;
// *payment.Engine is one.
type Engine interface {
	StartRedirect(ctx context.Context, transact func(context.Context, func(payment.RedirectTx) error) error, sessionID string) (string, error)
}

// Validator checks JSON against a schema of the OpenAPI document (the
// device snapshot the page's script sends); *openapi.Validator is one.
type Validator interface {
	Decode(schema string, body []byte, dst any) *fault.Error
}

// Deps are what the pages call.
type Deps struct {
	Store    Store
	Payments Payments
	// Engine runs the provider calls the pages make themselves (the
	// provider's own page for provider_redirect channels); nil: that mode
	// is off.
	Engine    Engine
	Validator Validator
	Log       *slog.Logger
	Now       func() time.Time
	// Keys is the master keyring (*vault.Keyring): the anti-forgery key
	// derives from it, so that every process of a cluster shares it
	// (docs/checkout.md, Security). Required.
	Keys KeyDeriver
	// RequestID is the id the server's middleware gave the request, for
	// the log.
	RequestID func(context.Context) string
	// StatusOf is the API's one code → HTTP status table
	// (docs/design/decisions.md section 3): a refusal the API would answer
	// with a 4xx is the payer's to fix on the form; any other is an error
	// page.
	StatusOf func(fault.Code) int
}

// Pages serves the checkout's pages; one handler maker per route.
type Pages struct {
	cfg       Config
	store     Store
	payments  Payments
	engine    Engine
	validator Validator
	log       *slog.Logger
	now       func() time.Time
	formKeys  [][]byte // the anti-forgery keys (forgery.go)
	requestID func(context.Context) string
	statusOf  func(fault.Code) int
}

// New builds the pages. It fails without master keys, as the anti-forgery
// key derives from them; every other dependency but Engine is required.
func New(cfg Config, d Deps) (*Pages, error) {
	fk, err := formKeys(d.Keys)
	if err != nil {
		return nil, err
	}
	return &Pages{cfg: cfg, store: d.Store, payments: d.Payments, engine: d.Engine, validator: d.Validator,
		log: d.Log, now: d.Now, formKeys: fk, requestID: d.RequestID, statusOf: d.StatusOf}, nil
}

// origins are the origins of the providers' payer pages now.
func (pg *Pages) origins() []string {
	if pg.cfg.AccountOrigins == nil {
		return pg.cfg.ProviderOrigins
	}
	return append(slices.Clone(pg.cfg.ProviderOrigins), pg.cfg.AccountOrigins()...)
}
