package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/card"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// canary is a sandbox test card (docs/design/decisions.md section 7); it must
// never reach a log line, whatever shape it is logged in.
const (
	canary       = "4000000000000002"
	canaryMasked = "400000******0002"
)

func logLine(t *testing.T, f func(*slog.Logger)) (string, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	f(New(&buf, slog.LevelDebug))
	out := buf.String()
	require.NotContains(t, out, canary)
	require.NotContains(t, out, "4000 0000 0000 0002")
	require.NotContains(t, out, "4000-0000-0000-0002")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &m), out)
	return out, m
}

type payload struct {
	OrderID string         `json:"order_id"`
	Card    map[string]any `json:"card"`
	Note    string         `json:"note"`
}

func TestRedaction(t *testing.T) {
	tests := []struct {
		name  string
		log   func(*slog.Logger)
		check func(t *testing.T, out string, m map[string]any)
	}{
		{
			name: "sensitive keys at top level",
			log: func(l *slog.Logger) {
				l.Info("charge", "number", canary, "CVV", "739", "cvc", 739, "Code", "123456", "otp", "654321",
					"value", "999000", "phone", "+12025550100", "wallet", map[string]string{"token": "tok"},
					"secret", "sk_test_x", "password", "hunter2", "Authorization", "Bearer x", "X-Signature", "c2ln",
					"pan", canary, "card_number", canary)
			},
			check: func(t *testing.T, out string, m map[string]any) {
				for _, k := range []string{"number", "CVV", "cvc", "Code", "otp", "value", "phone", "wallet", "secret", "password", "Authorization", "X-Signature", "pan", "card_number"} {
					require.Equal(t, Redacted, m[k], k)
				}
				for _, v := range []string{"739", "123456", "654321", "999000", "+12025550100", "tok", "sk_test_x", "hunter2", "Bearer", "c2ln"} {
					require.NotContains(t, out, v)
				}
			},
		},
		{
			name: "inside groups",
			log: func(l *slog.Logger) {
				l.WithGroup("request").Info("direct payment",
					slog.Group("card", "number", canary, "cvv", "739", "expire_month", 12),
					slog.Group("cvv", "inner", "739"))
			},
			check: func(t *testing.T, out string, m map[string]any) {
				c := m["request"].(map[string]any)["card"].(map[string]any)
				require.Equal(t, Redacted, c["number"])
				require.Equal(t, Redacted, c["cvv"])
				require.Equal(t, float64(12), c["expire_month"])
				require.NotContains(t, out, "739")
			},
		},
		{
			name: "With attributes",
			log: func(l *slog.Logger) {
				l.With("cvv", "739", "note", "card "+canary).Info("x")
			},
			check: func(t *testing.T, out string, m map[string]any) {
				require.Equal(t, Redacted, m["cvv"])
				require.Equal(t, "card "+canaryMasked, m["note"])
			},
		},
		{
			name: "card number in message and free text",
			log: func(l *slog.Logger) {
				l.Error("provider said: card "+canary+" declined", "detail", "pan=4000 0000 0000 0002 cvv", "other", "4000-0000-0000-0002")
			},
			check: func(t *testing.T, out string, m map[string]any) {
				require.Equal(t, "provider said: card "+canaryMasked+" declined", m["msg"])
				require.Equal(t, "pan="+canaryMasked+" cvv", m["detail"])
				require.Equal(t, canaryMasked, m["other"])
			},
		},
		{
			name: "card number as a number",
			log: func(l *slog.Logger) {
				l.Info("x", "n", int64(4000000000000002), "u", uint64(4000000000000002), "f", 4000000000000002.0)
			},
			check: func(t *testing.T, out string, m map[string]any) {
				require.Equal(t, canaryMasked, m["n"])
				require.Equal(t, canaryMasked, m["u"])
				require.Equal(t, canaryMasked, m["f"])
			},
		},
		{
			name: "error and struct values",
			log: func(l *slog.Logger) {
				l.Warn("x",
					"err", fmt.Errorf("validate: %w", errors.New("bad card "+canary)),
					"body", payload{OrderID: "o-1", Card: map[string]any{"number": canary, "cvv": "739"}, Note: "see " + canary},
					"list", []any{canary, 4000000000000002})
			},
			check: func(t *testing.T, out string, m map[string]any) {
				require.Equal(t, "validate: bad card "+canaryMasked, m["err"])
				body := m["body"].(map[string]any)
				require.Equal(t, "o-1", body["order_id"])
				require.Equal(t, Redacted, body["card"].(map[string]any)["number"])
				require.Equal(t, Redacted, body["card"].(map[string]any)["cvv"])
				require.Equal(t, "see "+canaryMasked, body["note"])
				require.Equal(t, []any{canaryMasked, canaryMasked}, m["list"])
				require.NotContains(t, out, "739")
			},
		},
		{
			name: "normal attributes pass through",
			log: func(l *slog.Logger) {
				l.Info("payment created", "payment_id", "3f1c2a9e-7b4d-4e8a-9c21-5d6f7a8b9c0d", "amount_minor", 1234,
					"currency", "USD", "card_mask", "424242******4242", "error_code", "card_declined",
					"order_id", "1234567890123", "nanos", int64(1767225600123456789), "ok", true,
					slog.Group("customer", "email", "a@example.com"))
			},
			check: func(t *testing.T, out string, m map[string]any) {
				require.Equal(t, "payment created", m["msg"])
				require.Equal(t, "INFO", m["level"])
				require.NotEmpty(t, m["time"])
				require.Equal(t, "3f1c2a9e-7b4d-4e8a-9c21-5d6f7a8b9c0d", m["payment_id"])
				require.Equal(t, float64(1234), m["amount_minor"])
				require.Equal(t, "USD", m["currency"])
				require.Equal(t, "424242******4242", m["card_mask"])
				require.Equal(t, "card_declined", m["error_code"])
				require.Equal(t, "1234567890123", m["order_id"], "not Luhn-valid, kept")
				require.Equal(t, float64(1767225600123456789), m["nanos"])
				require.Equal(t, true, m["ok"])
				require.Equal(t, "a@example.com", m["customer"].(map[string]any)["email"])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, m := logLine(t, tt.log)
			tt.check(t, out, m)
		})
	}
}

func TestLevel(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, slog.LevelWarn)
	l.Info("hidden")
	l.Warn("shown")
	require.NotContains(t, buf.String(), "hidden")
	require.Contains(t, buf.String(), "shown")
}

func TestMaskCardNumbers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", canary, canaryMasked},
		{"in text", "card=" + canary + ";", "card=" + canaryMasked + ";"},
		{"spaces", "4000 0000 0000 0002", canaryMasked},
		{"dashes", "4000-0000-0000-0002", canaryMasked},
		{"two numbers", canary + " and 5555555555554444", canaryMasked + " and 555555******4444"},
		{"followed by its CVV", "4000 0000 0000 0002 123", canaryMasked + " 123"},
		{"longest Luhn-valid run wins", "4000 0000 0000 0002 739", "400000*********2739"},
		{"after a date", "2026-4000000000000002", "2026-" + canaryMasked},
		{"amex 15", "378282246310005", "378282*****0005"},
		{"12 digits", "500000000009", "500000**0009"},
		{"19 digits", "6200000000000000000", "620000*********0000"},
		{"not Luhn", "4000000000000001", "4000000000000001"},
		{"11 digits", "40000000006", "40000000006"},
		{"20 digits in one run", "40000000000000020000", "40000000000000020000"},
		{"double space breaks the run", "4000  0000 0000 0002", "4000  0000 0000 0002"},
		{"dots are not separators", "4000.0000.0000.0002", "4000.0000.0000.0002"},
		{"phone", "+1 202-555-0100", "+1 202-555-0100"},
		{"uuid", "3f1c2a9e-7b4d-4e8a-9c21-5d6f7a8b9c0d", "3f1c2a9e-7b4d-4e8a-9c21-5d6f7a8b9c0d"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, MaskCardNumbers(tt.in))
		})
	}
}

// TestNoCardNumberLeaks: a Luhn-valid number of 12 to 19 digits, written
// plain or in groups, inside any text that does not glue more digits to it,
// never survives MaskCardNumbers.
func TestNoCardNumberLeaks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := rapid.StringMatching(`[0-9]{11,18}`).Draw(t, "body")
		number := body + luhnDigit(body)
		sep := rapid.SampledFrom([]string{"", " ", "-"}).Draw(t, "separator")
		every := rapid.IntRange(3, 6).Draw(t, "group_size")
		var written strings.Builder
		for i := range len(number) {
			if i > 0 && i%every == 0 {
				written.WriteString(sep)
			}
			written.WriteByte(number[i])
		}
		before := rapid.StringMatching(`([a-z:=,;]{0,5} )?`).Draw(t, "before")
		after := rapid.StringMatching(`( [a-z:=,;]{0,5})?`).Draw(t, "after")

		out := MaskCardNumbers(before + written.String() + after)
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, out)
		if strings.Contains(digits, number) || len(digits) > 10 {
			t.Fatalf("%q came out as %q", before+written.String()+after, out)
		}
	})
}

// luhnDigit returns the check digit that makes body+digit pass Luhn.
func luhnDigit(body string) string {
	for d := '0'; d <= '9'; d++ {
		if card.Luhn(body + string(d)) {
			return string(d)
		}
	}
	panic("unreachable")
}
