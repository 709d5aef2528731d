package instrument

import (
	"encoding/json"
	"testing"
)

// TestFormatAtRest pins the JSON names of the types that operation secrets
// and a payment's sealed customer hold: a secret queued before a deploy is
// opened by the next version, so these bytes never change (the package
// comment).
func TestFormatAtRest(t *testing.T) {
	line2 := "Flat 2"
	cust := &Customer{FirstName: "A", LastName: "B", Email: "a@b.example", Phone: "+441234567890",
		BillingAddress: &BillingAddress{Country: "GB", PostalCode: "N1", Region: "L", City: "London", Line1: "1 St", Line2: &line2}}
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"card", &Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVV: "123", Holder: "A B"},
			`{"Number":"4242424242424242","ExpMonth":12,"ExpYear":2030,"CVV":"123","Holder":"A B"}`},
		{"wallet", &Wallet{Type: "apple_pay", Mode: "token", Payload: json.RawMessage(`{"x":1}`)},
			`{"Type":"apple_pay","Mode":"token","Payload":{"x":1}}`},
		{"customer", cust,
			`{"first_name":"A","last_name":"B","email":"a@b.example","phone":"+441234567890","billing_address":{"country":"GB","postal_code":"N1","region":"L","city":"London","line1":"1 St","line2":"Flat 2"}}`},
		{"secret customer", SecretCustomerOf(cust),
			`{"FirstName":"A","LastName":"B","Email":"a@b.example","Phone":"+441234567890","Country":"826","PostalCode":"N1","Region":"L","City":"London","Line1":"1 St","Line2":"Flat 2","Line3":""}`},
		{"no customer", SecretCustomerOf(nil), `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSchemeRules(t *testing.T) {
	visa := &Customer{FirstName: "A", LastName: "B", Email: "a@b.example",
		BillingAddress: &BillingAddress{Country: "GB", Line1: "1 St"}}
	for _, tc := range []struct {
		name, scheme string
		c            *Customer
		field        string // the field refused; empty: accepted
	}{
		{"visa, all given", "visa", visa, ""},
		{"visa, no customer", "visa", nil, "customer.first_name"},
		{"visa, blank line1", "visa", &Customer{FirstName: "A", LastName: "B", Email: "e@x.example",
			BillingAddress: &BillingAddress{Country: "GB", Line1: "  "}}, "customer.billing_address.line1"},
		{"mastercard, email only", "mastercard", &Customer{Email: "e@x.example"}, ""},
		{"mastercard, no email", "mastercard", &Customer{FirstName: "A"}, "customer.email"},
		{"other scheme, nothing", "mir", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := SchemeRules(tc.scheme, tc.c)
			switch {
			case tc.field == "" && f != nil:
				t.Errorf("refused: %v", f)
			case tc.field != "" && (f == nil || f.Field != tc.field || f.Code != "validation_error"):
				t.Errorf("got %v, want validation_error on %s", f, tc.field)
			}
		})
	}
}
