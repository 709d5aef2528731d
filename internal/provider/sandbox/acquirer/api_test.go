package acquirer

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
)

func TestBIN(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct{ bin, issuer, level, code, scheme string }{
		{"424242", "Paygate Sandbox Bank", "classic", "US", "visa"},
		{"42424242", "Paygate Sandbox Bank", "platinum", "US", "visa"},
		{"42424299", "Paygate Sandbox Bank", "classic", "US", "visa"},
		{"400012", "Paygate Sandbox Bank (test scenarios)", "classic", "US", "visa"},
		{"555555", "Paygate Sandbox Bank", "standard", "US", "mastercard"},
		{"220000", "Sandbox Bank RU", "classic", "RU", "mir"},
		{"22000001", "Sandbox Bank UA", "premium", "UA", "mir"},
		{"990001", "Sandbox Gift Cards", "gift", "IE", "private_label"},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			info, err := e.a.BIN(ctx, tt.bin)
			require.NoError(t, err)
			require.Equal(t, tt.bin, info.BIN)
			require.Equal(t, tt.issuer, info.Issuer)
			require.Equal(t, tt.level, info.Level)
			require.Equal(t, tt.code, info.CountryCode)
			require.Equal(t, tt.scheme, info.Scheme)
		})
	}
	_, err := e.a.BIN(ctx, "999999")
	kind(t, err, provider.NotFound)
}

func TestServerAuthentication(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/v1/payments/pay_x", "/v1/ledger", "/v1/bins/424242"} {
		resp, err := http.Get(e.run.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
	}
	wrong := sandbox.NewAdapter(e.run.URL, "sk_wrong", nil)
	_, err := wrong.Pay(context.Background(), payReq("4242424242424242"))
	kind(t, err, provider.Invalid)
	require.Empty(t, e.srv.Ledger())
}
