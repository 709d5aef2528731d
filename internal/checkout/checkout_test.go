package checkout

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/payment"
)

func TestReturnTo(t *testing.T) {
	for _, tc := range []struct{ returnURL, want string }{
		{"", ""},
		{"https://shop.example/back", "https://shop.example/back?payment_id=p1&status=succeeded"},
		{"https://shop.example/back?cart=42&x=a%20b", "https://shop.example/back?cart=42&x=a%20b&payment_id=p1&status=succeeded"},
		{"https://shop.example/back?cart=42#top", "https://shop.example/back?cart=42&payment_id=p1&status=succeeded#top"},
		{"javascript:alert(1)", ""},
	} {
		p := &payment.Payment{ID: "p1", Status: payment.Succeeded, ReturnURL: tc.returnURL}
		require.Equal(t, tc.want, returnTo(p), tc.returnURL)
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8090/3ds/x?y=1": "http://127.0.0.1:8090",
		"https://acs.bank.example":        "https://acs.bank.example",
		"https://[::1]:8443/p":            "https://[::1]:8443",
		"ftp://files.example":             "",
		"https://a.example;script-src *":  "",
		"/relative":                       "",
	} {
		require.Equal(t, want, origin(raw), raw)
	}
}

func TestPageMessage(t *testing.T) {
	for _, tc := range []struct{ field, msg, want string }{
		{"first_name", "is required for a visa card", "First name is required for a Visa card."},
		{"email", "is required for a mastercard card", "Email is required for a Mastercard card."},
		{"number", "is not a valid card number", "Check the card number: it is not valid."},
		{"expire_year", "the card has expired", "The card has expired."},
		{"consent", "tick the box to agree to the recurring payments", "Tick the box to agree to the recurring payments."},
	} {
		require.Equal(t, tc.want, pageMessage(tc.field, tc.msg))
	}
}
