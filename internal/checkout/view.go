package checkout

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
)

// checkoutSession is what the pages of one session show, read in one
// transaction.
type checkoutSession struct {
	p        *payment.Payment
	channel  merchant.Channel
	customer *instrument.Customer // what the merchant sent (and the payer typed before)
	saved    []savedcard.Card
}

func (pg *Pages) loadCheckout(ctx context.Context, tx *store.Tx, p *payment.Payment) (*checkoutSession, error) {
	ch, err := pg.payments.CheckoutChannel(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	cs := &checkoutSession{p: p, channel: ch}
	if cs.customer, err = pg.payments.Customer(p); err != nil {
		return nil, err
	}
	if st := p.Observe(pg.now()).Status; (st == payment.Created || st == payment.AwaitingPaymentData) &&
		ch.CheckoutMode == merchant.CheckoutPlatform {
		if cs.saved, err = pg.payments.SavedCards(ctx, tx, p); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// pageView is what page.html draws.
type pageView struct {
	Page    string // form, code, retry or message
	Title   string
	Lead    string
	Icon    string // wait, success, error, expired, notfound, unavailable
	Refresh string // meta refresh: seconds until the page reloads itself, or "0; url=…" (no script)
	Script  bool
	Order   *orderView
	Form    *formView
	Action  string
	Token   string
	Errors  []fieldError
	Decline string
	Link    *pageLink

	// Set by renderPage.
	Sandbox      bool
	Asset, Nonce string
	// formTargets are origins a form on the page may lead to (CSP form-action).
	formTargets []string
}

type orderView struct {
	Label, Amount, Description, OrderID, Card string
	Sub                                       *subView
}

type subView struct{ Today, Amount, Every, First, Version string }

type pageLink struct{ Href, Text string }

// formView is the payment form.
type formView struct {
	Methods        []methodOption // empty: card only
	Card, Wallet   bool
	Mobile         bool
	Saved          []savedOption
	NewCard        bool
	Ask            []string // billing fields asked for, in order
	Consent        bool
	ConsentChecked bool
	ConsentError   string
	Sub            *subView
	LastScheme     string
	Pay            string
	fields         map[string]*inputView
}

// Field is the input named name, for the template.
func (f *formView) Field(name string) *inputView { return f.fields[name] }

type methodOption struct {
	Value, Label, Icon string // Icon: card, wallet or phone
	Checked            bool
}

type savedOption struct {
	ID, Scheme, SchemeName, Last4, Expiry string
	Checked                               bool
}

// inputView is one labelled input.
type inputView struct {
	Name, Label, Type, Autocomplete, InputMode, Placeholder, Hint string
	Value, Error, For, Class, Countries                           string
	MaxLength                                                     int
	Required                                                      bool
}

// DescribedBy lists the hint and the error the input is described by.
func (i *inputView) DescribedBy() string {
	var ids []string
	if i.Hint != "" {
		ids = append(ids, i.Name+"-hint")
	}
	if i.Error != "" {
		ids = append(ids, i.Name+"-error")
	}
	return strings.Join(ids, " ")
}

var methodLabels = map[string]string{
	payment.MethodCard: "Card", payment.MethodApplePay: "Apple Pay", payment.MethodGooglePay: "Google Pay",
	payment.MethodSamsungPay: "Samsung Pay", payment.MethodMobile: "Mobile",
}

var schemeNames = map[string]string{card.Visa: "Visa", card.Mastercard: "Mastercard", card.Amex: "Amex", card.Mir: "Mir"}

// schemeRequirements are the customer fields each scheme needs (client
// API: Visa needs names, email, country and line1; Mastercard the email).
var schemeRequirements = []struct{ field, schemes string }{
	{"first_name", "visa"}, {"last_name", "visa"}, {"email", "visa mastercard"},
	{"country", "visa"}, {"line1", "visa"},
}

// methods are the channel's methods the page can take: wallets need a
// wallet's own script, so only the sandbox offers them (simulated).
func (pg *Pages) methods(ch merchant.Channel) []string {
	var out []string
	for _, m := range ch.PaymentMethods {
		switch m {
		case payment.MethodCard, payment.MethodMobile:
			out = append(out, m)
		case payment.MethodApplePay, payment.MethodGooglePay, payment.MethodSamsungPay:
			if pg.cfg.Environment == merchant.Sandbox {
				out = append(out, m)
			}
		}
	}
	return out
}

// renderForm draws the payment form, with errs when a submission was
// refused. Card data and the phone never come back into the form.
func (pg *Pages) renderForm(w http.ResponseWriter, r *http.Request, cs *checkoutSession, status int, errs []fieldError) {
	p := cs.p
	posted := r.Method == http.MethodPost
	f := &formView{Pay: "Pay " + money.Format(p.AmountMinor, p.Currency), fields: map[string]*inputView{}}
	methods := pg.methods(cs.channel)
	if p.Subscription != nil {
		// Terms are charged later on the card paid with now
		// (docs/subscriptions.md, "Terms"): the page offers the card only.
		methods = []string{payment.MethodCard}
	}
	chosen := r.PostFormValue("method")
	if !slices.Contains(methods, chosen) {
		chosen = payment.MethodCard
	}
	if len(methods) > 1 {
		for _, m := range methods {
			icon := map[string]string{payment.MethodCard: "card", payment.MethodMobile: "phone"}[m]
			f.Methods = append(f.Methods, methodOption{Value: m, Label: methodLabels[m], Icon: orWord(icon, "wallet"),
				Checked: m == chosen})
		}
	}
	for _, m := range methods {
		switch m {
		case payment.MethodCard:
			f.Card = true
		case payment.MethodMobile:
			f.Mobile = true
		default:
			f.Wallet = true
		}
	}
	pick := r.PostFormValue("saved_card_id")
	for i, c := range cs.saved {
		checked := (!posted && i == 0) || (posted && pick == c.ID)
		f.Saved = append(f.Saved, savedOption{ID: c.ID, Scheme: c.Scheme, SchemeName: orWord(schemeNames[c.Scheme], c.Scheme),
			Last4: lastFour(c.MaskedCard), Expiry: fmt.Sprintf("%02d/%02d", c.ExpMonth, c.ExpYear%100), Checked: checked})
	}
	f.NewCard = len(cs.saved) == 0 || (posted && pick == "")
	if posted {
		if n := digitsOnly(r.PostFormValue("number")); n != "" && pick == "" {
			f.LastScheme = card.Scheme(n) // the scheme, never the number
		}
	}

	year := pg.now().Year()
	add := func(in inputView) { f.fields[in.Name] = &in }
	add(inputView{Name: "number", Label: "Card number", Type: "text", Autocomplete: "cc-number", InputMode: "numeric",
		Placeholder: "1234 1234 1234 1234", MaxLength: 23, Required: true})
	add(inputView{Name: "expire_month", Label: "Month", Type: "text", Autocomplete: "cc-exp-month", InputMode: "numeric",
		Placeholder: "MM", MaxLength: 2, Required: true})
	add(inputView{Name: "expire_year", Label: "Year", Type: "text", Autocomplete: "cc-exp-year", InputMode: "numeric",
		Placeholder: fmt.Sprint(year + 2), MaxLength: 4, Required: true})
	add(inputView{Name: "cvv", Label: "Security code", Type: "text", Autocomplete: "cc-csc", InputMode: "numeric",
		Placeholder: "CVC", MaxLength: 4, Required: true, Class: "cvv"})
	add(inputView{Name: "cardholder", Label: "Name on card", Type: "text", Autocomplete: "cc-name", MaxLength: 100})
	add(inputView{Name: "phone", Label: "Phone number", Type: "tel", Autocomplete: "tel", InputMode: "tel",
		Placeholder: "+1 202 555 0100", Hint: "In international format, starting with + and the country code.", MaxLength: 32, Required: true})
	add(inputView{Name: "email", Label: "Email", Type: "email", Autocomplete: "email", MaxLength: 254, Required: true})
	add(inputView{Name: "first_name", Label: "First name", Type: "text", Autocomplete: "given-name", MaxLength: 100, Required: true})
	add(inputView{Name: "last_name", Label: "Last name", Type: "text", Autocomplete: "family-name", MaxLength: 100, Required: true})
	add(inputView{Name: "country", Label: "Country", Type: "text", Autocomplete: "country", MaxLength: 2, Required: true,
		Hint: "Two-letter code, e.g. GB or US.", Countries: countryCodes})
	add(inputView{Name: "line1", Label: "Billing address", Type: "text", Autocomplete: "address-line1", MaxLength: 200, Required: true})

	for _, req := range schemeRequirements {
		if customerField(cs.customer, req.field) == "" {
			f.Ask = append(f.Ask, req.field)
			f.fields[req.field].For = req.schemes
			if posted { // the payer's own details come back; card data never does
				f.fields[req.field].Value = strings.TrimSpace(r.PostFormValue(req.field))
			}
		}
	}
	if t := p.Subscription; t != nil {
		f.Sub = subscriptionView(p)
		f.Consent = t.Consent != nil && *t.Consent
		f.ConsentChecked = posted && r.PostFormValue("consent") == "yes"
	}

	v := pageView{Page: "form", Title: "Pay " + money.Format(p.AmountMinor, p.Currency), Script: true,
		Order: pg.orderView(cs), Form: f, Action: "/checkout/" + p.SessionID, Token: pg.formToken(w, r, p.SessionID),
		Decline: p.DeclineMessage, formTargets: []string{p.ReturnURL}}
	if posted {
		v.Decline = "" // the errors below are about this attempt
	}
	for _, e := range errs {
		if in := f.fields[e.Field]; in != nil {
			in.Error = e.Message
			e.Linked = true
		}
		if e.Field == "consent" && f.Consent {
			f.ConsentError, e.Linked = e.Message, true
		}
		v.Errors = append(v.Errors, e)
	}
	pg.renderPage(w, r, status, v)
}

func customerField(c *instrument.Customer, field string) string {
	if c == nil {
		return ""
	}
	switch field {
	case "first_name":
		return c.FirstName
	case "last_name":
		return c.LastName
	case "email":
		return c.Email
	}
	if c.BillingAddress == nil {
		return ""
	}
	if field == "country" {
		return c.BillingAddress.Country
	}
	return c.BillingAddress.Line1
}

func lastFour(mask string) string {
	if len(mask) < 4 {
		return mask
	}
	return mask[len(mask)-4:]
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
