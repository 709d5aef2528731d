package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/server"
	"github.com/paygate/paygate/internal/store/storetest"
)

const sessionBody = `{"order_id":"order-1","amount_minor":1999,"currency":"USD","description":"Tea"}`

// signed builds a request signed by c, to be sent as it is (possibly many times).
func signed(t *testing.T, c *client.Client, method, target, body string, header map[string]string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, c.BaseURL+target, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	c.Sign(r, []byte(body))
	return r
}

// send sends a copy of r and returns the status and decoded envelope or body.
func send(t *testing.T, r *http.Request, body string) (int, http.Header, []byte) {
	t.Helper()
	cp := r.Clone(context.Background())
	cp.Body = io.NopCloser(bytes.NewReader([]byte(body)))
	cp.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(cp)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

type errorEnvelope struct {
	Error struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		Field     *string        `json:"field"`
		RequestID string         `json:"request_id"`
		Retryable bool           `json:"retryable"`
		Details   map[string]any `json:"details"`
	} `json:"error"`
}

func decodeError(t *testing.T, b []byte) errorEnvelope {
	t.Helper()
	var e errorEnvelope
	require.NoError(t, json.Unmarshal(b, &e), string(b))
	require.NotEmpty(t, e.Error.Code, string(b))
	require.NotEmpty(t, e.Error.RequestID)
	require.NotNil(t, e.Error.Details)
	return e
}

func TestAuthentication(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})

		t.Run("each header missing", func(t *testing.T) {
			for _, h := range []string{"X-Access-Key", "X-Timestamp", "X-Nonce", "X-Signature"} {
				r := signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
				r.Header.Del(h)
				status, _, b := send(t, r, "")
				require.Equal(t, http.StatusUnauthorized, status)
				env := decodeError(t, b)
				require.Equal(t, "authentication_required", env.Error.Code)
				require.Equal(t, h, *env.Error.Field)
			}
		})

		t.Run("wrong signature shows the canonical string in the sandbox", func(t *testing.T) {
			r := signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
			r.Header.Set("X-Signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
			status, _, b := send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			env := decodeError(t, b)
			require.Equal(t, "invalid_signature", env.Error.Code)
			canonical := env.Error.Details["canonical_string"].(string)
			require.Contains(t, canonical, "GET\n/api/v1/payment-channels\n"+e.a.AccessKey+"\n")
			require.NotContains(t, string(b), e.a.Secret)
		})

		t.Run("the canonical string never shows a card number", func(t *testing.T) {
			r := signed(t, e.a, "GET", "/api/v1/cards/information?bin=4242424242424242", "", nil)
			r.Header.Set("X-Signature", "AAAA")
			status, _, b := send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.NotContains(t, string(b), "4242424242424242")
			require.Contains(t, decodeError(t, b).Error.Details["canonical_string"], "?bin=424242")
		})

		t.Run("unknown key and wrong secret are not told apart", func(t *testing.T) {
			stranger := client.New(e.url, "ak_sandbox_unknown", e.a.Secret)
			stranger.Now, stranger.Retries = e.clock.Now, 0
			err := stranger.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil)
			require.True(t, client.IsCode(err, "invalid_signature"), "%v", err)
			wrong := client.New(e.url, e.a.AccessKey, "sk_wrong")
			wrong.Now, wrong.Retries = e.clock.Now, 0
			err2 := wrong.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil)
			require.True(t, client.IsCode(err2, "invalid_signature"), "%v", err2)
			require.Equal(t, err.(*client.Error).Message, err2.(*client.Error).Message)
		})

		t.Run("the query string is signed", func(t *testing.T) {
			r := signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
			r.URL.RawQuery = "extra=1"
			status, _, b := send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "invalid_signature", decodeError(t, b).Error.Code)
		})

		t.Run("the body is signed", func(t *testing.T) {
			r := signed(t, e.a, "POST", "/api/v1/payment-sessions", sessionBody, map[string]string{"Idempotency-Key": "body-signed-1"})
			status, _, b := send(t, r, `{"order_id":"order-1","amount_minor":1,"currency":"USD"}`)
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "invalid_signature", decodeError(t, b).Error.Code)
		})

		t.Run("clock skew", func(t *testing.T) {
			for _, tc := range []struct {
				skew time.Duration
				ok   bool
			}{{299 * time.Second, true}, {-299 * time.Second, true}, {300 * time.Second, true},
				{301 * time.Second, false}, {-301 * time.Second, false}} {
				c := *e.a
				c.Now = func() time.Time { return e.clock.Now().Add(tc.skew) }
				err := c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil)
				if tc.ok {
					require.NoError(t, err, "skew %s", tc.skew)
				} else {
					require.True(t, client.IsCode(err, "timestamp_out_of_range"), "skew %s: %v", tc.skew, err)
				}
			}
		})

		t.Run("malformed timestamp and nonce", func(t *testing.T) {
			r := signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
			r.Header.Set("X-Timestamp", "1.5e9")
			status, _, b := send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "timestamp_out_of_range", decodeError(t, b).Error.Code)
			r = signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
			r.Header.Set("X-Nonce", "short")
			status, _, b = send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "authentication_required", decodeError(t, b).Error.Code)
		})

		t.Run("a nonce is single-use", func(t *testing.T) {
			r := signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
			status, _, _ := send(t, r, "")
			require.Equal(t, http.StatusOK, status)
			status, _, b := send(t, r, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "nonce_reused", decodeError(t, b).Error.Code)
		})

		t.Run("a rejected write spends its nonce too", func(t *testing.T) {
			r := signed(t, e.a, "POST", "/api/v1/payment-sessions", `{"order_id":""}`, map[string]string{"Idempotency-Key": "rejected-1"})
			status, _, _ := send(t, r, `{"order_id":""}`)
			require.Equal(t, http.StatusBadRequest, status)
			status, _, b := send(t, r, `{"order_id":""}`)
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "nonce_reused", decodeError(t, b).Error.Code)
		})

		t.Run("one signed request sent 200 times at once is accepted once", func(t *testing.T) {
			r := signed(t, e.a, "POST", "/api/v1/payment-sessions", sessionBody, map[string]string{"Idempotency-Key": "replay-storm-1"})
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				statuses = map[int]int{}
				codes    = map[string]int{}
			)
			for range 200 {
				wg.Go(func() {
					status, _, b := send(t, r, sessionBody)
					mu.Lock()
					defer mu.Unlock()
					statuses[status]++
					if status != http.StatusCreated {
						codes[decodeError(t, b).Error.Code]++
					}
				})
			}
			wg.Wait()
			require.Equal(t, 1, statuses[http.StatusCreated], "statuses %v codes %v", statuses, codes)
			require.Equal(t, 199, codes["nonce_reused"], "statuses %v codes %v", statuses, codes)
		})

		t.Run("a revoked key is refused at once in the sandbox, even just used", func(t *testing.T) {
			// docs/signing.md, "Revoking a key": a sandbox process keeps no
			// key, its clock must be every process's at once.
			c, k := e.newClient("to-revoke")
			require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil))
			require.NoError(t, e.merchants.Revoke(context.Background(), k.AccessKey))
			err := c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil)
			require.True(t, client.IsCode(err, "invalid_signature"), "%v", err)
		})

		t.Run("a revoked key not used lately is refused at once", func(t *testing.T) {
			c, k := e.newClient("revoked-unused")
			require.NoError(t, e.merchants.Revoke(context.Background(), k.AccessKey))
			err := c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil)
			require.True(t, client.IsCode(err, "invalid_signature"), "%v", err)
		})
	})
}

// TestRevokedKeyWithinKeyCache: a production process keeps a key it looked
// up for server.DefaultKeyCache (docs/signing.md, "Revoking a key"); revoked
// elsewhere (the CLI), the key stops within that time, by the injected
// clock.
func TestRevokedKeyWithinKeyCache(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{environment: merchant.Production})
		c, k := e.newClient("to-revoke")
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil))
		require.NoError(t, e.merchants.Revoke(context.Background(), k.AccessKey))
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil),
			"kept from the first request")
		e.clock.Add(server.DefaultKeyCache)
		err := c.JSON(context.Background(), "GET", "/api/v1/payment-channels", nil, nil)
		require.True(t, client.IsCode(err, "invalid_signature"), "%v", err)
	})
}

func TestProductionHidesCanonicalString(t *testing.T) {
	db := storetest.Databases(t)[0]
	e := newEnv(t, db, options{environment: merchant.Production})
	r := signed(t, e.a, "GET", "/api/v1/payment-channels", "", nil)
	r.Header.Set("X-Signature", "AAAA")
	status, _, b := send(t, r, "")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Empty(t, decodeError(t, b).Error.Details)
}

func TestRateLimit(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{rateLimit: 3})
		ctx := context.Background()
		for range 3 {
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil))
		}
		resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/payment-channels"})
		require.NoError(t, err)
		require.Equal(t, http.StatusTooManyRequests, resp.Status)
		require.Equal(t, "1", resp.Header.Get("Retry-After"))
		env := decodeError(t, resp.Body)
		require.Equal(t, "rate_limited", env.Error.Code)
		require.True(t, env.Error.Retryable)
		require.NoError(t, e.b.JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil), "the limit is per key")
		e.clock.Add(1100 * time.Millisecond)
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil), "a new second")
	})
}
