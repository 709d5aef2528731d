package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzVerify: a signature verifies exactly when it is the one Sign writes
// for that secret and canonical string: no other spelling of it (padding,
// line breaks, URL alphabet, another case) and no malformed value is ever
// accepted, and nothing panics.
func FuzzVerify(f *testing.F) {
	canonical := Canonical("POST", "/api/v1/payment-sessions", "ak_sandbox_x", "1763800000", "abcdefghijklmnop", []byte(`{}`))
	good := Sign("sk_test", canonical)
	for _, sig := range []string{good, good[:len(good)-1], good + "=", strings.ToLower(good), "", "====", "YQ", "YQ==", "YQ==\n",
		strings.NewReplacer("+", "-", "/", "_").Replace(good), good[:20] + "\r\n" + good[20:]} {
		f.Add("sk_test", canonical, sig)
	}
	f.Fuzz(func(t *testing.T, secret, canonical, sig string) {
		want := Sign(secret, canonical)
		if !Verify(secret, canonical, want) {
			t.Fatalf("Sign's own signature does not verify")
		}
		if Verify(secret, canonical, sig) && sig != want {
			t.Fatalf("accepted %q, which is not %q", sig, want)
		}
	})
}

// FuzzCanonical: for header values without a newline (HTTP cannot carry
// one), the six lines of the canonical string give back exactly what went
// in, so two different requests never share a canonical string.
func FuzzCanonical(f *testing.F) {
	f.Add("post", "/api/v1/cards/information?bin=42424242", "ak_sandbox_x", "1763800000", "abcdefghijklmnop", []byte(`{"a":1}`))
	f.Add("", "", "", "", "", []byte(nil))
	f.Add("GeT", "/a?b=c\r", "k\t", "-1", "n\x00", []byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, method, target, accessKey, timestamp, nonce string, body []byte) {
		for _, v := range []string{method, target, accessKey, timestamp, nonce} {
			if strings.Contains(v, "\n") {
				t.Skip("a header value or request target never holds a newline")
			}
		}
		lines := strings.Split(Canonical(method, target, accessKey, timestamp, nonce, body), "\n")
		sum := sha256.Sum256(body)
		want := []string{strings.ToUpper(method), target, accessKey, timestamp, nonce, hex.EncodeToString(sum[:])}
		if len(lines) != len(want) {
			t.Fatalf("%d lines, want %d", len(lines), len(want))
		}
		for i := range want {
			if lines[i] != want[i] {
				t.Fatalf("line %d is %q, want %q", i+1, lines[i], want[i])
			}
		}
	})
}

var nonceRe = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// FuzzValidNonce: exactly 16 to 128 characters of [A-Za-z0-9_-], bytes not
// runes (a multi-byte character is never part of the alphabet).
func FuzzValidNonce(f *testing.F) {
	for _, s := range []string{NewNonce(), "", "abcdefghijklmno", "abcdefghijklmnop", strings.Repeat("a", 128), strings.Repeat("a", 129),
		"abcdefghijklmno\u00e9", "abcdefghijklmnop\x00", "abcdefgh ijklmnop", "abcdefghijklmnop\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, nonce string) {
		if got, want := ValidNonce(nonce), nonceRe.MatchString(nonce); got != want {
			t.Fatalf("ValidNonce(%q) = %v, want %v", nonce, got, want)
		}
	})
}

// FuzzCheckTimestamp: well formed exactly when the value is ASCII decimal
// digits (no sign, space, fraction or exponent); in range exactly when it
// is also within MaxSkew of now, compared without overflow.
func FuzzCheckTimestamp(f *testing.F) {
	now := int64(1763800000)
	for _, s := range []string{"1763800000", "1763800300", "1763800301", "1763799699", "", "+1763800000", "-1", " 1763800000",
		"1763800000.0", "1e9", "١٧٦٣٨٠٠٠٠٠", "9223372036854775807", "9223372036854775808", "99999999999999999999999999", "0001763800000"} {
		f.Add(s, now)
	}
	f.Fuzz(func(t *testing.T, value string, nowUnix int64) {
		nowUnix %= 1 << 40 // any clock of the next 34,000 years, or before 1970
		inRange, wellFormed := CheckTimestamp(value, time.Unix(nowUnix, 0))
		digits := value != "" && strings.Trim(value, "0123456789") == ""
		if wellFormed != digits {
			t.Fatalf("CheckTimestamp(%q): well formed %v, want %v", value, wellFormed, digits)
		}
		want := false
		if digits {
			ts, _ := new(big.Int).SetString(value, 10)
			skew := new(big.Int).Sub(big.NewInt(nowUnix), ts)
			want = skew.CmpAbs(big.NewInt(int64(MaxSkew/time.Second))) <= 0
		}
		if inRange != want {
			t.Fatalf("CheckTimestamp(%q) at %d: in range %v, want %v", value, nowUnix, inRange, want)
		}
	})
}
