// Package signature implements Paygate's HMAC request signing
// (docs/design/decisions.md section 1). The server verifies with it and the
// Go client signs with it, so both sides build the canonical string from the
// same code.
//
// The merchant-facing description, with a worked example and snippets in
// other languages, is docs/signing.md; the vectors in testdata/vectors.json
// are the ones it quotes.
package signature

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
)

// The request headers that carry a signature (client API, Authentication
// rule 1). Every endpoint but GET /health needs all four.
const (
	HeaderAccessKey = "X-Access-Key"
	HeaderTimestamp = "X-Timestamp"
	HeaderNonce     = "X-Nonce"
	HeaderSignature = "X-Signature"
)

// MaxSkew is the clock skew tolerated between the X-Timestamp value and the
// server's clock, in either direction, bounds included
// (docs/design/decisions.md section 1).
const MaxSkew = 300 * time.Second

// NonceRetention is how long a nonce stays single-use per access key
// (docs/design/decisions.md section 1: "at least 600 s"). It is twice
// MaxSkew, so a request can never be replayed inside its timestamp window
// once its nonce has been forgotten.
const NonceRetention = 600 * time.Second

// The bounds of an X-Nonce value (docs/design/decisions.md section 1).
const (
	MinNonceLen = 16
	MaxNonceLen = 128
)

// Canonical returns the string a request's signature covers: six lines
// joined by "\n", with no trailing newline (docs/design/decisions.md section
// 1):
//
//  1. the method, upper case
//  2. the request target exactly as sent: path, plus "?" and the query
//     string when there is one
//  3. the X-Access-Key value
//  4. the X-Timestamp value
//  5. the X-Nonce value
//  6. the lower-case hex SHA-256 of the raw body bytes (of "" when there is
//     no body)
//
// Values are used as given; checking them (ValidNonce, CheckTimestamp) is
// the caller's job. HTTP header values and request targets cannot hold a
// newline, so the six lines cannot be confused with one another.
func Canonical(method, target, accessKey, timestamp, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.Join([]string{
		strings.ToUpper(method),
		target,
		accessKey,
		timestamp,
		nonce,
		hex.EncodeToString(sum[:]),
	}, "\n")
}

// Sign returns the X-Signature value for a canonical string: standard base64
// with padding of HMAC-SHA256 keyed with the UTF-8 bytes of the whole secret,
// its "sk_" prefix included (docs/design/decisions.md section 1).
func Sign(secret, canonical string) string {
	return base64.StdEncoding.EncodeToString(mac(secret, canonical))
}

// Verify reports whether signature is the X-Signature value for canonical
// under secret. The MACs are compared in constant time
// (docs/design/decisions.md section 1). A value that is not standard padded
// base64, exactly as Sign writes it, is simply false: no other spelling of
// the same bytes is accepted.
func Verify(secret, canonical, signature string) bool {
	got, err := base64.StdEncoding.Strict().DecodeString(signature)
	if err != nil || base64.StdEncoding.EncodeToString(got) != signature {
		// The re-encoding check refuses what the decoder tolerates (line
		// breaks); it compares the caller's own bytes, so it leaks nothing.
		return false
	}
	return hmac.Equal(got, mac(secret, canonical))
}

func mac(secret, canonical string) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(canonical))
	return h.Sum(nil)
}

// ValidNonce reports whether nonce is a well-formed X-Nonce value: 16 to 128
// characters of [A-Za-z0-9_-] (docs/design/decisions.md section 1).
func ValidNonce(nonce string) bool {
	if len(nonce) < MinNonceLen || len(nonce) > MaxNonceLen {
		return false
	}
	for i := 0; i < len(nonce); i++ {
		c := nonce[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewNonce returns a fresh X-Nonce value: 32 characters of base64url
// (192 random bits from crypto/rand), well inside ValidNonce's alphabet and
// bounds, so that two requests never share one.
func NewNonce() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand); it panics rather than return weak bytes
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckTimestamp checks an X-Timestamp value against now. wellFormed is
// false unless value is Unix time in whole seconds written as ASCII decimal
// digits (no sign, no fraction, no exponent); inRange is true when it is
// also within MaxSkew of now, both bounds included (docs/design/decisions.md
// section 1). A value too large for int64 is well formed and out of range.
//
// The server answers 401 timestamp_out_of_range when inRange is false
// (docs/signing.md).
func CheckTimestamp(value string, now time.Time) (inRange, wellFormed bool) {
	if value == "" {
		return false, false
	}
	var ts int64
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < '0' || c > '9' {
			return false, false
		}
		if ts > (1<<62)/10 {
			ts = 1 << 62 // far beyond any clock; keep reading to check the digits
			continue
		}
		ts = ts*10 + int64(c-'0')
	}
	skew := now.Unix() - ts
	limit := int64(MaxSkew / time.Second)
	return -limit <= skew && skew <= limit, true
}
