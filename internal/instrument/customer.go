package instrument

import (
	"strings"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/provider"
)

// Customer is the card-holder data a merchant may send. A payment keeps it
// sealed: names are also kept in clear because the Payment answer shows
// them.
type Customer struct {
	FirstName      string          `json:"first_name,omitempty"`
	LastName       string          `json:"last_name,omitempty"`
	Email          string          `json:"email,omitempty"`
	Phone          string          `json:"phone,omitempty"`
	BillingAddress *BillingAddress `json:"billing_address,omitempty"`
}

// BillingAddress is the payer's billing address.
type BillingAddress struct {
	Country    string  `json:"country,omitempty"`
	PostalCode string  `json:"postal_code,omitempty"`
	Region     string  `json:"region,omitempty"`
	City       string  `json:"city,omitempty"`
	Line1      string  `json:"line1,omitempty"`
	Line2      *string `json:"line2,omitempty"`
	Line3      *string `json:"line3,omitempty"`
}

// SecretCustomer is the card-holder data the provider receives, kept in an
// operation's secret; Country is ISO 3166-1 numeric.
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

// SecretCustomerOf is the customer data a provider receives (country as
// ISO 3166-1 numeric); nil for no customer.
func SecretCustomerOf(c *Customer) *SecretCustomer {
	if c == nil {
		return nil
	}
	out := &SecretCustomer{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone}
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

// Provider is the customer as the provider seam takes it.
func (c *SecretCustomer) Provider() *provider.Customer {
	if c == nil {
		return nil
	}
	return &provider.Customer{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone,
		Country: c.Country, PostalCode: c.PostalCode, Region: c.Region, City: c.City,
		Line1: c.Line1, Line2: c.Line2, Line3: c.Line3}
}

// SchemeRules are the customer requirements by card scheme (client API:
// Mastercard needs email; Visa needs names, email, country and line1), for a
// payment by card and a payout to one alike.
func SchemeRules(scheme string, c *Customer) *fault.Error {
	var need []string
	get := func(field string) string {
		if c == nil {
			return ""
		}
		a := c.BillingAddress
		switch field {
		case "customer.first_name":
			return c.FirstName
		case "customer.last_name":
			return c.LastName
		case "customer.email":
			return c.Email
		case "customer.billing_address.country":
			if a != nil {
				return a.Country
			}
		case "customer.billing_address.line1":
			if a != nil {
				return a.Line1
			}
		}
		return ""
	}
	switch scheme {
	case card.Mastercard:
		need = []string{"customer.email"}
	case card.Visa:
		need = []string{"customer.first_name", "customer.last_name", "customer.email",
			"customer.billing_address.country", "customer.billing_address.line1"}
	}
	for _, f := range need {
		if strings.TrimSpace(get(f)) == "" {
			return fault.OnField(fault.ValidationError, f, "is required for a "+scheme+" card")
		}
	}
	return nil
}
