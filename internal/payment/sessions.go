package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
)

// DefaultSessionLifetime is how long a hosted session stays payable when the
// merchant sends no expires_in_seconds (docs/design/decisions.md section 4:
// 1800 s).
const DefaultSessionLifetime = 1800 * time.Second

// NewSession is a validated request to open a hosted session (OpenAPI
// schema CreatePayment).
type NewSession struct {
	OrderID           string
	AmountMinor       int64
	Currency          string
	Description       string
	Customer          *instrument.Customer
	CustomerReference string
	ReturnURL         string
	Locale            string
	ExpiresIn         time.Duration // zero: DefaultSessionLifetime
	SavePaymentMethod bool
	Subscription      *SubscriptionTerms
	Metadata          json.RawMessage
}

// Check applies the rules across fields that the schema cannot express
// (docs/design/decisions.md section 3: they answer after the schema checks).
func (n NewSession) Check() *fault.Error {
	return checkCommon(n.Currency, n.SavePaymentMethod, n.CustomerReference, n.Customer)
}

// capabilities names what a session needs of its channel's profile beyond
// taking a payment: keeping the card with the provider, when the payment
// saves it or carries subscription terms (docs/design/decisions.md section
// 5: the mandate charges that saved card later).
func (n NewSession) capabilities() []provider.Capability {
	if n.SavePaymentMethod || n.Subscription != nil {
		return []provider.Capability{provider.SavedCards}
	}
	return nil
}

// channelHas refuses a payment whose channel's profile lacks a capability
// it needs: 422 capability_not_supported before anything is stored
// (docs/design/decisions.md section 3).
func (s *Service) channelHas(ch merchant.Channel, need []provider.Capability) error {
	if len(need) == 0 {
		return nil
	}
	prov, err := s.Providers.Provider(ch.Provider)
	if err != nil {
		return err
	}
	caps, err := prov.Capabilities(ch.Profile)
	if err != nil {
		return err
	}
	for _, c := range need {
		if !caps.Has(c) {
			return fault.Newf(fault.CapabilityNotSupported, "the payment channel does not support %s", c)
		}
	}
	return nil
}

// route picks a new payment's channel among the key's (docs/design/decisions.md
// section 17): the first of the candidates, those that serve it, whose
// route admits it, whose acquirer's circuit is not open, and that have
// every capability it needs. None: a
// channel that serves it and is admitted but lacks a capability answers
// that capability's 422; none at all is nil (the caller's
// channel_not_available).
func (s *Service) route(channels []merchant.Channel, pay merchant.Payment, serves func(merchant.Channel) bool,
	need []provider.Capability, seed string) (*merchant.Channel, error) {
	cands := merchant.Candidates(channels, pay, func(c merchant.Channel) bool {
		return serves(c) && s.Providers.Available(c.Provider) && s.channelHas(c, need) == nil
	}, seed)
	if len(cands) > 0 {
		return &cands[0], nil
	}
	for _, c := range channels {
		var f *fault.Error
		if err := s.channelHas(c, need); serves(c) && c.Route.Admits(pay) && errors.As(err, &f) {
			return nil, f
		}
		// A channel whose provider this process does not know (an account
		// added a moment ago, read within seconds) is no candidate either.
	}
	return nil, nil
}

func checkCommon(currency string, save bool, customerRef string, c *instrument.Customer) *fault.Error {
	if !money.Known(currency) {
		return fault.OnField(fault.ValidationError, "currency", "must be an ISO 4217 currency code")
	}
	if save && customerRef == "" {
		return fault.OnField(fault.CustomerReferenceRequired, "customer_reference",
			"save_payment_method needs a customer_reference to bind the card to")
	}
	if c != nil && c.BillingAddress != nil && c.BillingAddress.Country != "" && !country.Known(c.BillingAddress.Country) {
		return fault.OnField(fault.ValidationError, "customer.billing_address.country",
			"must be an assigned ISO 3166-1 alpha-2 country code")
	}
	return nil
}

// SessionTx is what opening a session needs, inside the request's transaction.
type SessionTx interface {
	ChannelsForKey(ctx context.Context, keyID string) ([]merchant.Channel, error)
	CreateTx
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Sealer encrypts data at rest (the vault).
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// Service runs payment operations.
type Service struct {
	Sealer    Sealer
	Now       func() time.Time
	NewID     func() string
	Providers Providers
	// BINs classifies cards at payment time; nil: the scheme table only.
	BINs *cardinfo.Service
	// Render turns a payment into its API form (as GET shows it) for the
	// event of each status change; nil records no events (tests of the
	// domain alone).
	Render func(*Payment) ([]byte, error)
	// Recurring is the subscription domain, told of payments that carry
	// terms or pay a subscription; nil: terms are refused (422
	// capability_not_supported).
	Recurring Recurring
	// Store is what the service reads outside a transaction; ErrNotFound
	// is its "no such row", which the service answers with 404.
	Store       Store
	ErrNotFound error
}

// NewService builds the payment domain. Every dependency is an argument, so
// that a wiring that forgets one does not compile (docs/architecture.md,
// "The composition root"): render is the payment as GET shows it, the
// object of each status change's event (docs/design/decisions.md section
// 6); recurring makes the subscription domain from the service it charges
// through (nil: terms are refused); st is what the service reads outside
// a transaction, errNotFound its "no such row".
func NewService(sealer Sealer, now func() time.Time, newID func() string, providers Providers,
	bins *cardinfo.Service, st Store, errNotFound error, render func(*Payment) ([]byte, error),
	recurring func(*Service) Recurring) *Service {
	s := &Service{Sealer: sealer, Now: now, NewID: newID, Providers: providers, BINs: bins, Store: st,
		ErrNotFound: errNotFound, Render: render}
	if recurring != nil {
		s.Recurring = recurring(s)
	}
	return s
}

// CustomerAAD binds sealed customer data to its payment.
func CustomerAAD(paymentID string) []byte { return []byte("payment_customer:" + paymentID) }

// CreateSession opens a hosted session on the first of the key's channels
// (in assignment order) that takes the currency; 422 channel_not_available
// when none does, 422 capability_not_supported when that channel cannot keep
// the card the session saves or its subscription terms need. The expiry job
// is queued in the same transaction.
func (s *Service) CreateSession(ctx context.Context, tx SessionTx, key merchant.Key, in NewSession) (*Payment, error) {
	if f := in.Check(); f != nil {
		return nil, f
	}
	if f := instrument.CheckReturnURL(in.ReturnURL, key.Environment == merchant.Sandbox); f != nil {
		return nil, f
	}
	now := s.now(ctx)
	if f := checkTerms(in.Subscription, now); f != nil {
		return nil, f
	}
	channels, err := tx.ChannelsForKey(ctx, key.ID)
	if err != nil {
		return nil, err
	}
	id := s.NewID()
	ch, err := s.route(channels, merchant.Payment{AmountMinor: in.AmountMinor},
		func(c merchant.Channel) bool { return c.ServesCurrency(in.Currency) }, in.capabilities(), id)
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return nil, fault.OnField(fault.ChannelNotAvailable, "currency",
			"no payment channel of this key accepts this currency")
	}
	lifetime := in.ExpiresIn
	if lifetime == 0 {
		lifetime = DefaultSessionLifetime
	}
	expires := now.Add(lifetime)
	p := &Payment{
		ID: id, SessionID: s.NewID(), AccessKeyID: key.ID, ChannelID: ch.ID,
		Kind: KindHosted, Status: Created, OrderID: in.OrderID, AmountMinor: in.AmountMinor,
		Currency: in.Currency, Description: in.Description, CustomerReference: in.CustomerReference,
		ReturnURL: in.ReturnURL, Locale: in.Locale, OperationMode: ModeCharge,
		SavePaymentMethod: in.SavePaymentMethod, Subscription: in.Subscription, Metadata: in.Metadata,
		ExpiresAt: &expires, CreatedAt: now, UpdatedAt: now,
	}
	if p.Locale == "" {
		p.Locale = "ru" // client API: default ru
	}
	if err := s.sealCustomer(p, in.Customer); err != nil {
		return nil, err
	}
	if err := s.create(ctx, tx, p); err != nil {
		return nil, err
	}
	if err := tx.Enqueue(ctx, ExpireSessionArgs{PaymentID: p.ID}, &river.InsertOpts{ScheduledAt: clock.Process(ctx, expires)}); err != nil {
		return nil, fmt.Errorf("queue session expiry: %w", err)
	}
	return p, nil
}

// sealCustomer keeps the names in clear (the Payment answer shows them) and
// the whole customer sealed.
func (s *Service) sealCustomer(p *Payment, c *instrument.Customer) error {
	if c == nil {
		return nil
	}
	p.FirstName, p.LastName = c.FirstName, c.LastName
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if p.CustomerSealed, err = s.Sealer.Seal(raw, CustomerAAD(p.ID)); err != nil {
		return fmt.Errorf("seal customer: %w", err)
	}
	return nil
}

// Customer opens the sealed customer data of a payment (nil when none).
func (s *Service) Customer(p *Payment) (*instrument.Customer, error) {
	if len(p.CustomerSealed) == 0 {
		return nil, nil
	}
	raw, err := s.Sealer.Open(p.CustomerSealed, CustomerAAD(p.ID))
	if err != nil {
		return nil, err
	}
	var c instrument.Customer
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return &c, nil
}
