package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store/storetest"
)

func createSession(t *testing.T, c *client.Client, body string) openapi.Payment {
	t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(body)})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
	var p openapi.Payment
	require.NoError(t, json.Unmarshal(resp.Body, &p))
	return p
}

func TestSessions(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()

		t.Run("create and read", func(t *testing.T) {
			p := createSession(t, e.a, `{"order_id":"o-1","amount_minor":1999,"currency":"USD","description":"Tea",
				"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","phone":"+44 20 7946 0000",
				"billing_address":{"country":"gb","line1":"1 Street","line2":null}},
				"customer_reference":"cust-1","save_payment_method":true,"locale":"en","expires_in_seconds":300,
				"return_url":"https://shop.example/back","metadata":{"cart":"42","n":3},
				"subscription":{"interval_unit":"month","interval_count":1,"first_charge_at":"2027-01-01T00:00:00Z","disclosure_version":"v1"}}`)
			require.Equal(t, "created", p.Status)
			require.False(t, p.Final)
			require.Equal(t, "https://pay.example/checkout/"+p.SessionID, p.CheckoutURL)
			require.Equal(t, e.clock.Now().Add(300*time.Second), p.ExpiresAt.Std())
			require.Equal(t, &openapi.PaymentCustomer{FirstName: "Ada", LastName: "Lovelace"}, p.Customer)
			require.Equal(t, int64(1999), p.AmountMinor)
			require.Equal(t, "en", p.Locale)
			require.JSONEq(t, `{"cart":"42","n":3}`, string(mustMarshal(t, p.Metadata)))

			var got openapi.Payment
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.SessionID, nil, &got))
			require.Equal(t, p, got)
			// The answer never carries the sealed customer data.
			resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/payment-sessions/" + p.SessionID})
			require.NoError(t, err)
			require.NotContains(t, string(resp.Body), "ada@example.com")
			require.NotContains(t, string(resp.Body), "7946")
		})

		t.Run("defaults", func(t *testing.T) {
			p := createSession(t, e.a, `{"order_id":"o-2","amount_minor":1,"currency":"JPY"}`)
			require.Equal(t, "ru", p.Locale)
			require.Equal(t, e.clock.Now().Add(1800*time.Second), p.ExpiresAt.Std())
		})

		t.Run("another key's session is 404", func(t *testing.T) {
			p := createSession(t, e.a, `{"order_id":"o-3","amount_minor":5,"currency":"EUR"}`)
			err := e.b.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.SessionID, nil, nil)
			require.True(t, client.IsCode(err, "not_found"), "%v", err)
			err = e.a.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.PaymentID, nil, nil)
			require.True(t, client.IsCode(err, "not_found"), "a payment id is not a session id: %v", err)
			err = e.a.JSON(ctx, "GET", "/api/v1/payment-sessions/not-a-uuid", nil, nil)
			require.True(t, client.IsCode(err, "not_found"), "%v", err)
		})

		t.Run("channel routing", func(t *testing.T) {
			err := e.a.JSON(ctx, "POST", "/api/v1/payment-sessions", json.RawMessage(`{"order_id":"o","amount_minor":5,"currency":"CHF"}`), nil)
			require.True(t, client.IsCode(err, "channel_not_available"), "%v", err)
			require.Equal(t, http.StatusUnprocessableEntity, err.(*client.Error).Status)
			c, k := e.newClient("no-channels")
			require.NoError(t, e.merchants.Unassign(ctx, k.AccessKey, "sandbox"))
			err = c.JSON(ctx, "POST", "/api/v1/payment-sessions", json.RawMessage(`{"order_id":"o","amount_minor":5,"currency":"USD"}`), nil)
			require.True(t, client.IsCode(err, "channel_not_available"), "%v", err)
			var list openapi.PaymentChannelList
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &list))
			require.Empty(t, list.Items)
			require.NoError(t, e.merchants.Assign(ctx, k.AccessKey, "sandbox-redirect"))
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &list))
			require.Len(t, list.Items, 1)
			require.Equal(t, "provider_redirect", list.Items[0].CheckoutMode)
			var p openapi.Payment
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payment-sessions", json.RawMessage(`{"order_id":"o","amount_minor":5,"currency":"USD"}`), &p))
		})

		t.Run("a key sees only its channels", func(t *testing.T) {
			c, k := e.newClient("redirect-only")
			require.NoError(t, e.merchants.Unassign(ctx, k.AccessKey, "sandbox"))
			require.NoError(t, e.merchants.Assign(ctx, k.AccessKey, "sandbox-refunds"))
			var mine, theirs openapi.PaymentChannelList
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &mine))
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &theirs))
			require.Equal(t, []string{"sandbox-refunds"}, []string{mine.Items[0].Alias})
			require.Equal(t, "sandbox", theirs.Items[0].Alias)
			require.Len(t, theirs.Items, 1)
		})

		t.Run("cross-field rules", func(t *testing.T) {
			for _, tc := range []struct{ body, code, field string }{
				{`{"order_id":"o","amount_minor":5,"currency":"USD","save_payment_method":true}`, "customer_reference_required", "customer_reference"},
				{`{"order_id":"o","amount_minor":5,"currency":"ZZZ"}`, "validation_error", "currency"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","customer":{"billing_address":{"country":"QQ"}}}`, "validation_error", "customer.billing_address.country"},
			} {
				resp, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(tc.body)})
				require.NoError(t, err)
				require.Equal(t, http.StatusBadRequest, resp.Status, tc.body)
				env := decodeError(t, resp.Body)
				require.Equal(t, tc.code, env.Error.Code, tc.body)
				require.Equal(t, tc.field, *env.Error.Field, tc.body)
			}
		})

		t.Run("an unpaid session expires at expires_at", func(t *testing.T) {
			p := createSession(t, e.a, `{"order_id":"o-exp","amount_minor":5,"currency":"USD","expires_in_seconds":300}`)
			e.clock.Add(299 * time.Second)
			var got openapi.Payment
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.SessionID, nil, &got))
			require.Equal(t, "created", got.Status)
			e.clock.Add(time.Second)
			got = openapi.Payment{}
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.SessionID, nil, &got))
			require.Equal(t, "expired", got.Status)
			require.True(t, got.Final)
			require.Empty(t, got.CheckoutURL, "an expired session has nowhere to send the payer")
		})
	})
}

// TestSessionExpiryJob: the River job moves the stored session to expired.
func TestSessionExpiryJob(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		p := createSession(t, e.a, `{"order_id":"o-job","amount_minor":5,"currency":"USD","expires_in_seconds":300}`)
		e.clock.Add(301 * time.Second)
		e.await(0, e.storedPaymentIs(p.PaymentID, payment.Expired))
	})
}

func TestIdempotency(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		post := func(c *client.Client, key, body string) *client.Response {
			resp, err := c.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(body), IdempotencyKey: key})
			require.NoError(t, err)
			return resp
		}

		t.Run("replay is byte-identical and marked", func(t *testing.T) {
			first := post(e.a, "idem-replay-1", sessionBody)
			require.Equal(t, http.StatusCreated, first.Status)
			require.False(t, first.Replayed())
			again := post(e.a, "idem-replay-1", sessionBody)
			require.Equal(t, http.StatusCreated, again.Status)
			require.True(t, again.Replayed())
			require.Equal(t, first.Body, again.Body)
			require.NotEqual(t, first.Header.Get("X-Request-Id"), again.Header.Get("X-Request-Id"))
		})

		t.Run("same key, other body is 422", func(t *testing.T) {
			post(e.a, "idem-reuse-1", sessionBody)
			resp := post(e.a, "idem-reuse-1", strings.Replace(sessionBody, "1999", "2000", 1))
			require.Equal(t, http.StatusUnprocessableEntity, resp.Status)
			require.Equal(t, "idempotency_key_reused", decodeError(t, resp.Body).Error.Code)
		})

		t.Run("keys are scoped to the access key", func(t *testing.T) {
			a := post(e.a, "idem-scope-1", sessionBody)
			b := post(e.b, "idem-scope-1", sessionBody)
			require.Equal(t, http.StatusCreated, b.Status)
			require.False(t, b.Replayed())
			require.NotEqual(t, a.Body, b.Body)
		})

		t.Run("a refusal after validation is stored", func(t *testing.T) {
			body := `{"order_id":"o","amount_minor":5,"currency":"CHF"}`
			first := post(e.a, "idem-refusal-1", body)
			require.Equal(t, http.StatusUnprocessableEntity, first.Status)
			again := post(e.a, "idem-refusal-1", body)
			require.True(t, again.Replayed())
			require.Equal(t, first.Body, again.Body)
		})

		t.Run("a validation failure stores nothing", func(t *testing.T) {
			first := post(e.a, "idem-invalid-1", `{"order_id":"o"}`)
			require.Equal(t, http.StatusBadRequest, first.Status)
			second := post(e.a, "idem-invalid-1", sessionBody)
			require.Equal(t, http.StatusCreated, second.Status, "the key was not used up")
		})

		t.Run("missing and malformed keys", func(t *testing.T) {
			r := signed(t, e.a, "POST", "/api/v1/payment-sessions", sessionBody, nil)
			status, _, b := send(t, r, sessionBody)
			require.Equal(t, http.StatusBadRequest, status)
			require.Equal(t, "idempotency_key_required", decodeError(t, b).Error.Code)
			for _, k := range []string{"short", strings.Repeat("k", 201)} {
				resp := post(e.a, k, sessionBody)
				require.Equal(t, http.StatusBadRequest, resp.Status)
				require.Equal(t, "invalid_idempotency_key", decodeError(t, resp.Body).Error.Code)
			}
			require.Equal(t, http.StatusCreated, post(e.a, strings.Repeat("k", 200), sessionBody).Status)
			require.Equal(t, http.StatusCreated, post(e.a, "8chars!!", sessionBody).Status)
		})

		t.Run("500 concurrent requests with one key create one session", func(t *testing.T) {
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				bodies = map[string]int{}
				status = map[int]int{}
				replay int
			)
			for range 500 {
				wg.Go(func() {
					resp := post(e.a, "idem-storm-1", sessionBody)
					mu.Lock()
					defer mu.Unlock()
					status[resp.Status]++
					switch resp.Status {
					case http.StatusCreated:
						bodies[string(resp.Body)]++
						if resp.Replayed() {
							replay++
						}
					case http.StatusConflict:
						env := decodeError(t, resp.Body)
						require.Equal(t, "idempotency_request_in_progress", env.Error.Code)
						require.True(t, env.Error.Retryable)
					default:
						t.Errorf("unexpected answer %d %s", resp.Status, resp.Body)
					}
				})
			}
			wg.Wait()
			require.Len(t, bodies, 1, "every 201 is the stored answer: %v", status)
			require.Equal(t, status[http.StatusCreated]-1, replay, "all but the first are replays")
			var p openapi.Payment
			for b := range bodies {
				require.NoError(t, json.Unmarshal([]byte(b), &p))
			}
			var n int
			require.NoError(t, e.store.DB().QueryRow(`SELECT COUNT(*) FROM payments WHERE access_key_id = $1 AND order_id = 'order-1' AND id = $2`,
				e.aKey.ID, p.PaymentID).Scan(&n))
			require.Equal(t, 1, n)
			var total int
			require.NoError(t, e.store.DB().QueryRow(`SELECT COUNT(*) FROM idempotency_keys WHERE idempotency_key = 'idem-storm-1'`).Scan(&total))
			require.Equal(t, 1, total)
		})
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
