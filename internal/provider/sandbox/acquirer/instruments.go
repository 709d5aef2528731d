package acquirer

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/card"

	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// behaviour is what a test instrument does (docs/design/decisions.md section
// 7 and docs/sandbox.md). It is kept on the resource instead of the card
// number.
type behaviour struct {
	Challenge  bool   `json:"challenge,omitempty"`  // a 3DS challenge first
	OTP        bool   `json:"otp,omitempty"`        // a one-time code first (mobile)
	Decline    string `json:"decline,omitempty"`    // declined with this code (after any challenge)
	Fail       bool   `json:"fail,omitempty"`       // the provider fails: status failed
	Unreadable int    `json:"unreadable,omitempty"` // status queries answered unreadable (the first answer is too)
	Late       bool   `json:"late,omitempty"`       // the first answer is withheld; the operation is done
	ShortHold  bool   `json:"short_hold,omitempty"` // an authorization expires after Config.ShortHoldTTL
	// Later is the decline of every later charge of the card's token
	// (a subscription's charges: docs/design/decisions.md section 11);
	// the first payment, which saves it, pays.
	Later string `json:"later,omitempty"`
}

// testCards: any expiry in the future, any CVV. Any other number that
// passes Luhn succeeds; one that fails it is declined invalid_card_number.
var testCards = map[string]behaviour{
	"4242424242424242": {},
	"5555555555554444": {},
	"378282246310005":  {},
	"4000000000003220": {Challenge: true},
	"4000008400001629": {Challenge: true, Decline: wire.CodeCardDeclined},
	"4000000000000002": {Decline: wire.CodeCardDeclined},
	"4000000000009995": {Decline: wire.CodeInsufficientFunds},
	"4000000000000069": {Decline: wire.CodeExpiredCard},
	"4000000000000127": {Decline: wire.CodeIncorrectCVC},
	"4000000000000119": {Fail: true},
	"4000000000000259": {Unreadable: 2},
	"4000000000000341": {Late: true},
	"4000000000000077": {ShortHold: true},
	"4000000000005001": {Later: wire.CodeInsufficientFunds}, // soft: a subscription goes past_due
	"4000000000001232": {Later: wire.CodeAccountClosed},     // hard: a subscription is canceled at once
}

// testWallets are keyed by the payload's "token".
var testWallets = map[string]behaviour{
	"sandbox_success":  {},
	"sandbox_declined": {Decline: wire.CodeCardDeclined},
	"sandbox_3ds":      {Challenge: true},
}

// testPhones; any other phone number behaves like the first.
var testPhones = map[string]behaviour{
	"+12025550100": {OTP: true},
	"+12025550101": {Decline: wire.CodeDoNotHonor},
}

// rightCode is the one-time code that passes (mobile, payouts, 3DS by code).
const rightCode = "123456"

// maxVerifyAttempts is how many codes a verification accepts.
const maxVerifyAttempts = 3

// verificationHoldMinor is the sum a card verification blocks.
const verificationHoldMinor = 100

var (
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	phoneRe    = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)
)

// instrument is a resolved payment method: what to show and how it behaves.
type instrument struct {
	method string // card, wallet, mobile, token
	card   *wire.CardView
	behave behaviour
}

// resolve reads a payment method. A request the sandbox cannot act on is an
// error answer; a card it can act on but refuses (expired, bad number) is a
// behaviour that declines.
func (s *Server) resolve(m wire.Method, field string) (instrument, *answer) {
	fail := func(a answer) (instrument, *answer) { return instrument{}, &a }
	switch m.Type {
	case "card":
		if m.Card == nil {
			return fail(invalid(field+".card", "card is required"))
		}
		return s.resolveCard(*m.Card, field+".card")
	case "wallet":
		w := m.Wallet
		if w == nil {
			return fail(invalid(field+".wallet", "wallet is required"))
		}
		switch w.Type {
		case "apple_pay", "google_pay", "samsung_pay":
		default:
			return fail(invalid(field+".wallet.type", "unknown wallet type"))
		}
		if w.Mode != "token" && w.Mode != "direct" {
			return fail(invalid(field+".wallet.mode", "mode is token or direct"))
		}
		var p struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(w.Payload, &p) // not JSON: no token, refused below
		b, ok := testWallets[p.Token]
		if !ok {
			return fail(fieldError(http.StatusUnprocessableEntity, "invalid_wallet_payload",
				"the wallet payload is not one the sandbox accepts", field+".wallet.payload"))
		}
		return instrument{method: "wallet", behave: b}, nil
	case "mobile":
		if !phoneRe.MatchString(m.Phone) {
			return fail(invalid(field+".phone", "phone must be E.164"))
		}
		b, ok := testPhones[m.Phone]
		if !ok {
			b = behaviour{OTP: true}
		}
		return instrument{method: "mobile", behave: b}, nil
	case "token":
		t := s.st.Tokens[m.Token]
		if t == nil {
			return fail(fieldError(http.StatusUnprocessableEntity, "token_not_found",
				"no such card token", field+".token"))
		}
		c := t.Card
		b := t.Behaviour
		if expired(c.ExpMonth, c.ExpYear, s.now()) {
			b = behaviour{Decline: wire.CodeExpiredCard}
		}
		return instrument{method: "token", card: &c, behave: b}, nil
	}
	return fail(invalid(field+".type", "type is card, wallet, mobile or token"))
}

func (s *Server) resolveCard(c wire.Card, field string) (instrument, *answer) {
	fail := func(a answer) (instrument, *answer) { return instrument{}, &a }
	number := c.Number
	if len(number) < 12 || len(number) > 19 || !card.Digits(number) {
		return fail(invalid(field+".number", "number must be 12 to 19 digits"))
	}
	if c.ExpMonth < 1 || c.ExpMonth > 12 {
		return fail(invalid(field+".exp_month", "exp_month must be 1 to 12"))
	}
	year := card.FullYear(c.ExpYear)
	if year < 2000 || year > 2100 {
		return fail(invalid(field+".exp_year", "exp_year is not a year"))
	}
	if c.CVV != "" && (len(c.CVV) < 3 || len(c.CVV) > 4 || !card.Digits(c.CVV)) {
		return fail(invalid(field+".cvv", "cvv must be 3 or 4 digits"))
	}
	v := &wire.CardView{Mask: card.Mask(number), Last4: card.Last4(number), Scheme: card.Scheme(number),
		ExpMonth: c.ExpMonth, ExpYear: year}
	b, ok := testCards[number]
	switch {
	case !card.Luhn(number):
		b = behaviour{Decline: wire.CodeInvalidNumber}
	case expired(c.ExpMonth, year, s.now()):
		b = behaviour{Decline: wire.CodeExpiredCard}
	case !ok:
		b = behaviour{}
	}
	return instrument{method: "card", card: v, behave: b}, nil
}

// expired: a card is good through the last day of its expiry month.
func expired(month, year int, now time.Time) bool {
	y, m := now.Year(), int(now.Month())
	return year < y || (year == y && month < m)
}

// savedCard is a card token's card (masked) and behaviour. A saved card
// pays without 3DS (merchant-initiated), and never late or unreadable.
type savedCard struct {
	Token     string        `json:"token"`
	Card      wire.CardView `json:"card"`
	Behaviour behaviour     `json:"behaviour"`
}

// binRow is one row of the BIN table: requests whose BIN starts with
// prefix get its data (the longest prefix wins). The scheme comes from
// internal/card unless the row names one.
type binRow struct {
	prefix, scheme                                string
	kind, level, issuer, country, code, site, tel string
}

// testBINs: the rows for the test cards' BINs say what Paygate's default
// BIN base says of them (docs/bins.md), so the two sources never disagree;
// 990001 is outside every scheme's range, so Paygate's base does not cover
// it and asks the sandbox (source "provider").
var testBINs = []binRow{
	{"42424242", "", "credit", "platinum", "Paygate Sandbox Bank", "United States", "US", usSite, usTel},
	{"424242", "", "credit", "classic", "Paygate Sandbox Bank", "United States", "US", usSite, usTel},
	{"55555555", "", "debit", "world", "Paygate Sandbox Bank", "United States", "US", usSite, usTel},
	{"555555", "", "debit", "standard", "Paygate Sandbox Bank", "United States", "US", usSite, usTel},
	{"40000000", "", "debit", "classic", "Paygate Sandbox Bank (test scenarios)", "United States", "US", usSite, usTel},
	{"400000", "", "debit", "classic", "Paygate Sandbox Bank", "United States", "US", usSite, usTel},
	{"4000", "", "debit", "classic", "Paygate Sandbox Bank (test scenarios)", "United States", "US", usSite, usTel},
	{"510510", "", "debit", "standard", "Sandbox Credit Union", "Canada", "CA", "https://cu.sandbox.example", "+1 613 555 0187"},
	{"378282", "", "credit", "gold", "Sandbox Charge Card Co", "United States", "US", "https://charge.sandbox.example", "+1 202 555 0175"},
	{"220000", "", "debit", "classic", "Sandbox Bank RU", "Russia", "RU", "https://ru.bank.sandbox.example", "+7 495 555 0100"},
	{"22000001", "", "debit", "premium", "Sandbox Bank UA", "Ukraine", "UA", "https://ua.bank.sandbox.example", "+380 44 555 0100"},
	{"990001", "private_label", "prepaid", "gift", "Sandbox Gift Cards", "Ireland", "IE", "https://gift.sandbox.example", "+353 1 555 0100"},
}

const (
	usSite = "https://bank.sandbox.example"
	usTel  = "+1 202 555 0100"
)

// lookupBIN finds the longest row that prefixes bin.
func lookupBIN(bin string) (wire.BINView, bool) {
	var best *binRow
	for i := range testBINs {
		r := &testBINs[i]
		if strings.HasPrefix(bin, r.prefix) && (best == nil || len(r.prefix) > len(best.prefix)) {
			best = r
		}
	}
	if best == nil {
		return wire.BINView{}, false
	}
	scheme := best.scheme
	if scheme == "" {
		scheme = card.Scheme(bin)
	}
	return wire.BINView{Object: "bin", BIN: bin, Scheme: scheme, Type: best.kind, Level: best.level,
		Issuer: best.issuer, Country: best.country, CountryCode: best.code,
		IssuerWebsite: best.site, IssuerPhone: best.tel}, true
}

// issuerName is the bank named in a bank reference.
func issuerName(c *wire.CardView) string {
	if c != nil && len(c.Mask) >= 6 {
		if v, ok := lookupBIN(c.Mask[:6]); ok {
			return v.Issuer
		}
	}
	return "Sandbox Bank"
}

func (s *Server) getBIN(r *http.Request, _ *call) answer {
	bin := r.PathValue("bin")
	if (len(bin) != 6 && len(bin) != 8) || !card.Digits(bin) {
		return invalid("bin", "a BIN is 6 or 8 digits")
	}
	v, ok := lookupBIN(bin)
	if !ok {
		return errAnswer(http.StatusNotFound, "bin_not_found", "unknown BIN")
	}
	return jsonAnswer(http.StatusOK, v, ref{})
}
