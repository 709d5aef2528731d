package sandbox

import (
	"encoding/json"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// How the adapter reads the sandbox's answers: status words through tables,
// decline messages written here. An answer with a status the tables do not
// know is Unreadable, never guessed.

var paymentStatuses = map[string]provider.Status{
	wire.StatusSucceeded:      provider.StatusSucceeded,
	wire.StatusAuthorized:     provider.StatusAuthorized,
	wire.StatusRequiresAction: provider.StatusRequiresAction,
	wire.StatusDeclined:       provider.StatusDeclined,
	wire.StatusFailed:         provider.StatusFailed,
	wire.StatusCanceled:       provider.StatusCanceled,
	// An expired hold is a released hold; AuthorizationExpiresAt (in the
	// past) tells it from a cancel. provider.Status has no "expired".
	wire.StatusExpired: provider.StatusCanceled,
	"pending":          provider.StatusPending,
}

var verificationStatuses = map[string]provider.Status{
	wire.StatusCodeSent: provider.StatusCodeSent,
	wire.StatusVerified: provider.StatusSucceeded,
	wire.StatusDeclined: provider.StatusDeclined,
	wire.StatusFailed:   provider.StatusFailed,
}

var payoutStatuses = map[string]provider.Status{
	wire.StatusSucceeded:      provider.StatusSucceeded,
	wire.StatusRequiresAction: provider.StatusRequiresAction,
	wire.StatusDeclined:       provider.StatusDeclined,
	wire.StatusFailed:         provider.StatusFailed,
	"pending":                 provider.StatusPending,
}

// declineMessages are payer-safe texts by decline code, written by Paygate:
// the sandbox's own text is an acquirer's, never shown to a payer.
var declineMessages = map[string]string{
	wire.CodeCardDeclined:         "Your card was declined. Please use another card or contact your bank.",
	wire.CodeInsufficientFunds:    "There are not enough funds on the card.",
	wire.CodeExpiredCard:          "The card has expired.",
	wire.CodeIncorrectCVC:         "The card's security code is incorrect.",
	wire.CodeInvalidNumber:        "The card number is not valid.",
	wire.CodeAuthenticationFailed: "The payment could not be confirmed.",
	wire.CodeProcessingError:      "The payment could not be processed. Please try again later.",
	wire.CodeDoNotHonor:           "The payment was declined by the account provider.",
	"session_expired":             "The payment page expired before the payment was made.",
}

// decline returns a decline code as the adapter passes it on (a machine
// word, or "declined" for anything else) and the payer's message for it.
func decline(d *wire.DeclineView) (code, message string) {
	if d == nil {
		return "", ""
	}
	code = d.Code
	if !codeRe.MatchString(code) {
		code = "declined"
	}
	message, ok := declineMessages[code]
	if !ok {
		message = "The payment was declined."
	}
	return code, message
}

func bankRef(b *wire.BankRefView) *provider.BankReference {
	if b == nil {
		return nil
	}
	return &provider.BankReference{PaymentID: b.PaymentID, Name: b.Name}
}

func payResult(v wire.PaymentView) (provider.PayResult, error) {
	st, ok := paymentStatuses[v.Status]
	if !ok || v.Object != "payment" || v.ID == "" {
		return provider.PayResult{}, unreadable("payment")
	}
	res := provider.PayResult{Status: st, ProviderID: v.ID, CardToken: v.CardToken,
		AuthorizationExpiresAt: v.AuthorizationExpiresAt, CapturedAmountMinor: v.CapturedAmountMinor,
		RefundedAmountMinor: v.RefundedAmountMinor, BankReference: bankRef(v.BankReference)}
	res.DeclineCode, res.DeclineMessage = decline(v.Decline)
	// The sandbox's one decline another acquirer may not share
	// (docs/design/decisions.md section 17: its reroute table).
	res.Reroutable = (st == provider.StatusDeclined || st == provider.StatusFailed) && res.DeclineCode == "processing_error"
	if v.NextAction != nil {
		res.NextAction = &provider.NextAction{Type: v.NextAction.Type, URL: v.NextAction.URL}
	}
	if st == provider.StatusRequiresAction && res.NextAction == nil {
		return provider.PayResult{}, unreadable("payment")
	}
	if v.Card != nil {
		res.CardScheme, res.CardExpMonth, res.CardExpYear = v.Card.Scheme, v.Card.ExpMonth, v.Card.ExpYear
	}
	return res, nil
}

// sessionResult: a paid session is its payment; an open one is pending
// (the payer has not paid yet); an expired one failed.
func sessionResult(v wire.SessionView) (provider.PayResult, error) {
	switch {
	case v.Payment != nil:
		return payResult(*v.Payment)
	case v.ID == "":
		return provider.PayResult{}, unreadable("hosted session")
	case v.Status == wire.StatusOpen:
		return provider.PayResult{Status: provider.StatusPending, ProviderID: v.ID}, nil
	case v.Status == wire.StatusExpired:
		res := provider.PayResult{Status: provider.StatusFailed, ProviderID: v.ID}
		res.DeclineCode, res.DeclineMessage = decline(&wire.DeclineView{Code: "session_expired"})
		return res, nil
	}
	return provider.PayResult{}, unreadable("hosted session")
}

func verificationResult(v wire.VerificationView) (provider.VerificationResult, error) {
	st, ok := verificationStatuses[v.Status]
	if !ok || v.Object != "verification" || v.ID == "" {
		return provider.VerificationResult{}, unreadable("verification")
	}
	code, _ := decline(v.Decline)
	return provider.VerificationResult{Status: st, ProviderID: v.ID, Attempts: v.Attempts,
		DeclineCode: code, BankReference: bankRef(v.BankReference)}, nil
}

func payoutResult(v wire.PayoutView) (provider.PayoutResult, error) {
	st, ok := payoutStatuses[v.Status]
	if !ok || v.Object != "payout" || v.ID == "" {
		return provider.PayoutResult{}, unreadable("payout")
	}
	res := provider.PayoutResult{Status: st, ProviderID: v.ID, BankReference: bankRef(v.BankReference)}
	res.DeclineCode, _ = decline(v.Decline)
	if v.NextAction != nil {
		res.NextAction = &provider.NextAction{Type: v.NextAction.Type, URL: v.NextAction.URL}
	}
	if st == provider.StatusRequiresAction && res.NextAction == nil {
		return provider.PayoutResult{}, unreadable("payout")
	}
	return res, nil
}

// wireMethodOf turns an instrument into the sandbox's payment method, with
// the capability it needs beyond charge, authorize or debit.
func wireMethodOf(in provider.Instrument) (wire.Method, provider.Capability, error) {
	n := 0
	for _, set := range []bool{in.Card != nil, in.Wallet != nil, in.Phone != "", in.SavedToken != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return wire.Method{}, "", provider.Errorf(provider.Invalid, "exactly one instrument is required, got %d", n)
	}
	switch {
	case in.Card != nil:
		c := wireCardOf(*in.Card)
		return wire.Method{Type: "card", Card: &c}, "", nil
	case in.Wallet != nil:
		w := in.Wallet
		mode, need := "token", provider.WalletToken
		switch w.Mode {
		case "", "token":
		case "direct":
			mode, need = "direct", provider.WalletDirect
		default:
			return wire.Method{}, "", provider.Errorf(provider.Invalid, "wallet mode is token or direct")
		}
		if !json.Valid(w.Payload) {
			return wire.Method{}, "", provider.Errorf(provider.Invalid, "the wallet payload is not JSON")
		}
		return wire.Method{Type: "wallet", Wallet: &wire.Wallet{Type: w.Type, Mode: mode, Payload: w.Payload}}, need, nil
	case in.Phone != "":
		return wire.Method{Type: "mobile", Phone: in.Phone}, provider.Mobile, nil
	}
	return wire.Method{Type: "token", Token: in.SavedToken}, provider.SavedCards, nil
}

func wireCardOf(c provider.Card) wire.Card {
	return wire.Card{Number: c.Number, ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, CVV: c.CVV, Holder: c.Holder}
}

func wireCustomerOf(c *provider.Customer) *wire.Customer {
	if c == nil {
		return nil
	}
	return &wire.Customer{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone,
		Country: c.Country, PostalCode: c.PostalCode, Region: c.Region, City: c.City,
		Line1: c.Line1, Line2: c.Line2, Line3: c.Line3}
}

func wireBrowserOf(b *provider.Browser) *wire.Browser {
	if b == nil {
		return nil
	}
	return &wire.Browser{IP: b.IP, Accept: b.AcceptHeader, UserAgent: b.UserAgent, Snapshot: b.Snapshot}
}
