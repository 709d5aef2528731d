package payment

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/savedcard"
)

// CheckoutTx is what the hosted page needs inside its transaction.
type CheckoutTx interface {
	OperationTx
	FindSessionByID(ctx context.Context, sessionID string) (*Payment, error)
	FindSavedCardForKey(ctx context.Context, keyID, id string) (*savedcard.Card, error)
	FindKeyByID(ctx context.Context, id string) (merchant.Key, error)
}

// ErrNoSession is returned for a session id that does not exist.
var ErrNoSession = errors.New("no such checkout session")

// OpenCheckout is the payer opening checkout_url: a created session moves to
// awaiting_payment_data (docs/design/decisions.md section 4). The payment is
// returned as it is now; an expired or finished one is the caller's to show,
// never the form.
func (s *Service) OpenCheckout(ctx context.Context, tx CheckoutTx, sessionID string) (*Payment, error) {
	p, err := tx.FindSessionByID(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if ctx, err = clock.OfKey(ctx, tx, p.AccessKeyID); err != nil {
		return nil, err
	}
	now := s.now(ctx)
	seen := p.Observe(now)
	if seen.Status == Expired && p.Status != Expired {
		p.Status, p.UpdatedAt = Expired, now
		return p, s.save(ctx, tx, p)
	}
	if p.Status == Created {
		p.Status, p.UpdatedAt = AwaitingPaymentData, now
		return p, s.save(ctx, tx, p)
	}
	return p, nil
}

// CheckoutForm is what the payer submitted on the hosted page
// (docs/design/decisions.md section 9 field names). Empty strings are fields
// the page did not ask for.
type CheckoutForm struct {
	Method                           string
	Number, CVV, Cardholder          string
	ExpMonth, ExpYear                int
	Email, FirstName, LastName       string
	Country, Line1, Phone            string
	SavedCardID                      string
	Consent                          bool
	AcceptHeader, UserAgent, PayerIP string
	Device                           []byte // the DeviceSnapshot JSON the page's script gathered, if any
	// Wallet is the wallet's payload for apple_pay, google_pay and
	// samsung_pay (token mode), as the wallet handed it to the page.
	Wallet json.RawMessage
}

// formField maps the API's field paths to the page's form fields, so that a
// rule broken on the page names the input to correct.
var formField = map[string]string{
	"customer.email": "email", "customer.first_name": "first_name", "customer.last_name": "last_name",
	"customer.billing_address.country": "country", "customer.billing_address.line1": "line1",
	"payment_method.card.number": "number", "payment_method.card.expire_year": "expire_year",
	"payment_method.card.cvv": "cvv", "payment_method.mobile.phone": "phone", "payment_method.card": "number",
	"payment_method.wallet": "wallet_token",
}

// SubmitCheckout takes the payer's payment data for an open session: it
// checks it like a direct payment (the scheme's customer fields, merged with
// what the merchant sent), records consent, and queues the charge. The
// session then answers processing. Errors name form fields.
func (s *Service) SubmitCheckout(ctx context.Context, tx CheckoutTx, p *Payment, f CheckoutForm) error {
	ctx, err := clock.OfKey(ctx, tx, p.AccessKeyID)
	if err != nil {
		return err
	}
	now := s.now(ctx)
	if p.Observe(now).Status != AwaitingPaymentData && p.Observe(now).Status != Created {
		return fault.Newf(fault.InvalidPaymentState, "this checkout is %s", p.Observe(now).Status)
	}
	ch, err := tx.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return err
	}
	if ch.CheckoutMode == merchant.CheckoutProviderRedirect {
		// The payer pays on the provider's page: Paygate takes no payment data.
		return fault.New(fault.InvalidPaymentState, "this checkout takes payment data on the provider's page")
	}
	if f.SavedCardID != "" {
		f.Method = MethodCard
	}
	if !slices.Contains(ch.PaymentMethods, f.Method) {
		return fault.OnField(fault.ValidationError, "method", "choose one of the payment methods offered")
	}
	if p.Subscription != nil && f.Method != MethodCard {
		// The mandate charges the card this payment saves (docs/design/decisions.md
		// section 5): a wallet or a phone leaves nothing to charge later.
		return fault.OnField(fault.ValidationError, "method",
			"must be a card: the recurring payments are charged to the card you pay with now")
	}
	cust, err := s.Customer(p)
	if err != nil {
		return err
	}
	cust = mergeCustomer(cust, f)
	in := NewDirect{
		NewSession: NewSession{Currency: p.Currency, Customer: cust, CustomerReference: p.CustomerReference,
			SavePaymentMethod: p.SavePaymentMethod && f.SavedCardID == ""},
		OperationMode: ModeCharge, Method: f.Method, AcceptHeader: f.AcceptHeader, UserAgent: f.UserAgent,
		PayerIP: f.PayerIP, Device: f.Device,
	}
	if p.OperationMode != "" {
		in.OperationMode = p.OperationMode
	}
	if p.Subscription != nil && p.Subscription.Consent != nil && *p.Subscription.Consent && !f.Consent {
		return fault.OnField(fault.ValidationError, "consent", "tick the box to agree to the recurring payments")
	}
	var saved *savedcard.Card
	switch {
	case f.SavedCardID != "":
		in.Method = MethodCard
		if saved, err = s.savedCardFor(ctx, tx, p, f.SavedCardID); err != nil {
			return err
		}
	case f.Method == MethodCard:
		in.Card = &instrument.Card{Number: strings.ReplaceAll(f.Number, " ", ""), ExpMonth: f.ExpMonth, ExpYear: f.ExpYear,
			CVV: f.CVV, Holder: f.Cardholder}
	case f.Method == MethodMobile:
		in.Phone = f.Phone
	default: // a wallet, in token mode
		in.Wallet, in.PayloadMode = f.Wallet, "token"
	}
	if in.Card != nil && s.BINs != nil {
		if info, ok := s.BINs.ClassifyIn(ctx, tx, in.Card.Number); ok {
			in.Scheme = info.Scheme
		}
	}
	if saved == nil {
		if fe := in.Check(now); fe != nil {
			if name, ok := formField[fe.Field]; ok {
				fe.Field = name
			}
			return fe
		}
	} else if fe := instrument.SchemeRules(saved.Scheme, cust); fe != nil {
		fe.Field = formField[fe.Field]
		return fe
	}

	p.Method, p.PayerIP, p.Status, p.UpdatedAt = in.Method, in.PayerIP, Processing, now
	p.DeclineCode, p.DeclineMessage = "", ""
	if p.Device, err = mergeDevice(in.Device, in.AcceptHeader, in.UserAgent); err != nil {
		return fault.OnField(fault.ValidationError, "device", "is not a device snapshot")
	}
	if in.Card != nil {
		p.MaskedCard, p.CardScheme = card.Mask(in.Card.Number), in.Scheme
	}
	if saved != nil {
		p.MaskedCard, p.CardScheme, p.SavedCardID = saved.MaskedCard, saved.Scheme, saved.ID
	}
	if f.Consent && p.Subscription != nil {
		p.ConsentAt = &now
	}
	if err := s.sealCustomer(p, cust); err != nil {
		return err
	}
	if err := s.save(ctx, tx, p); err != nil {
		return err
	}
	sec := Secret{Version: SecretVersion, Card: in.Card, Phone: in.Phone, Customer: instrument.SecretCustomerOf(cust)}
	if len(in.Wallet) > 0 {
		sec.Wallet = &instrument.Wallet{Type: in.Method, Mode: in.PayloadMode, Payload: in.Wallet}
	}
	return s.queue(ctx, tx, p, OpPay, p.AmountMinor, "", &sec)
}

// SavedCards lists the cards a session's payer may pay with: theirs, saved
// with this key and with the session's provider, not expired
// (savedcard.Offer; docs/design/decisions.md section 5).
func (s *Service) SavedCards(ctx context.Context, tx interface {
	ListSavedCards(ctx context.Context, keyID, customerRef string) ([]savedcard.Card, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
}, p *Payment) ([]savedcard.Card, error) {
	if p.CustomerReference == "" {
		return nil, nil
	}
	ch, err := tx.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return nil, err
	}
	all, err := tx.ListSavedCards(ctx, p.AccessKeyID, p.CustomerReference)
	if err != nil {
		return nil, err
	}
	return savedcard.Offer(all, ch.Provider, s.now(ctx)), nil
}

// savedCardFor is the saved card the payer chose, if they may pay with it
// here (savedcard.Usable). A card or channel that cannot be read answers as
// a card not found.
func (s *Service) savedCardFor(ctx context.Context, tx CheckoutTx, p *Payment, id string) (*savedcard.Card, error) {
	c, err := tx.FindSavedCardForKey(ctx, p.AccessKeyID, id)
	ch, chErr := tx.FindChannelByID(ctx, p.ChannelID)
	if err != nil || chErr != nil {
		c = nil
	}
	if err := savedcard.Usable(c, p.AccessKeyID, p.CustomerReference, ch.Provider); err != nil {
		return nil, err
	}
	return c, nil
}

// mergeCustomer fills what the merchant did not send with what the payer
// typed; the merchant's data wins where both exist.
func mergeCustomer(c *instrument.Customer, f CheckoutForm) *instrument.Customer {
	if c == nil {
		c = &instrument.Customer{}
	}
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = strings.TrimSpace(v)
		}
	}
	fill(&c.Email, f.Email)
	fill(&c.FirstName, f.FirstName)
	fill(&c.LastName, f.LastName)
	if f.Country != "" || f.Line1 != "" {
		if c.BillingAddress == nil {
			c.BillingAddress = &instrument.BillingAddress{}
		}
		fill(&c.BillingAddress.Country, strings.ToUpper(f.Country))
		fill(&c.BillingAddress.Line1, f.Line1)
	}
	if *c == (instrument.Customer{}) {
		return nil
	}
	return c
}
