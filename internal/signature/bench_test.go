package signature

import (
	"strconv"
	"testing"
	"time"
)

// benchBody is a direct payment's body, the largest a request usually signs.
var benchBody = []byte(`{"order_id":"bench","amount_minor":1999,"currency":"USD","customer":{"email":"bench@example.com"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":2030,"cvv":"123"}}}`)

// BenchmarkSign is the client's side of a request: canonical string, HMAC.
func BenchmarkSign(b *testing.B) {
	const secret = "sk_sandbox_0123456789abcdef0123456789abcdef"
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	nonce := NewNonce()
	b.ReportAllocs()
	for b.Loop() {
		Sign(secret, Canonical("POST", "/api/v1/payments/direct", "ak_sandbox_0123456789abcdef", ts, nonce, benchBody))
	}
}

// BenchmarkVerify is what the server does for every request before any
// database: check nonce and timestamp, build the canonical string, compare
// the HMAC (internal/server/auth.go).
func BenchmarkVerify(b *testing.B) {
	const secret = "sk_sandbox_0123456789abcdef0123456789abcdef"
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	nonce := NewNonce()
	sig := Sign(secret, Canonical("POST", "/api/v1/payments/direct", "ak_sandbox_0123456789abcdef", ts, nonce, benchBody))
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		inRange, _ := CheckTimestamp(ts, now)
		if !ValidNonce(nonce) || !inRange ||
			!Verify(secret, Canonical("POST", "/api/v1/payments/direct", "ak_sandbox_0123456789abcdef", ts, nonce, benchBody), sig) {
			b.Fatal("the signature does not verify")
		}
	}
}
