package payment

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
)

// Payment methods (OpenAPI schema PaymentMethod, type).
const (
	MethodCard       = "card"
	MethodApplePay   = "apple_pay"
	MethodGooglePay  = "google_pay"
	MethodSamsungPay = "samsung_pay"
	MethodMobile     = "mobile"
)

// NewDirect is a validated direct payment request (OpenAPI schema
// DirectPayment).
type NewDirect struct {
	NewSession
	OperationMode string // charge (default) or authorize
	Method        string
	Card          *instrument.Card
	Wallet        json.RawMessage
	PayloadMode   string // token (default) or direct
	Phone         string // as sent; Check normalises it
	Device        json.RawMessage
	// From the HTTP request itself, not the body (OpenAPI schema
	// DeviceSnapshot).
	AcceptHeader, UserAgent, PayerIP string
	// Scheme of the card, from the BIN base when it covers the card
	// (CreateDirect sets it), else from the scheme table.
	Scheme string
}

// e164 is the mobile phone rule, checked after stripping (client API).
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// NormalizePhone strips spaces, dashes and brackets, then checks E.164.
func NormalizePhone(s string) (string, bool) {
	p := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '(', ')':
			return -1
		}
		return r
	}, s)
	return p, e164.MatchString(p)
}

// Check applies the cross-field rules of a direct payment
// (docs/design/decisions.md section 3: 400 validation_error with the field,
// or the named code). now decides whether a card has expired.
func (n *NewDirect) Check(now time.Time) *fault.Error {
	if f := checkCommon(n.Currency, n.SavePaymentMethod, n.CustomerReference, n.Customer); f != nil {
		return f
	}
	if n.OperationMode == "" {
		n.OperationMode = ModeCharge
	}
	if n.PayloadMode == "" {
		n.PayloadMode = "token"
	}
	switch n.Method {
	case MethodCard:
		if n.Card == nil {
			return fault.OnField(fault.ValidationError, "payment_method.card", "is required for a card payment")
		}
		if !card.Digits(n.Card.Number) || !card.Luhn(n.Card.Number) {
			return fault.OnField(fault.ValidationError, "payment_method.card.number", "is not a valid card number")
		}
		if n.Card.CVV != "" && !card.Digits(n.Card.CVV) {
			return fault.OnField(fault.ValidationError, "payment_method.card.cvv", "must be 3 or 4 digits")
		}
		n.Card.ExpYear = card.FullYear(n.Card.ExpYear)
		if n.Card.ExpYear < 2000 {
			return fault.OnField(fault.ValidationError, "payment_method.card.expire_year", "must be four digits, or two meaning 20YY")
		}
		y, m := now.Year(), int(now.Month())
		if n.Card.ExpYear < y || (n.Card.ExpYear == y && n.Card.ExpMonth < m) {
			return fault.OnField(fault.ValidationError, "payment_method.card.expire_year", "the card has expired")
		}
		if n.Card.ExpYear > y+50 {
			return fault.OnField(fault.ValidationError, "payment_method.card.expire_year", "is too far in the future")
		}
		if n.Scheme == "" {
			n.Scheme = card.Scheme(n.Card.Number)
		}
		if f := instrument.SchemeRules(n.Scheme, n.Customer); f != nil {
			return f
		}
	case MethodApplePay, MethodGooglePay, MethodSamsungPay:
		if len(n.Wallet) == 0 || string(n.Wallet) == "null" {
			return fault.OnField(fault.ValidationError, "payment_method.wallet", "is required for a wallet payment")
		}
	case MethodMobile:
		phone, ok := NormalizePhone(n.Phone)
		if !ok {
			return fault.OnField(fault.ValidationError, "payment_method.mobile.phone",
				"must be an E.164 number: a plus and 8 to 15 digits (spaces, dashes and brackets are ignored)")
		}
		n.Phone = phone
	}
	if n.Method != MethodCard && n.Card != nil {
		return fault.OnField(fault.ValidationError, "payment_method.card", "is only for payment_method.type card")
	}
	if n.Method != MethodMobile && n.Phone != "" {
		return fault.OnField(fault.ValidationError, "payment_method.mobile", "is only for payment_method.type mobile")
	}
	return nil
}

// capabilityFor names what a direct payment needs of the channel's profile.
func (n *NewDirect) capabilities() []provider.Capability {
	need := []provider.Capability{provider.Charge}
	if n.OperationMode == ModeAuthorize {
		need = []provider.Capability{provider.Authorize}
	}
	switch n.Method {
	case MethodApplePay, MethodGooglePay, MethodSamsungPay:
		if n.PayloadMode == "direct" {
			need = append(need, provider.WalletDirect)
		} else {
			need = append(need, provider.WalletToken)
		}
	case MethodMobile:
		need = append(need, provider.Mobile)
	}
	return append(need, n.NewSession.capabilities()...)
}

// DirectTx is what accepting a direct payment needs inside the request's transaction.
type DirectTx interface {
	SessionTx
	operation.QueueTx
	cardinfo.Matcher
}

// Providers finds a provider by name.
type Providers interface {
	Provider(name string) (provider.Provider, error)
	// Available reports whether new payments may go to the provider now:
	// its circuit in this process is not open (docs/design/decisions.md
	// section 17).
	Available(name string) bool
}

// CreateDirect accepts a direct payment: it answers processing, and the
// provider call is queued as an operation in the same transaction
// (docs/design/decisions.md section 4). key must hold the direct card data
// permission for a card.
func (s *Service) CreateDirect(ctx context.Context, tx DirectTx, key merchant.Key, in NewDirect) (*Payment, error) {
	now := s.now(ctx)
	if in.Method == MethodCard && !key.DirectCardData {
		return nil, fault.OnField(fault.DirectCardDataNotAllowed, "payment_method.card",
			"this key may not send raw card data; use a hosted session")
	}
	var issuedIn string // the card's country, for the routing rules
	if in.Card != nil && s.BINs != nil {
		// The same BIN base that answers GET /cards/information classifies
		// the card, through this transaction.
		if info, ok := s.BINs.ClassifyIn(ctx, tx, in.Card.Number); ok {
			in.Scheme, issuedIn = info.Scheme, info.CountryCode
		}
	}
	if f := in.Check(now); f != nil {
		return nil, f
	}
	if f := instrument.CheckReturnURL(in.ReturnURL, key.Environment == merchant.Sandbox); f != nil {
		return nil, f
	}
	if f := checkTerms(in.Subscription, now); f != nil {
		return nil, f
	}
	if in.Subscription != nil && in.Method != MethodCard {
		return nil, fault.OnField(fault.ValidationError, "payment_method.type",
			"a payment with subscription terms saves the card it charges later: it must be a card payment")
	}
	if in.Method == MethodMobile && in.OperationMode == ModeAuthorize {
		return nil, fault.OnField(fault.CapabilityNotSupported, "operation_mode",
			"mobile payments settle at once: the operator offers no hold")
	}
	channels, err := tx.ChannelsForKey(ctx, key.ID)
	if err != nil {
		return nil, err
	}
	id := s.NewID()
	pay := merchant.Payment{AmountMinor: in.AmountMinor, CardKnown: in.Card != nil, Scheme: in.Scheme, Country: issuedIn}
	ch, err := s.route(channels, pay, func(c merchant.Channel) bool { return c.Serves(in.Method, in.Currency) },
		in.capabilities(), id)
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return nil, fault.OnField(fault.ChannelNotAvailable, "payment_method.type",
			"no payment channel of this key takes this method in this currency")
	}

	p := &Payment{
		ID: id, AccessKeyID: key.ID, ChannelID: ch.ID, Kind: KindDirect, Status: Processing,
		OrderID: in.OrderID, AmountMinor: in.AmountMinor, Currency: in.Currency, Description: in.Description,
		CustomerReference: in.CustomerReference, ReturnURL: in.ReturnURL, Locale: in.Locale,
		OperationMode: in.OperationMode, Method: in.Method, SavePaymentMethod: in.SavePaymentMethod,
		Subscription: in.Subscription, Metadata: in.Metadata, PayerIP: in.PayerIP, CreatedAt: now, UpdatedAt: now,
	}
	if p.Locale == "" {
		p.Locale = "ru"
	}
	if in.Card != nil {
		p.MaskedCard, p.CardScheme = card.Mask(in.Card.Number), in.Scheme
	}
	if p.Device, err = mergeDevice(in.Device, in.AcceptHeader, in.UserAgent); err != nil {
		return nil, err
	}
	sec := Secret{Version: SecretVersion, Card: in.Card, Phone: in.Phone, Customer: instrument.SecretCustomerOf(in.Customer)}
	if len(in.Wallet) > 0 {
		sec.Wallet = &instrument.Wallet{Type: in.Method, Mode: in.PayloadMode, Payload: in.Wallet}
	}
	if err := s.sealCustomer(p, in.Customer); err != nil {
		return nil, err
	}
	if err := s.create(ctx, tx, p); err != nil {
		return nil, err
	}
	if err := s.queue(ctx, tx, p, OpPay, p.AmountMinor, "", &sec); err != nil {
		return nil, err
	}
	return p, nil
}

// queue stores an operation (with its sealed secret) and its job.
func (s *Service) queue(ctx context.Context, tx DirectTx, p *Payment, kind string, amount int64, refundID string, sec *Secret) error {
	_, err := s.queueID(ctx, tx, p, kind, amount, refundID, sec)
	return err
}

// queueID is queue, returning the operation's id.
func (s *Service) queueID(ctx context.Context, tx DirectTx, p *Payment, kind string, amount int64, refundID string, sec *Secret) (string, error) {
	now := s.now(ctx)
	op := &Operation{ID: s.NewID(), Resource: Resource, ResourceID: p.ID, Kind: kind, AmountMinor: amount,
		Ref: refundID, CreatedAt: now, UpdatedAt: now}
	return op.ID, operation.Queue(ctx, tx, s.Sealer, op, sec)
}

// mergeDevice sets the authoritative accept_header and user_agent from the
// request's own headers over whatever the body said (client API).
func mergeDevice(snapshot json.RawMessage, accept, userAgent string) (json.RawMessage, error) {
	d := map[string]any{}
	if len(snapshot) > 0 {
		if err := json.Unmarshal(snapshot, &d); err != nil {
			return nil, err
		}
	}
	if len(snapshot) == 0 && accept == "" && userAgent == "" {
		return nil, nil
	}
	if accept != "" {
		d["accept_header"] = truncate(accept, 512)
	}
	if userAgent != "" {
		d["user_agent"] = truncate(userAgent, 512)
	}
	return json.Marshal(d)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
