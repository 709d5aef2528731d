package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestDeviceAndPayerIP: accept_header and user_agent come from the request's
// own headers, whatever the body says; X-Forwarded-For counts only from a
// trusted proxy (OpenAPI schema DeviceSnapshot).
func TestDeviceAndPayerIP(t *testing.T) {
	db := storetest.Databases(t)[0]
	body := cardBody("4242424242424242", `,"device":{"user_agent":"spoofed","accept_header":"spoofed","screen_width":390,"languages":["en-GB"]}`)
	header := http.Header{"User-Agent": {"Browser/1.0"}, "Accept": {"text/html"}, "X-Forwarded-For": {"203.0.113.7"}}
	send := func(e *env) openapi.Payment {
		resp, err := e.a.Do(context.Background(), client.Request{Method: "POST", Target: "/api/v1/payments/direct", Body: []byte(body), Header: header})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
		var p openapi.Payment
		require.NoError(t, json.Unmarshal(resp.Body, &p))
		return p
	}

	t.Run("untrusted peer", func(t *testing.T) {
		p := send(newEnv(t, db, options{}))
		require.Equal(t, "127.0.0.1", p.PayerIP, "X-Forwarded-For from an untrusted peer is ignored")
		require.Equal(t, "Browser/1.0", *p.Device.UserAgent)
		require.Equal(t, "text/html", *p.Device.AcceptHeader)
		require.NotNil(t, p.Device.ScreenWidth)
	})
	t.Run("trusted proxy", func(t *testing.T) {
		p := send(newEnv(t, db, options{proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
		require.Equal(t, "203.0.113.7", p.PayerIP)
	})
}
