package openapi

import "testing"

// BenchmarkDecode is the schema validation and decoding of a request body
// into its wire type, as internal/server does for every write.
func BenchmarkDecode(b *testing.B) {
	v, err := NewValidator()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, schema string
		body         string
		into         func() any
	}{
		{"session", "CreatePayment", `{"order_id":"bench","amount_minor":1999,"currency":"USD","description":"Benchmark tea"}`,
			func() any { return new(CreatePayment) }},
		{"direct", "DirectPayment", `{"order_id":"bench","amount_minor":1999,"currency":"USD","customer":{"email":"bench@example.com"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":2030,"cvv":"123"}}}`,
			func() any { return new(DirectPayment) }},
	} {
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f := v.Decode(c.schema, body, c.into()); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
