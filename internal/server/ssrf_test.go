package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestWebhookOddDestinationsInProduction: a production key cannot register
// an endpoint whose host writes a non-public address in a form resolvers
// and browsers read as one, or an IPv6 address that carries one
// (docs/webhooks.md, "URL rules"): 400 validation_error on url, the URL
// not quoted, and nothing created.
func TestWebhookOddDestinationsInProduction(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{environment: merchant.Production})
		ctx := context.Background()
		for _, u := range []string{
			"https://127.1/", "https://0x7f000001/", "https://0X7F000001/hooks", "https://2130706433/",
			"https://0177.0.0.1/", "https://127.000.000.001/", "https://0/", "https://2852039166/latest",
			"https://0x7f.1/", "https://127.0.0.1./", "https://１２７.0.0.1/", "https://1572395790/",
			"https://[::127.0.0.1]/", "https://[::ffff:127.0.0.1]/", "https://[64:ff9b::127.0.0.1]/",
			"https://[64:ff9b::a9fe:a9fe]/", "https://[64:ff9b:1::7f00:1]/", "https://[2002:7f00:1::]/",
			"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "https://[fe80::1%25eth0]/",
			"https://[2001:db8::1]/", "https://[fec0::1]/", "https://192.0.2.1/", "https://198.18.0.1/",
			"https://192.88.99.1/",
		} {
			body, err := json.Marshal(openapi.CreateWebhookEndpoint{URL: u})
			require.NoError(t, err)
			resp := e.post(e.a, "/api/v1/webhook-endpoints", string(body))
			require.Equal(t, http.StatusBadRequest, resp.Status, u)
			var apiErr *client.Error
			require.True(t, errors.As(resp.Err(), &apiErr), u)
			require.Equal(t, "validation_error", apiErr.Code, u)
			require.NotNil(t, apiErr.Field, u)
			require.Equal(t, "url", *apiErr.Field, u)
			host, err := url.Parse(u)
			require.NoError(t, err)
			require.NotContains(t, apiErr.Message, host.Hostname(), "the answer never quotes the URL")
		}
		var list openapi.WebhookEndpointList
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/webhook-endpoints", nil, &list))
		require.Empty(t, list.Items, "nothing created")

		for _, u := range []string{"https://93.184.215.14/hooks", "https://[2606:4700::6810:85e5]/hooks",
			"https://[64:ff9b::5db8:d70e]/hooks", "https://hooks.example.com/paygate"} {
			e.addEndpoint(e.a, u)
		}
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/webhook-endpoints", nil, &list))
		require.Len(t, list.Items, 4, "public destinations are taken")
	})
}
