package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// apiFuzzMethods are the methods a fuzz input may use instead of its
// route's own.
var apiFuzzMethods = []string{"GET", "POST", "DELETE", "PUT", "PATCH"}

// freshKey as a fuzz input's Idempotency-Key stands for a new random one,
// so that writes reach their handlers rather than a stored answer.
const freshKey = "fresh"

// FuzzHTTPAPI drives the whole signed API, not only the decoder: any
// /api/v1 route (method, path id, query string, Idempotency-Key,
// User-Agent and body fuzzed) against one server, on PostgreSQL when
// PAYGATE_TEST_DATABASE_URL is set (its text columns refuse what SQLite
// stores, the class docs/api.md "Text and query strings" closes), else
// SQLite. Every request is correctly signed, so inputs get past
// authentication. No answer is a 5xx; every non-2xx is the envelope with
// a code of x-error-codes and that code's status; the seeds' card number
// never comes back. The seeds run in the normal suite;
// `go test ./internal/server -run '^$' -fuzz FuzzHTTPAPI` explores.
func FuzzHTTPAPI(f *testing.F) {
	dbs := storetest.Databases(f)
	e := newEnv(f, dbs[len(dbs)-1], options{})
	ctx := context.Background()
	codes := errorCodes(f)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	var routes []string // "METHOD /path" of the API, in registration order
	for _, r := range e.server.Routes() {
		if strings.Contains(r, " /api/v1/") {
			routes = append(routes, r)
		}
	}
	// Resources that exist, so that {id} reaches handlers' lookups.
	var session, direct openapi.Payment
	for _, c := range []struct {
		target, body string
		into         *openapi.Payment
	}{{"/api/v1/payment-sessions", sessionBody, &session}, {"/api/v1/payments/direct", cardBody(canary, ""), &direct}} {
		resp := e.post(e.a, c.target, c.body)
		require.Equal(f, http.StatusCreated, resp.Status, string(resp.Body))
		require.NoError(f, json.Unmarshal(resp.Body, c.into))
	}

	bodies := map[string][]string{
		"POST /api/v1/payment-sessions": {sessionBody, textSession, `{"order_id":"` + canary + `","amount_minor":5,"currency":"USD"}`,
			`{"order_id":"o","amount_minor":5,"currency":"USD","metadata":{"card":"` + canary + `"}}`},
		"POST /api/v1/payments/direct": {cardBody(canary, ""), cardBody(canary, `,"metadata":{"n":"\u0000"}`),
			strings.Replace(cardBody(canary, ""), `"Ada"`, `"Ada\u0000"`, 1), strings.Replace(cardBody(canary, ""), `"Ada"`, "\"Ada\xff\"", 1),
			strings.Replace(cardBody(canary, ""), `"Ada"`, `"\ud800"`, 1)},
		"POST /api/v1/payments/{id}/confirm":    {`{"value":"123456"}`, `{"value":"\u0000"}`, ``},
		"POST /api/v1/payments/{id}/capture":    {`{"amount_minor":100}`, `{}`, ``},
		"POST /api/v1/payments/{id}/cancel":     {`{}`, ``, `{"x":1}`},
		"POST /api/v1/payments/{id}/refunds":    {`{"amount_minor":100}`, ``},
		"POST /api/v1/webhook-endpoints":        {`{"url":"https://hooks.example/p","event_types":["payment.succeeded"]}`, `{"url":"https://hooks.example/\u0000"}`, `{"url":"https://hooks.example/p","event_types":["\u0000"]}`},
		"POST /api/v1/events/{id}/resend":       {`{"endpoint_id":"` + uuid.NewString() + `"}`, ``},
		"DELETE /api/v1/webhook-endpoints/{id}": {``, `{}`, "{\"\xff\":1}"},
	}
	queries := []string{"", "order_id=%00", "order_id=%FF", "customer_reference=%00", "resource_id=%FF", "order_id=%zz", "a;b",
		"limit=1&limit=2", "nope=1", "bin=424242", "bin=" + canary, canary + "=1", "status=succeeded&limit=5"}
	ids := []string{direct.PaymentID, session.PaymentID, session.SessionID, uuid.NewString(), "%00", "%FF", "x", ""}
	keys := []string{"", freshKey, "key-\xff\xfe-0001", "key-with\ttab", strings.Repeat("é", 200), strings.Repeat("é", 201)}
	for ri, r := range routes {
		seedBodies := append([]string{""}, bodies[r]...)
		for i, b := range seedBodies {
			f.Add(uint8(ri), uint8(0), ids[i%len(ids)], queries[i%len(queries)], keys[1], "paygate-fuzz/1.0", []byte(b))
		}
		for i, q := range queries {
			f.Add(uint8(ri), uint8(0), ids[i%len(ids)], q, keys[i%len(keys)], "ua/\xff", []byte(""))
		}
		for i, id := range ids {
			f.Add(uint8(ri), uint8(i+1), id, "", keys[i%len(keys)], "", []byte(sessionBody))
		}
	}

	f.Fuzz(func(t *testing.T, route, method uint8, id, query, idemKey, userAgent string, body []byte) {
		if len(routes) == 0 {
			t.Skip("no API routes")
		}
		verb, path, _ := strings.Cut(routes[int(route)%len(routes)], " ")
		if method%4 != 0 { // most inputs keep the route's own method
			verb = apiFuzzMethods[int(method)%len(apiFuzzMethods)]
		}
		target := strings.ReplaceAll(path, "{id}", id)
		if query != "" {
			target += "?" + query
		}
		r, err := http.NewRequestWithContext(ctx, verb, e.url+target, bytes.NewReader(body))
		if err != nil { // not a URL at all: send the id escaped instead
			target = strings.ReplaceAll(path, "{id}", url.PathEscape(id)) + "?" + url.PathEscape(query)
			if r, err = http.NewRequestWithContext(ctx, verb, e.url+target, bytes.NewReader(body)); err != nil {
				t.Skip("no request can carry this input")
			}
		}
		if len(body) > 0 {
			r.Header.Set("Content-Type", "application/json")
		}
		if idemKey == freshKey {
			idemKey = uuid.NewString()
		}
		if idemKey != "" {
			r.Header.Set("Idempotency-Key", idemKey)
		}
		r.Header.Set("User-Agent", userAgent)
		e.a.Sign(r, body)
		resp, err := noRedirect.Do(r)
		if err != nil {
			if strings.Contains(err.Error(), "invalid header field value") || strings.Contains(err.Error(), "invalid header field name") {
				t.Skip("net/http will not send this header")
			}
			t.Fatal(err)
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)

		if resp.Header.Get("X-Request-Id") == "" && resp.StatusCode == http.StatusBadRequest {
			// net/http's server refused a malformed request (a space in
			// the target, say) before any handler: not Paygate's answer.
			t.Skip("not HTTP")
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %q answered %d: %s", verb, target, resp.StatusCode, answer)
		}
		if resp.StatusCode >= 300 {
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "%s %q answered %d: %s", verb, target, resp.StatusCode, answer)
			env := decodeError(t, answer)
			status, known := codes[env.Error.Code]
			require.True(t, known, "%s %q answered an undocumented code: %s", verb, target, answer)
			require.Equal(t, status, resp.StatusCode, "%s %q: %s", verb, target, answer)
		}
		// The card number is write-only; an answer may hold it only where
		// the request put it somewhere other than a card's number (an
		// order_id, metadata: free text the merchant chose to send).
		elsewhere := strings.ReplaceAll(string(body), `"number":"`+canary+`"`, "") + target
		if !strings.Contains(elsewhere, canary) {
			require.NotContains(t, string(answer), canary, "%s %q echoed the card number", verb, target)
		}
	})
}

// errorCodes reads the document's x-error-codes: each code and its status.
func errorCodes(t testing.TB) map[string]int {
	var doc struct {
		Components struct {
			Schemas struct {
				ErrorEnvelope struct {
					Codes []struct {
						Code   string `json:"code"`
						Status int    `json:"status"`
					} `json:"x-error-codes"`
				} `json:"ErrorEnvelope"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openapi.JSON(), &doc))
	codes := map[string]int{}
	for _, c := range doc.Components.Schemas.ErrorEnvelope.Codes {
		codes[c.Code] = c.Status
	}
	require.Greater(t, len(codes), 10, "x-error-codes is missing")
	return codes
}
