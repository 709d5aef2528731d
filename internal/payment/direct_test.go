package payment

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/instrument"
)

func TestNormalizePhone(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"+12025550100", "+12025550100", true},
		{"+1 (202) 555-0100", "+12025550100", true},
		{"+44 20 7946 0000", "+442079460000", true},
		{"12025550100", "12025550100", false},      // the plus is never assumed
		{"+0 202 555 0100", "+02025550100", false}, // no country code 0
		{"+1234567", "+1234567", false},            // 7 digits: too short
		{"+1234567890123456", "+1234567890123456", false},
		{"+1.202.555.0100", "+1.202.555.0100", false}, // dots are not stripped
	} {
		got, ok := NormalizePhone(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDirectCheck(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	visaCustomer := &instrument.Customer{FirstName: "A", LastName: "B", Email: "a@b.example",
		BillingAddress: &instrument.BillingAddress{Country: "GB", Line1: "1 St"}}
	cardPayment := func(number string, month, year int, c *instrument.Customer) NewDirect {
		return NewDirect{NewSession: NewSession{Currency: "USD", Customer: c}, Method: MethodCard,
			Card: &instrument.Card{Number: number, ExpMonth: month, ExpYear: year}}
	}
	for name, tc := range map[string]struct {
		in    NewDirect
		field string // "" for no error
	}{
		"visa complete":              {cardPayment("4242424242424242", 12, 2027, visaCustomer), ""},
		"visa without customer":      {cardPayment("4242424242424242", 12, 2027, nil), "customer.first_name"},
		"visa without line1":         {cardPayment("4242424242424242", 12, 2027, &instrument.Customer{FirstName: "A", LastName: "B", Email: "e@x.example", BillingAddress: &instrument.BillingAddress{Country: "GB"}}), "customer.billing_address.line1"},
		"mastercard with email only": {cardPayment("5555555555554444", 12, 2027, &instrument.Customer{Email: "e@x.example"}), ""},
		"mastercard without email":   {cardPayment("5555555555554444", 12, 2027, nil), "customer.email"},
		"amex needs nothing":         {cardPayment("378282246310005", 12, 2027, nil), ""},
		"this month is still valid":  {cardPayment("378282246310005", 11, 2026, nil), ""},
		"last month has expired":     {cardPayment("378282246310005", 10, 2026, nil), "payment_method.card.expire_year"},
		"luhn":                       {cardPayment("4242424242424241", 12, 2027, visaCustomer), "payment_method.card.number"},
		"wallet needs a payload":     {NewDirect{NewSession: NewSession{Currency: "USD"}, Method: MethodApplePay}, "payment_method.wallet"},
		"card needs a card":          {NewDirect{NewSession: NewSession{Currency: "USD"}, Method: MethodCard}, "payment_method.card"},
		"mobile phone":               {NewDirect{NewSession: NewSession{Currency: "USD"}, Method: MethodMobile, Phone: "555"}, "payment_method.mobile.phone"},
		"unknown currency":           {NewDirect{NewSession: NewSession{Currency: "ZZZ"}, Method: MethodMobile, Phone: "+12025550100"}, "currency"},
	} {
		t.Run(name, func(t *testing.T) {
			f := tc.in.Check(now)
			switch {
			case tc.field == "" && f != nil:
				t.Fatalf("unexpected %v", f)
			case tc.field != "" && (f == nil || f.Field != tc.field):
				t.Fatalf("got %v, want an error on %s", f, tc.field)
			}
		})
	}
}
