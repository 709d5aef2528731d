package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// fakeBINProvider stands in for the provider's BIN lookup: it knows 99…,
// fails for 98…, and knows nothing else.
type fakeBINProvider struct {
	mu    sync.Mutex
	calls []string // keyID/bin
}

func (f *fakeBINProvider) lookup(_ context.Context, keyID, bin string) (provider.BINInfo, error) {
	f.mu.Lock()
	f.calls = append(f.calls, keyID+"/"+bin)
	f.mu.Unlock()
	switch {
	case strings.HasPrefix(bin, "99"):
		return provider.BINInfo{BIN: bin, Scheme: "visa", Type: "debit", Issuer: "Provider Bank", CountryCode: "GB"}, nil
	case strings.HasPrefix(bin, "98"):
		return provider.BINInfo{}, provider.Errorf(provider.Transient, "provider down")
	}
	return provider.BINInfo{}, provider.Errorf(provider.NotFound, "unknown BIN")
}

func (f *fakeBINProvider) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

func getBIN(t *testing.T, c *client.Client, query string) *client.Response {
	t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "GET", Target: "/api/v1/cards/information" + query})
	require.NoError(t, err)
	return resp
}

func TestCardInformation(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		fake := &fakeBINProvider{}
		e := newEnv(t, db, options{binFallback: fake.lookup})
		ctx := context.Background()

		answers := func(t *testing.T, query, want string) {
			t.Helper()
			resp := getBIN(t, e.a, query)
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			require.JSONEq(t, want, string(resp.Body), query)
		}
		fails := func(t *testing.T, query string, status int, code string, field any) errorEnvelope {
			t.Helper()
			resp := getBIN(t, e.a, query)
			require.Equal(t, status, resp.Status, string(resp.Body))
			env := decodeError(t, resp.Body)
			require.Equal(t, code, env.Error.Code, query)
			if field == nil {
				require.Nil(t, env.Error.Field, query)
			} else {
				require.NotNil(t, env.Error.Field, query)
				require.Equal(t, field, *env.Error.Field, query)
			}
			return env
		}

		t.Run("a 6-digit BIN of the base", func(t *testing.T) {
			answers(t, "?bin=424242", `{"bin":"424242","scheme":"visa","type":"credit","level":"classic",
				"issuer":"Paygate Sandbox Bank","country":"United States","country_code":"US",
				"issuer_website":"https://bank.sandbox.example","issuer_phone":"+1 202 555 0100","source":"bin_base"}`)
		})

		t.Run("8 digits before 6", func(t *testing.T) {
			answers(t, "?bin=42424242", `{"bin":"42424242","scheme":"visa","type":"credit","level":"platinum",
				"issuer":"Paygate Sandbox Bank","country":"United States","country_code":"US",
				"issuer_website":"https://bank.sandbox.example","issuer_phone":"+1 202 555 0100","source":"bin_base"}`)
			answers(t, "?bin=42424299", `{"bin":"42424299","scheme":"visa","type":"credit","level":"classic",
				"issuer":"Paygate Sandbox Bank","country":"United States","country_code":"US",
				"issuer_website":"https://bank.sandbox.example","issuer_phone":"+1 202 555 0100","source":"bin_base"}`)
		})

		t.Run("a scheme range, only the fields it knows", func(t *testing.T) {
			answers(t, "?bin=411111", `{"bin":"411111","scheme":"visa","source":"bin_base"}`)
			answers(t, "?bin=22210000", `{"bin":"22210000","scheme":"mastercard","source":"bin_base"}`)
			require.Empty(t, fake.taken(), "the provider is asked only for BINs the base does not cover")
		})

		t.Run("the provider for the rest", func(t *testing.T) {
			answers(t, "?bin=99123456", `{"bin":"99123456","scheme":"visa","type":"debit","issuer":"Provider Bank",
				"country_code":"GB","source":"provider"}`)
			require.Equal(t, []string{e.aKey.ID + "/99123456"}, fake.taken(), "asked on behalf of the calling key")
		})

		t.Run("unknown to both", func(t *testing.T) {
			fails(t, "?bin=000000", http.StatusNotFound, "bin_not_found", "bin")
			require.Equal(t, []string{e.aKey.ID + "/000000"}, fake.taken())
		})

		t.Run("the provider failing is retryable", func(t *testing.T) {
			env := fails(t, "?bin=98765432", http.StatusServiceUnavailable, "unavailable", nil)
			require.True(t, env.Error.Retryable)
			fake.taken()
		})

		t.Run("invalid_bin, the value never repeated", func(t *testing.T) {
			for _, v := range []string{"42424", "4242424", "4242424242424242", "42424a", "", "424242%20", "%EF%BC%94%EF%BC%92%EF%BC%94%EF%BC%92%EF%BC%94%EF%BC%92"} {
				resp := getBIN(t, e.a, "?bin="+v)
				require.Equal(t, http.StatusBadRequest, resp.Status, v)
				env := decodeError(t, resp.Body)
				require.Equal(t, "invalid_bin", env.Error.Code, v)
				require.Equal(t, "bin", *env.Error.Field)
				require.False(t, env.Error.Retryable)
				if v != "" {
					require.NotContains(t, string(resp.Body), v)
				}
			}
			require.Empty(t, fake.taken())
		})

		t.Run("query parameters", func(t *testing.T) {
			fails(t, "", http.StatusBadRequest, "validation_error", "bin")
			fails(t, "?bin=424242&bin=555555", http.StatusBadRequest, "validation_error", "bin")
			fails(t, "?bin=424242&expand=issuer", http.StatusBadRequest, "unknown_field", "expand")
			fails(t, "?bin=%zz", http.StatusBadRequest, "validation_error", "query")
			env := fails(t, "?4242424242424242=", http.StatusBadRequest, "unknown_field", "query")
			require.NotContains(t, env.Error.Message, "4242424242424242")
		})

		t.Run("the signature covers the query string", func(t *testing.T) {
			r := signed(t, e.a, "GET", "/api/v1/cards/information", "", nil)
			r.URL.RawQuery = "bin=424242"
			status, _, body := send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "invalid_signature", decodeError(t, body).Error.Code)

			r = signed(t, e.a, "GET", "/api/v1/cards/information?bin=424242", "", nil)
			r.URL.RawQuery = "bin=555555"
			status, _, body = send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "invalid_signature", decodeError(t, body).Error.Code)

			r = signed(t, e.a, "GET", "/api/v1/cards/information?bin=424242", "", nil)
			status, _, body = send(t, r, "")
			require.Equal(t, http.StatusOK, status, string(body))
		})

		t.Run("a new version answers once activated", func(t *testing.T) {
			var v cardinfo.Version
			require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) (err error) {
				v, err = e.bins.Import(ctx, tx, cardinfo.ImportRequest{Label: "licensed", Source: "bins.csv",
					CSV: strings.NewReader("bin,scheme,issuer,country_code\n424242,visa,Licensed Bank,DE\n")})
				return err
			}))
			answers(t, "?bin=424242", `{"bin":"424242","scheme":"visa","type":"credit","level":"classic",
				"issuer":"Paygate Sandbox Bank","country":"United States","country_code":"US",
				"issuer_website":"https://bank.sandbox.example","issuer_phone":"+1 202 555 0100","source":"bin_base"}`)
			require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
				_, err := e.bins.Activate(ctx, tx, v.ID)
				return err
			}))
			answers(t, "?bin=424242", `{"bin":"424242","scheme":"visa","issuer":"Licensed Bank","country_code":"DE","source":"bin_base"}`)
			answers(t, "?bin=42424242", `{"bin":"42424242","scheme":"visa","issuer":"Licensed Bank","country_code":"DE","source":"bin_base"}`)
			fails(t, "?bin=411111", http.StatusNotFound, "bin_not_found", "bin")
			require.Equal(t, []string{e.aKey.ID + "/411111"}, fake.taken(), "the new version does not cover it: the provider is asked")
		})
	})
}
