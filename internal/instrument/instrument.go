// Package instrument is what a payer pays with, or is paid to, shared by
// every resource that reaches a provider (payments, payouts): raw card data,
// a wallet payload, the card holder, and the rules on them that do not depend
// on the resource (the customer a card scheme needs, the return_url).
//
// The JSON names of Card, Wallet, Customer and SecretCustomer are formats at
// rest: a payment's or a payout's operation secret, and a payment's sealed
// customer, are opened by the next version after a deploy, so a name is
// never changed. Version 1 of the secrets is the format of the first
// release, when the provider's own types were serialized without tags: hence
// the Go-style names of Card, Wallet and SecretCustomer.
package instrument

import (
	"encoding/json"

	"github.com/paygate/paygate/internal/provider"
)

// Card is raw card data, as the API and the hosted page take it. It lives
// only in memory and, sealed, in an operation's secret
// (docs/design/decisions.md section 8).
type Card struct {
	Number   string `json:"Number"`
	ExpMonth int    `json:"ExpMonth"`
	ExpYear  int    `json:"ExpYear"`
	CVV      string `json:"CVV"`
	Holder   string `json:"Holder"`
}

// Wallet is a wallet's payload (Apple Pay, Google Pay, Samsung Pay).
type Wallet struct {
	Type    string          `json:"Type"` // apple_pay, google_pay, samsung_pay
	Mode    string          `json:"Mode"` // token or direct
	Payload json.RawMessage `json:"Payload"`
}

// Provider is the card as the provider seam takes it.
func (c *Card) Provider() *provider.Card {
	if c == nil {
		return nil
	}
	return &provider.Card{Number: c.Number, ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, CVV: c.CVV, Holder: c.Holder}
}

// Provider is the wallet as the provider seam takes it.
func (w *Wallet) Provider() *provider.Wallet {
	if w == nil {
		return nil
	}
	return &provider.Wallet{Type: w.Type, Mode: w.Mode, Payload: w.Payload}
}
