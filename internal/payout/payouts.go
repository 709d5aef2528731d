package payout

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/lifecycle"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/webhook"
)

// ErrDuplicateOrderID is what the store answers when the key already has a
// payout with this order_id (its unique index refused the row).
var ErrDuplicateOrderID = errors.New("payout: order_id already used by this key")

// ErrConflict: the payout changed since it was read (compare-and-set lost).
var ErrConflict = fault.Conflict("payout", fault.InvalidPayoutState)

// Sealer encrypts data at rest (the vault).
type Sealer = operation.Sealer

// Providers finds a provider by name.
type Providers interface {
	Provider(name string) (provider.Provider, error)
}

// Service runs payouts. Render is the payout as GET shows it: the object
// of its events (docs/design/decisions.md section 6); nil records none.
type Service struct {
	Sealer    Sealer
	Now       func() time.Time
	NewID     func() string
	Providers Providers
	// BINs classifies cards as payments do; nil: the scheme table only.
	BINs   *cardinfo.Service
	Render func(*Payout) ([]byte, error)
	// Store is what the service reads outside a transaction; ErrNotFound
	// is its "no such row", which the service answers with 404.
	Store       Store
	ErrNotFound error
}

// NewService builds the payout domain; every dependency is an argument, so
// that a wiring that forgets the renderer of its events, or the store it
// reads, does not compile. errNotFound is the store's "no such row".
func NewService(sealer Sealer, now func() time.Time, newID func() string, providers Providers,
	bins *cardinfo.Service, st Store, errNotFound error, render func(*Payout) ([]byte, error)) *Service {
	return &Service{Sealer: sealer, Now: now, NewID: newID, Providers: providers, BINs: bins, Store: st,
		ErrNotFound: errNotFound, Render: render}
}

// New is a payout request (schema CreatePayout), after the schema checks.
type New struct {
	OrderID     string
	AmountMinor int64
	Currency    string
	Account     string
	Method      string // PayoutMethod.type
	Card        *instrument.Card
	SavedCardID string
	Wallet      json.RawMessage
	PayloadMode string // token (default) or direct
	Description string
	ReturnURL   string
	Customer    *instrument.Customer
	Device      json.RawMessage
	Metadata    json.RawMessage
	PayerIP     string
	// Scheme of the card: from the BIN base when it covers the card (Create
	// sets it), else from the scheme table.
	Scheme string
}

// Check applies the cross-field rules of createPayout (POST /payouts)
// that the schema cannot say (docs/design/decisions.md section 3: 400
// with the field, or the named code).
func (n *New) Check(now time.Time) *fault.Error {
	if !money.Known(n.Currency) {
		return fault.OnField(fault.ValidationError, "currency", "must be an ISO 4217 currency code")
	}
	if c := n.Customer; c != nil && c.BillingAddress != nil && c.BillingAddress.Country != "" && !country.Known(c.BillingAddress.Country) {
		return fault.OnField(fault.ValidationError, "customer.billing_address.country",
			"must be an assigned ISO 3166-1 alpha-2 country code")
	}
	if n.Card != nil && n.SavedCardID != "" {
		return fault.OnField(fault.CardAndSavedCardExclusive, "payout_method",
			"send either a card or a saved card, not both")
	}
	hasWallet := len(n.Wallet) > 0 && string(n.Wallet) != "null"
	if n.Method == MethodCard {
		if hasWallet {
			return fault.OnField(fault.ValidationError, "payout_method.wallet", "is only for wallet payout methods")
		}
		if n.Card == nil && n.SavedCardID == "" {
			return fault.OnField(fault.ValidationError, "payout_method.card", "a card or a saved_card_id is required for a card payout")
		}
		if n.Card != nil {
			if f := checkCard(n.Card, now); f != nil {
				return f
			}
			if n.Scheme == "" {
				n.Scheme = card.Scheme(n.Card.Number)
			}
			return instrument.SchemeRules(n.Scheme, n.Customer)
		}
		return nil
	}
	// A wallet type: apple_pay, google_pay, samsung_pay.
	if n.Card != nil {
		return fault.OnField(fault.ValidationError, "payout_method.card", "is only for payout_method.type card")
	}
	if n.SavedCardID != "" {
		return fault.OnField(fault.ValidationError, "payout_method.saved_card_id", "is only for payout_method.type card")
	}
	if !hasWallet {
		return fault.OnField(fault.ValidationError, "payout_method.wallet", "is required for a wallet payout")
	}
	if n.PayloadMode == "" {
		n.PayloadMode = "token"
	}
	return nil
}

// checkCard: a number that passes Luhn, digits for a CVV, and an expiry
// not past nor more than 50 years ahead (schema PayoutCard).
func checkCard(c *instrument.Card, now time.Time) *fault.Error {
	if !card.Digits(c.Number) || !card.Luhn(c.Number) {
		return fault.OnField(fault.ValidationError, "payout_method.card.number", "is not a valid card number")
	}
	if c.CVV != "" && !card.Digits(c.CVV) {
		return fault.OnField(fault.ValidationError, "payout_method.card.cvv", "must be 3 or 4 digits")
	}
	c.ExpYear = card.FullYear(c.ExpYear)
	y, m := now.Year(), int(now.Month())
	switch {
	case c.ExpYear < 2000:
		return fault.OnField(fault.ValidationError, "payout_method.card.expire_year", "must be four digits, or two meaning 20YY")
	case c.ExpYear < y || (c.ExpYear == y && c.ExpMonth < m):
		return fault.OnField(fault.ValidationError, "payout_method.card.expire_year", "the card has expired")
	case c.ExpYear > y+50:
		return fault.OnField(fault.ValidationError, "payout_method.card.expire_year", "is too far in the future")
	}
	return nil
}

// EventTx records an event in the transaction of the change it reports,
// and fans it out to webhook deliveries there (webhook.Record).
type EventTx = webhook.RecordTx

// WriteTx is what writing a payout needs: only a transaction records
// events, so a status change outside one does not compile.
type WriteTx interface {
	UpdatePayout(ctx context.Context, p *Payout) error
	EventTx
	allowance.Tx
}

// CreateTx is what accepting a payout needs in the request's transaction.
type CreateTx interface {
	// CreatePayout stores a new payout; ErrDuplicateOrderID when the key
	// has used its order_id (a unique index: concurrent duplicates too).
	CreatePayout(ctx context.Context, p *Payout) error
	ChannelsForKey(ctx context.Context, keyID string) ([]merchant.Channel, error)
	FindSavedCardForKey(ctx context.Context, keyID, id string) (*savedcard.Card, error)
	operation.QueueTx
	allowance.Tx
	cardinfo.Matcher
	EventTx
}

// Create accepts a payout (createPayout (POST /payouts)): it answers
// processing, and the transfer is queued as an operation in the same
// transaction. Raw card data needs the key's direct card data permission.
func (s *Service) Create(ctx context.Context, tx CreateTx, key merchant.Key, in New) (*Payout, error) {
	now := s.now(ctx)
	if in.Card != nil && !key.DirectCardData {
		return nil, fault.OnField(fault.DirectCardDataNotAllowed, "payout_method.card",
			"this key may not send raw card data; pay out to a saved card")
	}
	if in.Card != nil && s.BINs != nil {
		if info, ok := s.BINs.ClassifyIn(ctx, tx, in.Card.Number); ok {
			in.Scheme = info.Scheme
		}
	}
	if f := in.Check(now); f != nil {
		return nil, f
	}
	if f := instrument.CheckReturnURL(in.ReturnURL, key.Environment == merchant.Sandbox); f != nil {
		return nil, f
	}
	var sc *savedcard.Card
	if in.SavedCardID != "" {
		var err error
		if sc, err = tx.FindSavedCardForKey(ctx, key.ID, in.SavedCardID); err != nil {
			sc = nil // as the checkout does: whatever the reason, no card to use
		}
	}
	// A saved card belongs to the acquirer account that issued its token:
	// its payout goes there (docs/design/decisions.md section 17).
	issuer := ""
	if sc != nil {
		issuer = sc.Provider
	}
	ch, prov, err := s.channel(ctx, tx, key, in, issuer)
	if err != nil {
		return nil, err
	}
	p := &Payout{ID: s.NewID(), AccessKeyID: key.ID, ChannelID: ch.ID, OrderID: in.OrderID, Status: Processing,
		AmountMinor: in.AmountMinor, Currency: in.Currency, Account: in.Account, Method: in.Method,
		Description: in.Description, ReturnURL: in.ReturnURL, Metadata: in.Metadata, Device: in.Device,
		PayerIP: in.PayerIP, CreatedAt: now, UpdatedAt: now}
	sec := &Secret{Version: SecretVersion, Customer: instrument.SecretCustomerOf(in.Customer)}
	switch {
	case in.Card != nil:
		p.CardMask, sec.Card = card.Mask(in.Card.Number), in.Card
	case in.SavedCardID != "":
		// A payout names no payer (no customer_reference): the card must
		// be the key's and its provider's (docs/design/decisions.md
		// section 5); unknown, foreign and another provider's look alike.
		ref := ""
		if sc != nil {
			ref = sc.CustomerReference
		}
		if err := savedcard.Usable(sc, key.ID, ref, prov); err != nil {
			return nil, err
		}
		p.SavedCardID, p.CardMask = sc.ID, sc.MaskedCard
	default:
		sec.Wallet = &instrument.Wallet{Type: in.Method, Mode: in.PayloadMode, Payload: in.Wallet}
	}
	// The payout allowance reserves the amount in this transaction, before
	// the payout is stored: over it, 422 limit_exceeded and nothing is
	// created (docs/design/decisions.md section 12).
	if err := allowance.Reserve(ctx, tx, allowance.Hold{KeyID: p.AccessKeyID, Allowance: allowance.Payout,
		Currency: p.Currency, AmountMinor: p.AmountMinor, Resource: Resource, ResourceID: p.ID,
		At: p.CreatedAt}); err != nil {
		return nil, err
	}
	if err := tx.CreatePayout(ctx, p); err != nil {
		if errors.Is(err, ErrDuplicateOrderID) {
			return nil, fault.OnField(fault.DuplicateOrderID, "order_id", "this key already has a payout with this order_id")
		}
		return nil, err
	}
	p.StoredStatus = ""
	if err := s.changed(ctx, tx, p); err != nil {
		return nil, err
	}
	return p, s.queue(ctx, tx, p, OpCreate, sec)
}

// channel picks the key's channel for the payout's method and currency, in
// routing order, and checks its provider profile can pay out (capability
// debit, and the wallet mode), before anything is stored. issuer, when
// set, is the account of the saved card paid out to: the first channel of
// that account, if the key has one (else the first, and the card is
// refused as another provider's).
func (s *Service) channel(ctx context.Context, tx CreateTx, key merchant.Key, in New, issuer string) (*merchant.Channel, string, error) {
	channels, err := tx.ChannelsForKey(ctx, key.ID)
	if err != nil {
		return nil, "", err
	}
	var ch *merchant.Channel
	for i := range channels {
		if channels[i].Serves(in.Method, in.Currency) && (ch == nil || issuer != "" && ch.Provider != issuer && channels[i].Provider == issuer) {
			ch = &channels[i]
		}
	}
	if ch == nil {
		return nil, "", fault.OnField(fault.ChannelNotAvailable, "payout_method.type",
			"no payment channel of this key takes this method in this currency")
	}
	prov, err := s.Providers.Provider(ch.Provider)
	if err != nil {
		return nil, "", err
	}
	caps, err := prov.Capabilities(ch.Profile)
	if err != nil {
		return nil, "", err
	}
	need := []provider.Capability{provider.Debit}
	switch {
	case in.Method == MethodCard:
	case in.PayloadMode == "direct":
		need = append(need, provider.WalletDirect)
	default:
		need = append(need, provider.WalletToken)
	}
	for _, c := range need {
		if !caps.Has(c) {
			return nil, "", fault.Newf(fault.CapabilityNotSupported, "the payment channel does not support %s", c)
		}
	}
	return ch, ch.Provider, nil
}

// ConfirmTx is what confirming a payout needs in the request's transaction.
type ConfirmTx interface {
	WriteTx
	operation.QueueTx
	allowance.Tx
}

// Confirm queues the confirmation of a requires_action payout
// (confirmPayout (POST /payouts/{id}/confirm)): with code, the one-time
// code the payee received; without, a question for the outcome of the 3DS
// page. The payout answers processing meanwhile. p must be locked by the
// caller's transaction.
func (s *Service) Confirm(ctx context.Context, tx ConfirmTx, p *Payout, code string) (*Payout, error) {
	if p.Status != RequiresAction {
		return nil, fault.Newf(fault.InvalidPayoutState, "a payout in status %s cannot be confirmed", p.Status)
	}
	var sec *Secret
	if code != "" {
		sec = &Secret{Version: SecretVersion, Code: code}
	}
	p.Status, p.UpdatedAt = Processing, s.now(ctx)
	if err := s.save(ctx, tx, p); err != nil {
		return nil, err
	}
	return p, s.queue(ctx, tx, p, OpConfirm, sec)
}

// queue stores an operation with its sealed secret and its job.
func (s *Service) queue(ctx context.Context, tx operation.QueueTx, p *Payout, kind string, sec *Secret) error {
	now := s.now(ctx)
	op := &operation.Operation{ID: s.NewID(), Resource: Resource, ResourceID: p.ID, Kind: kind,
		AmountMinor: p.AmountMinor, CreatedAt: now, UpdatedAt: now}
	return operation.Queue(ctx, tx, s.Sealer, op, sec)
}

// save is the one way a payout is written after its creation: a change of
// status must be in the life cycle's table (CanMove) and records its
// payout.<status> event, carrying the payout as GET shows it, in the same
// transaction (docs/design/decisions.md section 6). The row is written by
// compare-and-set: ErrConflict when it changed since it was read.
func (s *Service) save(ctx context.Context, tx WriteTx, p *Payout) error {
	return s.lifecycle().Save(ctx, tx, p, func() error {
		if err := tx.UpdatePayout(ctx, p); err != nil {
			return err
		}
		return settleAllowance(ctx, tx, p)
	})
}

// lifecycle is the payout as it moves (internal/lifecycle).
func (s *Service) lifecycle() lifecycle.Kind[*Payout, Status] {
	return lifecycle.Kind[*Payout, Status]{Name: Resource, Table: transitions, Render: s.Render, NewID: s.NewID,
		State: func(p *Payout) lifecycle.State[Status] {
			return lifecycle.State[Status]{ID: p.ID, KeyID: p.AccessKeyID, Status: p.Status, Stored: &p.StoredStatus, At: p.UpdatedAt}
		}}
}

// settleAllowance ends the payout's reservation when it reaches an
// outcome (docs/design/decisions.md section 12): succeeded consumes it,
// declined and failed release it. The reservation stands while the payout
// is processing, requires_action or manual_review.
func settleAllowance(ctx context.Context, tx allowance.Tx, p *Payout) error {
	if p.Status == p.StoredStatus {
		return nil
	}
	switch p.Status {
	case Succeeded:
		return allowance.Settle(ctx, tx, Resource, p.ID, p.AmountMinor, p.UpdatedAt)
	case Declined, Failed:
		return allowance.Settle(ctx, tx, Resource, p.ID, 0, p.UpdatedAt)
	}
	return nil
}

// changed records the event of a status change, once.
func (s *Service) changed(ctx context.Context, tx EventTx, p *Payout) error {
	return s.lifecycle().Record(ctx, tx, p)
}

// expireJob is the job that ends a payout still waiting for its payee at
// ActionExpiresAt (docs/design/decisions.md section 15), a time of the
// key's clock (ctx's): River schedules it by the process's.
func expireJob(ctx context.Context, p *Payout, opID string) (river.JobArgs, *river.InsertOpts) {
	return ExpireActionArgs{PayoutID: p.ID, OperationID: opID},
		&river.InsertOpts{ScheduledAt: clock.Process(ctx, *p.ActionExpiresAt)}
}

// now is the time by the clock of the key whose request or job ctx
// carries (docs/design/decisions.md section 14).
func (s *Service) now(ctx context.Context) time.Time { return clock.Now(ctx, s.Now) }
