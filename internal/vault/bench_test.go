package vault

import "testing"

// BenchmarkSealOpen seals and opens a direct payment's card data as the
// payment service keeps it for the provider call (payment.Secret as JSON).
func BenchmarkSealOpen(b *testing.B) {
	k := New()
	card := []byte(`{"card":{"number":"5555555555554444","exp_month":12,"exp_year":2030,"cvv":"123"},"customer":{"email":"bench@example.com"}}`)
	aad := []byte("operation:01a20887-296c-78b6-8348-79e5e0d48914")
	sealed, err := k.Seal(card, aad)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.Seal(card, aad); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.Open(sealed, aad); err != nil {
				b.Fatal(err)
			}
		}
	})
}
