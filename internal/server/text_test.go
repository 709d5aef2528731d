package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/store/storetest"
)

// The one rule for text (docs/api.md, "Text and query strings"): what
// Paygate keeps is valid UTF-8 without NUL, and anything else is a 400
// answered before any database is touched. PostgreSQL refuses NUL and
// invalid UTF-8 in text columns with an error, which answered 500.

// textSession is a session body with every string field of CreatePayment.
const textSession = `{"order_id":"o-1","amount_minor":1000,"currency":"USD","description":"Tea",
	"customer_reference":"cust-1","return_url":"https://shop.example/back","locale":"en",
	"metadata":{"note":"n"},
	"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","phone":"+442071234567",
		"billing_address":{"country":"GB","line1":"1 Street","line2":"Flat 2","line3":"Hall","city":"London",
			"region":"Greater London","postal_code":"N1 1AA"}}}`

// withText returns body with the string at the dotted path set to v
// (intermediate objects made as needed; a final number indexes an array).
func withText(t *testing.T, body, path string, v any) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	parts := strings.Split(path, ".")
	cur := m
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = v
	b, err := json.Marshal(m) // encodes U+0000 as \u0000
	require.NoError(t, err)
	return string(b)
}

func textDirect(t *testing.T) string {
	return withText(t, withText(t, textSession, "payment_method", map[string]any{"type": "card", "card": map[string]any{
		"number": "4242424242424242", "expire_month": 12, "expire_year": time.Now().Year() + 2, "cvv": "123", "cardholder": "Ada Lovelace"}}),
		"device", map[string]any{"user_agent": "ua", "accept_header": "text/html", "language": "en", "languages": []string{"en"},
			"timezone": "Europe/London", "platform": "p"})
}

func TestTextRule(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		direct := textDirect(t)

		refused := func(t *testing.T, resp *client.Response, status int, code, field string) {
			t.Helper()
			require.Equal(t, status, resp.Status, string(resp.Body))
			env := decodeError(t, resp.Body)
			require.Equal(t, code, env.Error.Code, string(resp.Body))
			if field == "" {
				require.Nil(t, env.Error.Field, string(resp.Body))
			} else {
				require.NotNil(t, env.Error.Field, string(resp.Body))
				require.Equal(t, field, *env.Error.Field)
			}
			require.False(t, env.Error.Retryable)
		}
		get := func(t *testing.T, c *client.Client, target string) *client.Response {
			t.Helper()
			resp, err := c.Do(ctx, client.Request{Method: "GET", Target: target})
			require.NoError(t, err)
			return resp
		}
		nothingStored := func(t *testing.T) {
			t.Helper()
			resp := get(t, e.a, "/api/v1/payments")
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			var list struct{ Items []json.RawMessage }
			require.NoError(t, json.Unmarshal(resp.Body, &list))
			require.Empty(t, list.Items, "a refused request stored a payment")
		}

		t.Run("the bodies are valid", func(t *testing.T) {
			// Key b: key a's list must stay empty.
			require.Equal(t, http.StatusCreated, e.post(e.b, "/api/v1/payment-sessions", textSession).Status)
			resp := e.post(e.b, "/api/v1/payments/direct", direct)
			require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
		})

		t.Run("NUL in any string field", func(t *testing.T) {
			common := []string{"order_id", "description", "customer_reference", "return_url", "locale", "metadata.note",
				"customer.first_name", "customer.last_name", "customer.email", "customer.phone",
				"customer.billing_address.country", "customer.billing_address.line1", "customer.billing_address.line2",
				"customer.billing_address.line3", "customer.billing_address.city", "customer.billing_address.region",
				"customer.billing_address.postal_code"}
			only := []string{"payment_method.card.cardholder", "payment_method.card.number", "payment_method.card.cvv",
				"device.user_agent", "device.accept_header", "device.language", "device.timezone", "device.platform"}
			for _, ep := range []struct {
				target, body string
				fields       []string
			}{
				{"/api/v1/payment-sessions", textSession, common},
				{"/api/v1/payments/direct", direct, append(append([]string{}, common...), only...)},
			} {
				for _, field := range ep.fields {
					for _, v := range []string{"\x00", "Ada\x00", "\x00\x00x"} {
						refused(t, e.post(e.a, ep.target, withText(t, ep.body, field, v)), http.StatusBadRequest, "validation_error", field)
					}
				}
				refused(t, e.post(e.a, ep.target, withText(t, ep.body, "metadata.a\x00b", "x")), http.StatusBadRequest, "validation_error", "metadata")
				refused(t, e.post(e.a, ep.target, strings.Replace(ep.body, `"Tea"`, `"Tea\u0000"`, 1)), http.StatusBadRequest, "validation_error", "description")
			}
			refused(t, e.post(e.a, "/api/v1/payments/direct", withText(t, direct, "device.languages", []string{"en", "\x00"})),
				http.StatusBadRequest, "validation_error", "device.languages.1")
			nothingStored(t)
		})

		t.Run("invalid UTF-8 and lone surrogates are invalid_json", func(t *testing.T) {
			for _, target := range []string{"/api/v1/payment-sessions", "/api/v1/payments/direct"} {
				body := textSession
				if strings.HasSuffix(target, "direct") {
					body = direct
				}
				for _, bad := range []string{
					strings.Replace(body, `"o-1"`, "\"o-\xff\"", 1),
					strings.Replace(body, `"note":"n"`, "\"note\":\"\xc3\x28\"", 1),
					strings.Replace(body, `"note":"n"`, "\"n\xfeote\":\"n\"", 1),
					strings.Replace(body, `"Tea"`, "\"Tea \xed\xa0\x80\"", 1), // an encoded surrogate
					strings.Replace(body, `"Tea"`, `"Tea \ud800"`, 1),
					strings.Replace(body, `"note":"n"`, `"note":"\udc00\ud800"`, 1),
				} {
					require.NotEqual(t, body, bad)
					refused(t, e.post(e.a, target, bad), http.StatusBadRequest, "invalid_json", "")
				}
			}
			// A surrogate pair is a character.
			resp := e.post(e.b, "/api/v1/payment-sessions", strings.Replace(textSession, `"Tea"`, `"Tea \ud83c\udf75"`, 1))
			require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
			require.Contains(t, string(resp.Body), "Tea 🍵")
			// A body that must be empty or {} follows the rule too.
			resp, err := e.a.Do(ctx, client.Request{Method: "DELETE", Target: "/api/v1/webhook-endpoints/" + uuid.NewString(),
				Body: []byte("{\"\xff\":1}")})
			require.NoError(t, err)
			refused(t, resp, http.StatusBadRequest, "invalid_json", "")
			nothingStored(t)
		})

		t.Run("query strings", func(t *testing.T) {
			id := uuid.NewString()
			for _, c := range []struct {
				target, code, field string
			}{
				{"/api/v1/payments?order_id=%00", "validation_error", "order_id"},
				{"/api/v1/payments?order_id=a%00b", "validation_error", "order_id"},
				{"/api/v1/payments?order_id=%FF", "validation_error", "order_id"},
				{"/api/v1/payments?customer_reference=%00", "validation_error", "customer_reference"},
				{"/api/v1/payments?customer_reference=%C3%28", "validation_error", "customer_reference"},
				{"/api/v1/payments?status=%FF", "validation_error", "status"},
				{"/api/v1/events?resource_id=%00", "validation_error", "resource_id"},
				{"/api/v1/events?resource_id=%FF", "validation_error", "resource_id"},
				{"/api/v1/events?since=%FF", "validation_error", "since"},
				{"/api/v1/cards/information?bin=%00", "validation_error", "bin"},
				{"/api/v1/payments?order_id=%zz", "validation_error", "query"},
				{"/api/v1/payments?order_id=a;limit=2", "validation_error", "query"},
				{"/api/v1/events?type=%zz", "validation_error", "query"},
				{"/api/v1/events?limit=2;x", "validation_error", "query"},
				{"/api/v1/cards/information?bin=424242;x", "validation_error", "query"},
				{"/api/v1/payments?limit=1&limit=2", "validation_error", "limit"},
				{"/api/v1/events?limit=1&limit=2", "validation_error", "limit"},
				{"/api/v1/payments?%FF=1", "unknown_field", "query"},
				{"/api/v1/payments?4242424242424242=1", "unknown_field", "query"},
				{"/api/v1/payments?a4242424242424242=1", "unknown_field", "query"},
				{"/api/v1/payments?not-listed=1", "unknown_field", "not-listed"},
			} {
				refused(t, get(t, e.a, c.target), http.StatusBadRequest, c.code, c.field)
			}
			// Unknown parameters: 400 on every endpoint, lists or not.
			for _, target := range []string{"/api/v1/payments", "/api/v1/events", "/api/v1/cards/information?bin=424242&",
				"/api/v1/payment-channels", "/api/v1/webhook-endpoints", "/api/v1/payments/" + id,
				"/api/v1/payment-sessions/" + id, "/api/v1/payments/" + id + "/refunds", "/api/v1/events/" + id} {
				sep := "?"
				if strings.Contains(target, "?") {
					sep = ""
				}
				refused(t, get(t, e.a, target+sep+"nope=1"), http.StatusBadRequest, "unknown_field", "nope")
			}
			for _, c := range []struct{ method, target, body string }{
				{"POST", "/api/v1/payment-sessions?nope=1", textSession},
				{"POST", "/api/v1/payments/" + id + "/cancel?nope=1", ""},
				{"DELETE", "/api/v1/webhook-endpoints/" + id + "?nope=1", ""},
			} {
				resp, err := e.a.Do(ctx, client.Request{Method: c.method, Target: c.target, Body: []byte(c.body)})
				require.NoError(t, err)
				refused(t, resp, http.StatusBadRequest, "unknown_field", "nope")
			}
			// Lengths are in characters; a multi-byte filter is a filter.
			resp := get(t, e.a, "/api/v1/payments?order_id="+url.QueryEscape(strings.Repeat("é", 200)))
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			refused(t, get(t, e.a, "/api/v1/payments?order_id="+url.QueryEscape(strings.Repeat("é", 201))),
				http.StatusBadRequest, "validation_error", "order_id")
			resp = get(t, e.a, "/api/v1/events?resource_id="+url.QueryEscape(strings.Repeat("é", 64)))
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			nothingStored(t)
		})

		t.Run("odd bytes in a path id are 404", func(t *testing.T) {
			for _, id := range []string{"%00", "%FF", "%C3%A9", "%FF%FE" + strings.Repeat("0", 32), "..%2F..%2Fx"} {
				for _, target := range []string{"/api/v1/payments/" + id, "/api/v1/payment-sessions/" + id, "/api/v1/events/" + id} {
					refused(t, get(t, e.a, target), http.StatusNotFound, "not_found", "")
				}
			}
		})

		t.Run("Idempotency-Key", func(t *testing.T) {
			post := func(key string) *client.Response {
				t.Helper()
				resp, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions",
					Body: []byte(withText(t, textSession, "order_id", "idem-"+uuid.NewString())), IdempotencyKey: key})
				require.NoError(t, err)
				return resp
			}
			for _, key := range []string{"key-\xff\xfe-0001", "key-\x80-00001", "\xc3" + strings.Repeat("a", 10),
				"key-with\ttab-1", strings.Repeat("é", 201), strings.Repeat("é", 3) + "ab"} {
				refused(t, post(key), http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key")
			}
			nothingStored(t)
			for _, key := range []string{strings.Repeat("é", 200), strings.Repeat("中", 8), strings.Repeat("k", 200)} {
				resp := post(key)
				require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
			}
		})

		t.Run("NUL in a header never reaches a handler", func(t *testing.T) {
			// net/http refuses control characters in header values itself
			// (400, plain text); Paygate's own check covers the rest.
			r := signed(t, e.a, "POST", "/api/v1/payment-sessions", textSession, map[string]string{"Idempotency-Key": "key-0000-0001"})
			status := rawRequest(t, e.url, r, textSession, "Idempotency-Key: key-\x00-00001")
			require.Equal(t, http.StatusBadRequest, status)
		})

		t.Run("X-Access-Key outside its alphabet", func(t *testing.T) {
			for _, key := range []string{e.a.AccessKey + "\xff", "ak_sandbox_\x80\x81", "ak_sandbox_é", e.a.AccessKey + " x",
				"ak_sandbox_" + strings.Repeat("a", 200)} {
				bad := *e.a
				bad.AccessKey = key
				for _, req := range []client.Request{{Method: "GET", Target: "/api/v1/payments"},
					{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(textSession)}} {
					resp, err := bad.Do(ctx, req)
					require.NoError(t, err)
					refused(t, resp, http.StatusUnauthorized, "authentication_required", "X-Access-Key")
				}
			}
		})

		t.Run("stored headers are kept as UTF-8", func(t *testing.T) {
			resp, err := e.b.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payments/direct",
				Body: []byte(withText(t, direct, "order_id", "ua-odd")), Header: http.Header{"User-Agent": {"Odd/\xff\xfe 1.0"},
					"Accept": {"text/\x80html"}}})
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
			var p struct {
				ID string `json:"payment_id"`
			}
			require.NoError(t, json.Unmarshal(resp.Body, &p))
			got := get(t, e.b, "/api/v1/payments/"+p.ID)
			require.Equal(t, http.StatusOK, got.Status, string(got.Body))
			require.True(t, utf8.Valid(got.Body))
			list := get(t, e.b, "/api/v1/payments")
			require.Equal(t, http.StatusOK, list.Status, string(list.Body))
			require.True(t, utf8.Valid(list.Body))
		})

		t.Run("non-canonical paths answer the envelope", func(t *testing.T) {
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			for _, p := range []string{"//api/v1/payments", "/api/v1//payments", "/api/v1/./payments", "/api/v1/x/../payments",
				"/api/v1/payments/.", "//api/v1/health", "/api/v1/%2E%2E/v1/payments", "//checkout/" + uuid.NewString()} {
				for _, method := range []string{"GET", "POST"} {
					req, err := http.NewRequest(method, e.url+p, nil)
					require.NoError(t, err)
					resp, err := noRedirect.Do(req)
					require.NoError(t, err)
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", method, p, b)
					require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
					require.Equal(t, "not_found", decodeError(t, b).Error.Code)
					require.Empty(t, resp.Header.Get("Location"))
				}
			}
			// A signed request to a non-canonical path is no endpoint either.
			resp := get(t, e.a, "/api/v1/payments/../payments")
			refused(t, resp, http.StatusNotFound, "not_found", "")
		})
	})
}

// rawRequest writes r (already signed) on a fresh connection with one more
// header line written as it is, which net/http's client would refuse to
// send, and returns the answer's status.
func rawRequest(t *testing.T, base string, r *http.Request, body, extra string) int {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Length: %d\r\n", r.Method, r.URL.RequestURI(), u.Host, len(body))
	for k, vs := range r.Header {
		for _, v := range vs {
			fmt.Fprintf(&sb, "%s: %s\r\n", k, v)
		}
	}
	sb.WriteString(extra + "\r\n\r\n" + body)
	_, err = conn.Write([]byte(sb.String()))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}

// TestCheckoutFormText: the hosted page's form reaches text columns too
// (the payer's names, address); a value that is not UTF-8 text is the
// page's own error, never a 500.
func TestCheckoutFormText(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		for _, field := range []string{"first_name", "last_name", "line1", "email", "cardholder", "phone", "country", "saved_card_id"} {
			for _, v := range []string{"Ada\x00", "Ada\xff"} {
				s := createSession(t, e.a, fmt.Sprintf(`{"order_id":"form-%s-%d","amount_minor":1999,"currency":"USD"}`, field, len(v)))
				pr := newPayer(t, e)
				pg := pr.get(e.url + "/checkout/" + s.SessionID)
				require.Equal(t, http.StatusOK, pg.status)
				form := cardForm("4242424242424242")
				form.Set("email", "ada@example.com")
				form.Set(field, v)
				next := pr.submit(pg, form)
				require.Equal(t, http.StatusUnprocessableEntity, next.status, "%s: %s", field, next.body)
				require.Contains(t, next.body, "contains characters that cannot be accepted")
				require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status)
			}
		}
	})
}
