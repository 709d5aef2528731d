package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// visaCustomer satisfies the Visa customer requirements.
const visaCustomer = `"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com",
	"billing_address":{"country":"GB","line1":"1 Street"}}`

func cardBody(number, extra string) string {
	return fmt.Sprintf(`{"order_id":"o-%s","amount_minor":1000,"currency":"USD",%s,
		"payment_method":{"type":"card","card":{"number":"%s","expire_month":12,"expire_year":%d,"cvv":"123"}}%s}`,
		number[len(number)-4:], visaCustomer, number, time.Now().Year()+2, extra)
}

func (e *env) direct(c *client.Client, body string) openapi.Payment {
	e.t.Helper()
	var p openapi.Payment
	err := c.JSON(context.Background(), "POST", "/api/v1/payments/direct", json.RawMessage(body), &p)
	require.NoError(e.t, err)
	require.Equal(e.t, "processing", p.Status)
	return p
}

// settle waits (await) for the payment to leave the given statuses,
// moving the clock a second per look so that River's retries and snoozes
// come due.
func (e *env) settle(c *client.Client, id string, passing ...string) openapi.Payment {
	e.t.Helper()
	if len(passing) == 0 {
		passing = []string{"processing"}
	}
	var p openapi.Payment
	e.await(time.Second, func() error {
		p = openapi.Payment{}
		require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/payments/"+id, nil, &p))
		if slices.Contains(passing, p.Status) {
			return fmt.Errorf("payment %s stayed %s", id, p.Status)
		}
		return nil
	})
	return p
}

func (e *env) post(c *client.Client, target, body string) *client.Response {
	e.t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "POST", Target: target, Body: []byte(body)})
	require.NoError(e.t, err)
	return resp
}

// challenge submits the sandbox's 3DS page as a payer's click does.
func challenge(t *testing.T, pageURL, outcome string) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(pageURL, url.Values{"outcome": {outcome}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 400)
}

func TestDirectPayments(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()

		t.Run("test cards", func(t *testing.T) {
			for _, tc := range []struct {
				number, status, decline string
			}{
				{"4242424242424242", "succeeded", ""},
				{"4000000000000002", "declined", "card_declined"},
				{"4000000000009995", "declined", "insufficient_funds"},
				{"4000000000000119", "failed", ""},
				{"4000000000000341", "succeeded", ""},
			} {
				p := e.direct(e.a, cardBody(tc.number, ""))
				require.Equal(t, tc.number[:6]+"******"+tc.number[12:], p.MaskedCard)
				got := e.settle(e.a, p.PaymentID)
				require.Equal(t, tc.status, got.Status, tc.number)
				require.True(t, got.Final)
				if tc.decline != "" {
					require.Equal(t, tc.decline, got.Decline.Code)
					require.NotEmpty(t, got.Decline.Message)
				}
			}
		})

		t.Run("unreadable answers pass through manual_review", func(t *testing.T) {
			p := e.direct(e.a, cardBody("4000000000000259", ""))
			got := e.settle(e.a, p.PaymentID, "processing", "manual_review")
			require.Equal(t, "succeeded", got.Status)
			require.Equal(t, 1, chargesFor(e, p.PaymentID))
		})

		t.Run("mastercard needs only the email", func(t *testing.T) {
			body := fmt.Sprintf(`{"order_id":"mc","amount_minor":500,"currency":"EUR","customer":{"email":"a@b.example"},
				"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":1,"expire_year":%d}}}`, time.Now().Year()+1)
			require.Equal(t, "succeeded", e.settle(e.a, e.direct(e.a, body).PaymentID).Status)
		})

		t.Run("3DS approve and deny", func(t *testing.T) {
			for outcome, want := range map[string]string{"approve": "succeeded", "deny": "declined"} {
				p := e.direct(e.a, cardBody("4000000000003220", ""))
				got := e.settle(e.a, p.PaymentID)
				require.Equal(t, "requires_action", got.Status)
				require.Equal(t, "three_ds", got.NextAction.Type)
				challenge(t, got.NextAction.URL, outcome)
				// Confirm with no body asks the provider for the outcome.
				resp := e.post(e.a, "/api/v1/payments/"+p.PaymentID+"/confirm", "")
				require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
				got = e.settle(e.a, p.PaymentID)
				require.Equal(t, want, got.Status, outcome)
				require.Nil(t, got.NextAction)
			}
		})

		t.Run("3DS outcome found by polling", func(t *testing.T) {
			p := e.direct(e.a, cardBody("4000000000003220", ""))
			got := e.settle(e.a, p.PaymentID)
			challenge(t, got.NextAction.URL, "approve")
			require.Equal(t, "succeeded", e.settle(e.a, p.PaymentID, "requires_action").Status)
		})

		t.Run("an uncaptured authorization expires", func(t *testing.T) {
			p := e.direct(e.a, cardBody("4000000000000077", `,"operation_mode":"authorize"`))
			got := e.settle(e.a, p.PaymentID)
			require.Equal(t, "authorized", got.Status)
			require.WithinDuration(t, e.clock.Now().Add(time.Minute), got.AuthorizationExpiresAt.Std(), 5*time.Second)
			got = e.settle(e.a, p.PaymentID, "authorized")
			require.Equal(t, "expired", got.Status)
			require.True(t, got.Final)
			resp := e.post(e.a, "/api/v1/payments/"+p.PaymentID+"/capture", ``)
			require.Equal(t, http.StatusConflict, resp.Status)
		})

		t.Run("cancel a session at once", func(t *testing.T) {
			s := createSession(t, e.a, `{"order_id":"c","amount_minor":5,"currency":"USD"}`)
			resp := e.post(e.a, "/api/v1/payments/"+s.PaymentID+"/cancel", `{}`)
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			var p openapi.Payment
			require.NoError(t, json.Unmarshal(resp.Body, &p))
			require.Equal(t, "canceled", p.Status)
			resp = e.post(e.a, "/api/v1/payments/"+s.PaymentID+"/cancel", `{"x":1}`)
			require.Equal(t, http.StatusBadRequest, resp.Status)
		})

		t.Run("wallets", func(t *testing.T) {
			for token, want := range map[string]string{"sandbox_success": "succeeded", "sandbox_declined": "declined", "sandbox_3ds": "requires_action"} {
				for _, mode := range []string{"token", "direct"} {
					body := fmt.Sprintf(`{"order_id":"w","amount_minor":700,"currency":"GBP",
						"payment_method":{"type":"google_pay","payload_mode":%q,"wallet":{"token":%q}}}`, mode, token)
					require.Equal(t, want, e.settle(e.a, e.direct(e.a, body).PaymentID).Status, token)
				}
			}
		})

		t.Run("mobile", func(t *testing.T) {
			body := `{"order_id":"m","amount_minor":300,"currency":"KZT","payment_method":{"type":"mobile","mobile":{"phone":"+1 (202) 555-0100"}}}`
			p := e.direct(e.a, body)
			got := e.settle(e.a, p.PaymentID)
			require.Equal(t, "requires_action", got.Status)
			require.Equal(t, "otp", got.NextAction.Type)
			resp := e.post(e.a, "/api/v1/payments/"+p.PaymentID+"/confirm", ``)
			require.Equal(t, http.StatusBadRequest, resp.Status, "a code is required")
			resp = e.post(e.a, "/api/v1/payments/"+p.PaymentID+"/confirm", `{"value":"123456"}`)
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			require.Equal(t, "succeeded", e.settle(e.a, p.PaymentID).Status)

			p = e.direct(e.a, strings.Replace(body, "0100", "0101", 1))
			require.Equal(t, "declined", e.settle(e.a, p.PaymentID, "processing", "requires_action").Status)

			resp = e.post(e.a, "/api/v1/payments/direct", strings.Replace(body, `"type":"mobile"`, `"type":"mobile"},"operation_mode":"authorize","x":{"a":1`, 1))
			require.Equal(t, http.StatusBadRequest, resp.Status)
			resp = e.post(e.a, "/api/v1/payments/direct", strings.Replace(body, `{"order_id"`, `{"operation_mode":"authorize","order_id"`, 1))
			require.Equal(t, http.StatusUnprocessableEntity, resp.Status)
			require.Equal(t, "capability_not_supported", decodeError(t, resp.Body).Error.Code)
			resp = e.post(e.a, "/api/v1/payments/direct", strings.Replace(body, "+1 (202) 555-0100", "2025550100", 1))
			require.Equal(t, http.StatusBadRequest, resp.Status)
			require.Equal(t, "payment_method.mobile.phone", *decodeError(t, resp.Body).Error.Field)
		})

		t.Run("scheme rules and card checks", func(t *testing.T) {
			for _, tc := range []struct{ body, field string }{
				{strings.Replace(cardBody("4242424242424242", ""), `"first_name":"Ada",`, ``, 1), "customer.first_name"},
				{strings.Replace(cardBody("4242424242424242", ""), `,"line1":"1 Street"`, ``, 1), "customer.billing_address.line1"},
				{cardBody("4242424242424241", ""), "payment_method.card.number"},
				{strings.Replace(cardBody("4242424242424242", ""), fmt.Sprint(time.Now().Year()+2), "2001", 1), "payment_method.card.expire_year"},
			} {
				resp := e.post(e.a, "/api/v1/payments/direct", tc.body)
				require.Equal(t, http.StatusBadRequest, resp.Status, tc.body)
				env := decodeError(t, resp.Body)
				require.Equal(t, tc.field, *env.Error.Field)
				require.NotContains(t, string(resp.Body), "424242424242424")
			}
		})

		t.Run("raw card data needs the permission", func(t *testing.T) {
			k, err := e.merchants.Create(ctx, merchantKey("no-pci"))
			require.NoError(t, err)
			c := client.New(e.url, k.Key.AccessKey, k.Secret)
			c.Now, c.Retries = e.clock.Now, 0
			resp, err := c.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payments/direct", Body: []byte(cardBody("4242424242424242", ""))})
			require.NoError(t, err)
			require.Equal(t, http.StatusForbidden, resp.Status)
			require.Equal(t, "direct_card_data_not_allowed", decodeError(t, resp.Body).Error.Code)
		})

		t.Run("save the card", func(t *testing.T) {
			p := e.direct(e.a, cardBody("4242424242424242", `,"customer_reference":"payer-9","save_payment_method":true`))
			got := e.settle(e.a, p.PaymentID)
			require.Equal(t, "succeeded", got.Status)
			require.NotEmpty(t, got.SavedCardID)
		})

		t.Run("another key sees none of it", func(t *testing.T) {
			p := e.direct(e.a, cardBody("4242424242424242", `,"operation_mode":"authorize"`))
			e.settle(e.a, p.PaymentID)
			for _, tc := range []struct{ method, path string }{
				{"GET", ""}, {"GET", "/refunds"}, {"POST", "/confirm"}, {"POST", "/capture"}, {"POST", "/cancel"}, {"POST", "/refunds"},
			} {
				resp, err := e.b.Do(ctx, client.Request{Method: tc.method, Target: "/api/v1/payments/" + p.PaymentID + tc.path})
				require.NoError(t, err)
				require.Equal(t, http.StatusNotFound, resp.Status, tc.path)
			}
			var list openapi.PaymentList
			require.NoError(t, e.b.JSON(ctx, "GET", "/api/v1/payments", nil, &list))
			for _, it := range list.Items {
				require.NotEqual(t, p.PaymentID, it.PaymentID)
			}
		})

		t.Run("the list pages and filters", func(t *testing.T) {
			c, _ := e.newClient("lister")
			var ids []string
			for i := range 5 {
				ids = append(ids, createSession(t, c, fmt.Sprintf(`{"order_id":"list-%d","amount_minor":5,"currency":"USD","customer_reference":"r%d"}`, i, i%2)).PaymentID)
				e.clock.Add(time.Millisecond)
			}
			var seen []string
			cursor := ""
			for {
				var page openapi.PaymentList
				target := "/api/v1/payments?limit=2"
				if cursor != "" {
					target += "&cursor=" + cursor
				}
				require.NoError(t, c.JSON(ctx, "GET", target, nil, &page))
				for _, it := range page.Items {
					seen = append(seen, it.PaymentID)
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, seen, "newest first, each once")
			var f openapi.PaymentList
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments?customer_reference=r1&status=created", nil, &f))
			require.Len(t, f.Items, 2)
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments?order_id=list-3", nil, &f))
			require.Len(t, f.Items, 1)
			err := c.JSON(ctx, "GET", "/api/v1/payments?limit=500", nil, nil)
			require.True(t, client.IsCode(err, "validation_error"), "%v", err)
			err = c.JSON(ctx, "GET", "/api/v1/payments?colour=red", nil, nil)
			require.True(t, client.IsCode(err, "unknown_field"), "%v", err)
		})
	})
}

// chargesFor counts the acquirer's charges for a payment, looked up by the
// operations Paygate sent for it.
func chargesFor(e *env, paymentID string) int {
	var n int
	rows, err := e.store.DB().Query(`SELECT id FROM operations WHERE resource = 'payment' AND resource_id = $1`, paymentID)
	require.NoError(e.t, err)
	defer rows.Close()
	for rows.Next() {
		var op string
		require.NoError(e.t, rows.Scan(&op))
		n += e.acquirer.Count("charge", op)
	}
	return n
}

func merchantKey(name string) merchant.NewKey { return merchant.NewKey{Name: name} }
