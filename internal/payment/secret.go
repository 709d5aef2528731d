package payment

import (
	"encoding/json"
	"fmt"

	"github.com/paygate/paygate/internal/provider"
)

// SecretVersion is the format of Secret written now. The JSON names of
// Secret and the types it holds ARE that format: secrets queued before a
// deploy are opened by the next version, so a name is never changed. A new
// field is added with omitempty; a change of meaning is a new version that
// decode reads beside the old one.
//
// Version 1 is the format of the first release, when the provider's own
// types were serialized without tags: hence the Go-style names of Card,
// Wallet and SecretCustomer. A secret of that release carries no "v".
const SecretVersion = 1

// Secret is what a payment operation must hand the provider and Paygate
// must not keep: sealed while the job waits, deleted once the provider
// has answered (docs/design/decisions.md section 8).
type Secret struct {
	Version  int             `json:"v,omitempty"`
	Card     *Card           `json:"card,omitempty"`
	Wallet   *Wallet         `json:"wallet,omitempty"`
	Phone    string          `json:"phone,omitempty"`
	Code     string          `json:"code,omitempty"`
	Customer *SecretCustomer `json:"customer,omitempty"`
}

// Card is raw card data, as the API and the hosted page take it. It lives
// only in memory and, sealed, in an operation's secret.
type Card struct {
	Number   string `json:"Number"`
	ExpMonth int    `json:"ExpMonth"`
	ExpYear  int    `json:"ExpYear"`
	CVV      string `json:"CVV"`
	Holder   string `json:"Holder"`
}

// Wallet is a wallet payment's payload (Apple Pay, Google Pay, Samsung Pay).
type Wallet struct {
	Type    string          `json:"Type"` // apple_pay, google_pay, samsung_pay
	Mode    string          `json:"Mode"` // token or direct
	Payload json.RawMessage `json:"Payload"`
}

// SecretCustomer is the card-holder data the provider receives; Country is
// ISO 3166-1 numeric.
type SecretCustomer struct {
	FirstName  string `json:"FirstName"`
	LastName   string `json:"LastName"`
	Email      string `json:"Email"`
	Phone      string `json:"Phone"`
	Country    string `json:"Country"`
	PostalCode string `json:"PostalCode"`
	Region     string `json:"Region"`
	City       string `json:"City"`
	Line1      string `json:"Line1"`
	Line2      string `json:"Line2"`
	Line3      string `json:"Line3"`
}

// decode reads a secret of any known version.
func (s *Secret) decode(raw []byte) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return err
	}
	if s.Version > SecretVersion {
		return fmt.Errorf("an operation secret of version %d, newer than this Paygate (%d)", s.Version, SecretVersion)
	}
	return nil
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

// Provider is the customer as the provider seam takes it.
func (c *SecretCustomer) Provider() *provider.Customer {
	if c == nil {
		return nil
	}
	return &provider.Customer{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone,
		Country: c.Country, PostalCode: c.PostalCode, Region: c.Region, City: c.City,
		Line1: c.Line1, Line2: c.Line2, Line3: c.Line3}
}
