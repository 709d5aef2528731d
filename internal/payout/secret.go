package payout

import (
	"encoding/json"
	"fmt"

	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
)

// SecretVersion is the format of Secret written now. The JSON names below
// ARE that format: a secret queued before a deploy is opened by the next
// version, so a name is never changed; a new field is added with
// omitempty, a change of meaning is a new version.
const SecretVersion = 1

// Secret is what a payout operation hands the provider and Paygate must
// not keep: the destination card, the wallet payload, the customer's data
// and a one-time code. It is sealed while the job waits and deleted once
// the provider has answered (docs/design/decisions.md section 8).
type Secret struct {
	Version  int               `json:"v"`
	Card     *Card             `json:"card,omitempty"`
	Wallet   *Wallet           `json:"wallet,omitempty"`
	Code     string            `json:"code,omitempty"`
	Customer *payment.Customer `json:"customer,omitempty"`
}

// Card is the destination card as the API takes it (schema PayoutCard).
type Card struct {
	Number   string `json:"number"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	CVV      string `json:"cvv,omitempty"`
	Holder   string `json:"holder,omitempty"`
}

// Wallet is a wallet destination's payload, passed on untouched.
type Wallet struct {
	Type    string          `json:"type"`
	Mode    string          `json:"mode"`
	Payload json.RawMessage `json:"payload"`
}

// decode reads a secret of any known version.
func (s *Secret) decode(raw []byte) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return err
	}
	if s.Version > SecretVersion {
		return fmt.Errorf("a payout secret of version %d, newer than this Paygate (%d)", s.Version, SecretVersion)
	}
	return nil
}

func (c *Card) provider() *provider.Card {
	if c == nil {
		return nil
	}
	return &provider.Card{Number: c.Number, ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, CVV: c.CVV, Holder: c.Holder}
}

func (w *Wallet) provider() *provider.Wallet {
	if w == nil {
		return nil
	}
	return &provider.Wallet{Type: w.Type, Mode: w.Mode, Payload: w.Payload}
}

// providerCustomer is the customer for the provider, the country as ISO
// 3166-1 numeric (client API).
func providerCustomer(c *payment.Customer) *provider.Customer {
	if c == nil {
		return nil
	}
	out := &provider.Customer{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone}
	if a := c.BillingAddress; a != nil {
		out.Country, _ = country.Numeric(a.Country)
		out.PostalCode, out.Region, out.City, out.Line1 = a.PostalCode, a.Region, a.City, a.Line1
		if a.Line2 != nil {
			out.Line2 = *a.Line2
		}
		if a.Line3 != nil {
			out.Line3 = *a.Line3
		}
	}
	return out
}
