package signature

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// vector is one row of testdata/vectors.json, computed by
// testdata/vectors.py with Python's hmac, hashlib and base64 (and checked
// with openssl), so these tests hold the Go code to an independent
// implementation of docs/design/decisions.md section 1.
type vector struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	Method    string `json:"method"`
	Target    string `json:"target"`
	AccessKey string `json:"access_key"`
	Timestamp string `json:"timestamp"`
	Nonce     string `json:"nonce"`
	Body      string `json:"body"`
	Canonical string `json:"canonical"`
	Signature string `json:"signature"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	require.NoError(t, err)
	var vs []vector
	require.NoError(t, json.Unmarshal(b, &vs))
	require.GreaterOrEqual(t, len(vs), 6)
	return vs
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var body []byte
			if v.Body != "" {
				body = []byte(v.Body)
			}
			got := Canonical(v.Method, v.Target, v.AccessKey, v.Timestamp, v.Nonce, body)
			require.Equal(t, v.Canonical, got)
			require.Equal(t, v.Signature, Sign(v.Secret, got))
			require.True(t, Verify(v.Secret, v.Canonical, v.Signature))
			require.True(t, ValidNonce(v.Nonce), "vector nonce must be valid")
		})
	}
}

func TestCanonicalEmptyBodyForms(t *testing.T) {
	// No body and an empty body are the same request
	// (docs/design/decisions.md section 1: the hash of the empty string when
	// there is no body).
	a := Canonical("GET", "/api/v1/payment-channels", "ak", "1", "n", nil)
	b := Canonical("GET", "/api/v1/payment-channels", "ak", "1", "n", []byte{})
	require.Equal(t, a, b)
	require.True(t, strings.HasSuffix(a, "\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
}

func TestVerifyRejects(t *testing.T) {
	const secret = "sk_test_docs_only_Wm3Zr8Qp1Ly6Vt4Nh9Kc2Bx7Fd5Gs0Ja"
	canonical := Canonical("POST", "/api/v1/payouts", "ak_sandbox_x", "1767225600", "abcdefghijklmnop", []byte(`{}`))
	good := Sign(secret, canonical)
	raw, _ := base64.StdEncoding.DecodeString(good)
	tests := []struct {
		name      string
		secret    string
		signature string
	}{
		{"empty", secret, ""},
		{"not base64", secret, "not base64 at all!"},
		{"unpadded", secret, strings.TrimRight(good, "=")},
		{"line break inside", secret, good[:20] + "\n" + good[20:]},
		{"truncated MAC", secret, base64.StdEncoding.EncodeToString(raw[:16])},
		{"hex instead of base64", secret, strings.Repeat("ab", 32)},
		{"secret without prefix", strings.TrimPrefix(secret, "sk_"), good},
		{"other secret", secret + "x", good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.False(t, Verify(tt.secret, canonical, tt.signature))
		})
	}
	require.True(t, Verify(secret, canonical, good))
}

func TestValidNonce(t *testing.T) {
	tests := []struct {
		name  string
		nonce string
		want  bool
	}{
		{"16 chars", strings.Repeat("a", 16), true},
		{"15 chars", strings.Repeat("a", 15), false},
		{"128 chars", strings.Repeat("Z", 128), true},
		{"129 chars", strings.Repeat("Z", 129), false},
		{"whole alphabet", "azAZ09_-azAZ09_-", true},
		{"dot", "abcdefghijklmno.", false},
		{"space", "abcdefghijklmno ", false},
		{"plus and slash of std base64", "abcdefghijklm+/=", false},
		{"non-ASCII", "abcdefghijklmnoé", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ValidNonce(tt.nonce))
		})
	}
}

func TestNewNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := NewNonce()
		require.Len(t, n, 32)
		require.True(t, ValidNonce(n), n)
		require.False(t, seen[n], "repeated nonce %s", n)
		seen[n] = true
	}
}

func TestCheckTimestamp(t *testing.T) {
	now := time.Unix(1767225600, 900_000_000) // the fraction of now is ignored
	tests := []struct {
		name       string
		value      string
		inRange    bool
		wellFormed bool
	}{
		{"now", "1767225600", true, true},
		{"299 s behind", "1767225301", true, true},
		{"300 s behind", "1767225300", true, true},
		{"301 s behind", "1767225299", false, true},
		{"299 s ahead", "1767225899", true, true},
		{"300 s ahead", "1767225900", true, true},
		{"301 s ahead", "1767225901", false, true},
		{"leading zeros", "01767225600", true, true},
		{"milliseconds", "1767225600000", false, true},
		{"zero", "0", false, true},
		{"beyond int64", "99999999999999999999999999999999", false, true},
		{"empty", "", false, false},
		{"fraction", "1767225600.5", false, false},
		{"negative", "-1767225600", false, false},
		{"plus sign", "+1767225600", false, false},
		{"exponent", "1.7672256e9", false, false},
		{"space", " 1767225600", false, false},
		{"RFC 3339", "2026-01-01T00:00:00Z", false, false},
		{"non-ASCII digits", "١٧٦٧٢٢٥٦٠٠", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inRange, wellFormed := CheckTimestamp(tt.value, now)
			require.Equal(t, tt.inRange, inRange, "inRange")
			require.Equal(t, tt.wellFormed, wellFormed, "wellFormed")
		})
	}
}

// headerValue draws a value that can stand in an HTTP header or request
// target: printable ASCII, no newline.
func headerValue(t *rapid.T, label string) string {
	return rapid.StringMatching(`[ -~]{0,40}`).Draw(t, label)
}

func drawCanonical(t *rapid.T) string {
	return Canonical(
		rapid.SampledFrom([]string{"GET", "post", "Delete", "PUT"}).Draw(t, "method"),
		headerValue(t, "target"),
		headerValue(t, "access_key"),
		rapid.StringMatching(`[0-9]{1,12}`).Draw(t, "timestamp"),
		rapid.StringMatching(`[A-Za-z0-9_-]{16,128}`).Draw(t, "nonce"),
		rapid.SliceOf(rapid.Byte()).Draw(t, "body"),
	)
}

func TestCanonicalHasSixLines(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawCanonical(t)
		lines := strings.Split(c, "\n")
		if len(lines) != 6 {
			t.Fatalf("%d lines in %q", len(lines), c)
		}
		if lines[0] != strings.ToUpper(lines[0]) {
			t.Fatalf("method %q not upper case", lines[0])
		}
		if len(lines[5]) != 64 || strings.ToLower(lines[5]) != lines[5] {
			t.Fatalf("body hash %q is not lower-case hex SHA-256", lines[5])
		}
	})
}

func TestSignVerifyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		secret := "sk_" + rapid.String().Draw(t, "secret")
		c := drawCanonical(t)
		if !Verify(secret, c, Sign(secret, c)) {
			t.Fatal("Verify(Sign) = false")
		}
	})
}

func TestOneChangedByteFails(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		secret := "sk_" + rapid.StringMatching(`[A-Za-z0-9]{32,48}`).Draw(t, "secret")
		c := drawCanonical(t)
		sig := Sign(secret, c)

		b := []byte(c)
		i := rapid.IntRange(0, len(b)-1).Draw(t, "canonical_byte")
		b[i] ^= byte(rapid.IntRange(1, 255).Draw(t, "canonical_flip"))
		if Verify(secret, string(b), sig) {
			t.Fatalf("changed canonical byte %d still verifies", i)
		}

		raw, _ := base64.StdEncoding.DecodeString(sig)
		j := rapid.IntRange(0, len(raw)-1).Draw(t, "mac_byte")
		raw[j] ^= byte(rapid.IntRange(1, 255).Draw(t, "mac_flip"))
		if Verify(secret, c, base64.StdEncoding.EncodeToString(raw)) {
			t.Fatalf("changed MAC byte %d still verifies", j)
		}

		s := []byte(secret)
		k := rapid.IntRange(0, len(s)-1).Draw(t, "secret_byte")
		s[k] ^= byte(rapid.IntRange(1, 255).Draw(t, "secret_flip"))
		if Verify(string(s), c, sig) {
			t.Fatalf("changed secret byte %d still verifies", k)
		}
	})
}
