package checkout

import (
	"encoding/json"
	"net/http"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
)

// fieldError is a problem with one input of the page (Field is the form
// field's name), or with the submission as a whole.
type fieldError struct {
	Field, Message string
	Linked         bool // the page has an input of that name to link to
}

// readCheckoutForm reads the payment form (docs/design/decisions.md section 9
// field names) and checks what the domain does not: that the fields the
// chosen method needs are there and well formed. The domain checks the rest
// (Luhn, expiry, scheme rules, consent). Messages never repeat a submitted
// value.
func (pg *Pages) readCheckoutForm(r *http.Request, cs *checkoutSession) (payment.CheckoutForm, []fieldError) {
	// The rule for text of the API holds for the page (docs/api.md, "Text
	// and query strings"): what is kept is UTF-8 without NUL. A browser
	// never sends anything else, so the page names the field and stops.
	for _, name := range textInputs {
		if !openapi.ValidText(r.PostFormValue(name)) {
			return payment.CheckoutForm{}, []fieldError{{Field: name,
				Message: fieldLabels[name] + " contains characters that cannot be accepted."}}
		}
	}
	get := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	f := payment.CheckoutForm{
		Method: get("method"), Email: get("email"), FirstName: get("first_name"), LastName: get("last_name"),
		Country: strings.ToUpper(get("country")), Line1: get("line1"), Phone: get("phone"),
		Consent:      r.PostFormValue("consent") == "yes",
		AcceptHeader: r.Header.Get("Accept"), UserAgent: r.Header.Get("User-Agent"), PayerIP: pg.cfg.Proxies.ClientIP(r),
		Device: pg.deviceSnapshot(r.PostFormValue("device")),
	}
	if f.Method == "" {
		f.Method = payment.MethodCard
	}
	var errs []fieldError
	bad := func(field, msg string) { errs = append(errs, fieldError{Field: field, Message: msg}) }
	if !slices.Contains(pg.methods(cs.channel), f.Method) {
		bad("method", "Choose one of the payment methods shown.")
		return f, errs
	}
	switch f.Method {
	case payment.MethodCard:
		f.SavedCardID = get("saved_card_id")
		number := digitsOnly(r.PostFormValue("number"))
		if f.SavedCardID != "" {
			if number != "" {
				bad("saved_card_id", "You chose a saved card and typed a new one: choose “Use a new card” to pay with the card you typed.")
			}
			break
		}
		f.Number, f.CVV, f.Cardholder = number, get("cvv"), get("cardholder")
		if number == "" {
			bad("number", "Enter your card number.")
		}
		month, err := strconv.Atoi(get("expire_month"))
		if err != nil || month < 1 || month > 12 {
			bad("expire_month", "Enter the expiry month, 1 to 12.")
		}
		year, err := strconv.Atoi(get("expire_year"))
		if err != nil || year < 0 || (year >= 100 && year < 2000) || year > 9999 {
			bad("expire_year", "Enter the expiry year, e.g. "+strconv.Itoa(pg.now().Year()+2)+".")
		}
		f.ExpMonth, f.ExpYear = month, card.FullYear(year)
		if n := len(f.CVV); n < 3 || n > 4 || digitsOnly(f.CVV) != f.CVV {
			bad("cvv", "Enter the 3 or 4 digit security code.")
		}
		if len(f.Cardholder) > 100 {
			bad("cardholder", "Name on card must be at most 100 characters.")
		}
	case payment.MethodMobile:
		if f.Phone == "" {
			bad("phone", "Enter your phone number.")
		}
	default: // a sandbox wallet
		token := get("wallet_token")
		if !slices.Contains([]string{"sandbox_success", "sandbox_declined", "sandbox_3ds"}, token) {
			bad("wallet_token", "Choose what the sandbox wallet answers.")
		}
		f.Wallet, _ = json.Marshal(map[string]string{"token": token})
	}
	if f.Email != "" {
		if a, err := mail.ParseAddress(f.Email); err != nil || a.Address != f.Email || len(f.Email) > 254 {
			bad("email", "Enter an email address like name@example.com.")
		}
	}
	for _, c := range []struct {
		field, value string
		max          int
	}{{"first_name", f.FirstName, 100}, {"last_name", f.LastName, 100}, {"line1", f.Line1, 200}} {
		if len(c.value) > c.max {
			bad(c.field, fieldLabels[c.field]+" must be at most "+strconv.Itoa(c.max)+" characters.")
		}
	}
	if f.Country != "" && !country.Known(f.Country) {
		bad("country", "Choose your country.")
	}
	return f, errs
}

// deviceSnapshot keeps what the page's script gathered when it is a valid
// DeviceSnapshot (OpenAPI schema), and nothing otherwise: the snapshot helps
// the issuer, and a payment never fails for the lack of one.
func (pg *Pages) deviceSnapshot(raw string) []byte {
	if raw == "" {
		return nil
	}
	var d openapi.DeviceSnapshot
	if f := pg.validator.Decode("DeviceSnapshot", []byte(raw), &d); f != nil {
		return nil
	}
	d.AcceptHeader, d.UserAgent = nil, nil // the request's own headers are authoritative
	b, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return b
}

// textInputs are the inputs readCheckoutForm reads as text (the device
// snapshot is JSON, checked by Validator.Decode).
var textInputs = []string{"method", "email", "first_name", "last_name", "country", "line1", "phone",
	"saved_card_id", "number", "cvv", "cardholder", "expire_month", "expire_year", "wallet_token"}

// fieldLabels name the page's inputs in messages.
var fieldLabels = map[string]string{
	"number": "Card number", "expire_month": "Expiry month", "expire_year": "Expiry year", "cvv": "Security code",
	"cardholder": "Name on card", "email": "Email", "first_name": "First name", "last_name": "Last name",
	"country": "Country", "line1": "Billing address", "phone": "Phone number", "saved_card_id": "Saved card",
	"consent": "Consent", "method": "Payment method", "value": "Code", "wallet_token": "Wallet",
}

// pageError turns a domain refusal into a message on the page.
func pageError(f *fault.Error) fieldError {
	return fieldError{Field: f.Field, Message: pageMessage(f.Field, f.Message)}
}

// pageMessage makes an API-style message ("is required for a visa card")
// read as a sentence about the input ("First name is required for a Visa
// card.").
func pageMessage(field, msg string) string {
	msg = strings.NewReplacer("visa", "Visa", "mastercard", "Mastercard").Replace(msg)
	if label := fieldLabels[field]; label != "" && (strings.HasPrefix(msg, "is ") || strings.HasPrefix(msg, "must ")) {
		msg = label + " " + msg
	}
	if field == "number" && strings.Contains(msg, "not a valid card number") {
		msg = "Check the card number: it is not valid"
	}
	r := []rune(msg)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	msg = string(r)
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// digitsOnly drops everything but ASCII digits (spaces and dashes a payer
// types in a card number).
func digitsOnly(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= '0' && c <= '9' {
			return c
		}
		return -1
	}, s)
}

// countryCodes lists the assigned ISO 3166-1 alpha-2 codes, for the
// script that turns the country box into a list of names.
var countryCodes = func() string {
	var codes []string
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			if c := string([]rune{a, b}); country.Known(c) {
				codes = append(codes, c)
			}
		}
	}
	return strings.Join(codes, " ")
}()
