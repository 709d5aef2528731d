package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// integerEdges are the values every integer field of a request is sent
// with: the int32 and int64 edges, around zero, beyond int64, and numbers
// a JSON decoder may read otherwise (docs/api.md, "Integers").
var integerEdges = []string{
	"0", "-1", "1",
	"2147483647", "2147483648", "4294967295", "4294967296", "-2147483648", "-2147483649",
	"9007199254740991", "9007199254740993",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551616", "1e30", "1.5", "1e3", "-0",
}

// notInt64 are the values of integerEdges that no integer field takes:
// each is 400 on the field.
var notInt64 = []string{"9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e30", "1.5", "1e3"}

// schemaIntegers lists the JSON paths ("subscription.interval_count",
// "payment_method.card.expire_year") of every integer property of a
// schema, following $ref, allOf, oneOf, anyOf and arrays ("items.*").
func schemaIntegers(doc map[string]any, schema map[string]any, prefix string, depth int) []string {
	if schema == nil || depth > 12 {
		return nil
	}
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		s, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
		return schemaIntegers(doc, s, prefix, depth+1)
	}
	var out []string
	if isType(schema, "integer") && prefix != "" {
		out = append(out, prefix)
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		for _, sub := range asList(schema[k]) {
			out = append(out, schemaIntegers(doc, sub.(map[string]any), prefix, depth+1)...)
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, p := range props {
			out = append(out, schemaIntegers(doc, p.(map[string]any), join(prefix, name), depth+1)...)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		out = append(out, schemaIntegers(doc, items, join(prefix, "*"), depth+1)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func isType(schema map[string]any, t string) bool {
	switch v := schema["type"].(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// setPath sets the value at a dotted path of a decoded JSON body; false
// when the body has no such place (its parent is missing).
func setPath(body map[string]any, path string, value json.RawMessage) bool {
	parts := strings.Split(path, ".")
	cur := body
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return false
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = value
	return true
}

// TestIntegerEdges sends every integer field of every request body and
// query of the document, one at a time, at the int32 and int64 edges and
// beyond, on both databases: no answer is a 5xx. A field the bodies below
// do not reach fails the test, so a new integer field must get a body.
func TestIntegerEdges(t *testing.T) {
	var doc map[string]any
	each(t, func(t *testing.T, db storetest.Database) {
		require.NoError(t, json.Unmarshal(openapi.JSON(), &doc))
		e := newEnv(t, db, options{})
		payment := e.direct(e.a, cardBody("5555555555554444", ""))
		year := e.clock.Now().Year() + 2
		terms := fmt.Sprintf(`"subscription":{"interval_unit":"day","interval_count":1,
			"first_charge_at":%q,"disclosure_version":"v1"}`, e.clock.Now().Add(48*time.Hour).Format(time.RFC3339))
		// bases are the bodies of each route whose fields are replaced; a
		// function, so that each request is a new order.
		bases := map[string][]func() string{
			"POST /api/v1/payment-sessions": {
				func() string {
					return fmt.Sprintf(`{"order_id":"e-%s","amount_minor":100,"currency":"USD","expires_in_seconds":1800,%s}`,
						uuid.NewString(), terms)
				},
			},
			"POST /api/v1/payments/direct": {
				func() string {
					return fmt.Sprintf(`{"order_id":"e-%s","amount_minor":100,"currency":"USD",%s,%s,
						"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
						uuid.NewString(), visaCustomer, terms, year)
				},
			},
			"POST /api/v1/payments/{id}/capture": {func() string { return `{"amount_minor":100}` }},
			"POST /api/v1/payments/{id}/refunds": {func() string { return `{"amount_minor":100}` }},
			"POST /api/v1/subscriptions":         {func() string { return string(validBody("POST /api/v1/subscriptions", e)) }},
			"POST /api/v1/sandbox/clock/advance": {func() string { return `{"seconds":1}` }},
			"POST /api/v1/card-verifications": {func() string {
				return string(validBody("POST /api/v1/card-verifications", e))
			}},
			"POST /api/v1/payouts": {
				func() string { return string(validBody("POST /api/v1/payouts", e)) },
				func() string {
					return fmt.Sprintf(`{"order_id":"e-%s","amount_minor":100,"currency":"UAH","account":"main",%s,
						"payout_method":{"type":"card","card":{"number":"4111111111111111","expire_month":12,"expire_year":%d}}}`,
						uuid.NewString(), visaCustomer, year)
				},
			},
		}
		ids := map[string]string{"{id}": payment.PaymentID}

		paths := doc["paths"].(map[string]any)
		var routes []string
		for path := range paths {
			routes = append(routes, path)
		}
		sort.Strings(routes)
		sent := 0
		for _, path := range routes {
			item := paths[path].(map[string]any)
			for method, op := range item {
				op, ok := op.(map[string]any)
				if !ok {
					continue
				}
				route := strings.ToUpper(method) + " " + path
				target := strings.ReplaceAll(path, "{id}", ids["{id}"])
				// Integer query parameters.
				for _, p := range asList(op["parameters"]) {
					param := resolveParam(doc, p.(map[string]any))
					schema, _ := param["schema"].(map[string]any)
					if param["in"] != "query" || !isType(schema, "integer") {
						continue
					}
					for _, v := range integerEdges {
						a := e.send(route, target+"?"+param["name"].(string)+"="+v, "")
						require.Less(t, a.status, 500, "%s ?%s=%s answered %d: %s", route, param["name"], v, a.status, a.body)
						sent++
					}
				}
				rb, _ := op["requestBody"].(map[string]any)
				content, _ := rb["content"].(map[string]any)
				mt, _ := content["application/json"].(map[string]any)
				schema, _ := mt["schema"].(map[string]any)
				fields := schemaIntegers(doc, schema, "", 0)
				if len(fields) == 0 {
					continue
				}
				require.NotEmpty(t, bases[route], "%s has integer fields %v and no body in this test", route, fields)
				for _, base := range bases[route] {
					a := e.send(route, target, base())
					// A processing payment cannot be captured or refunded
					// (409), but its body passed the checks.
					require.True(t, a.status < 300 || a.status == http.StatusConflict,
						"%s: the test's body is refused: %s", route, a.body)
				}
				for _, field := range fields {
					reached := false
					for _, base := range bases[route] {
						for _, v := range integerEdges {
							var body map[string]any
							require.NoError(t, json.Unmarshal([]byte(base()), &body))
							if !setPath(body, field, json.RawMessage(v)) {
								break
							}
							reached = true
							b, err := json.Marshal(body)
							require.NoError(t, err)
							a := e.send(route, target, string(b))
							require.Less(t, a.status, 500, "%s %s=%s answered %d: %s", route, field, v, a.status, a.body)
							if slices.Contains(notInt64, v) {
								var env struct{ Error struct{ Code, Field string } }
								require.NoError(t, json.Unmarshal(a.body, &env), "%s", a.body)
								require.Equal(t, http.StatusBadRequest, a.status, "%s %s=%s: %s", route, field, v, a.body)
								require.Equal(t, field, env.Error.Field, "%s %s=%s: %s", route, field, v, a.body)
							}
							sent++
						}
					}
					require.True(t, reached, "%s: no body of this test has %s", route, field)
				}
			}
		}
		require.Greater(t, sent, 100)

		// The schedule refuses an interval it cannot represent: 400 on
		// the field (docs/subscriptions.md, "Terms").
		for _, c := range []struct{ route, body, field string }{
			{"POST /api/v1/payment-sessions", strings.Replace(bases["POST /api/v1/payment-sessions"][0](),
				`"interval_count":1`, `"interval_count":2147483648`, 1), "subscription.interval_count"},
			{"POST /api/v1/payments/direct", strings.Replace(bases["POST /api/v1/payments/direct"][0](),
				`"interval_unit":"day","interval_count":1`, `"interval_unit":"year","interval_count":11`, 1), "subscription.interval_count"},
			{"POST /api/v1/subscriptions", strings.Replace(bases["POST /api/v1/subscriptions"][0](),
				`"interval_count":1`, `"interval_count":121`, 1), "interval_count"},
		} {
			_, path := splitRoute(c.route)
			a := e.send(c.route, path, c.body)
			require.Equal(t, http.StatusBadRequest, a.status, "%s: %s", c.route, a.body)
			var env struct{ Error struct{ Code, Field string } }
			require.NoError(t, json.Unmarshal(a.body, &env))
			require.Equal(t, "validation_error", env.Error.Code, "%s", a.body)
			require.Equal(t, c.field, env.Error.Field, "%s", a.body)
		}
	})
}

// resolveParam follows a parameter's $ref.
func resolveParam(doc map[string]any, p map[string]any) map[string]any {
	if ref, ok := p["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/parameters/")
		if r, ok := doc["components"].(map[string]any)["parameters"].(map[string]any)[name].(map[string]any); ok {
			return r
		}
	}
	return p
}

// send sends one signed request of key a (a new Idempotency-Key for a
// POST) and answers what came back.
func (e *env) send(route, target, body string) answered {
	e.t.Helper()
	method, _ := splitRoute(route)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+target, rd)
	require.NoError(e.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost {
		req.Header.Set("Idempotency-Key", newKey())
	}
	e.a.Sign(req, []byte(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return answered{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestSumsBeyondInt64: the API accepts any amount up to 2^63-1, so the
// sums over several payments must not be int64 (docs/api.md, "Amounts and
// totals"): the totals of two such payments are exact, and an allowance
// counting them refuses with 422, not 500, on both databases.
func TestSumsBeyondInt64(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		huge := fmt.Sprintf(`"amount_minor":%d`, int64(math.MaxInt64))
		for range 2 {
			p := e.direct(e.a, strings.Replace(cardBody("5555555555554444", ""), `"amount_minor":1000`, huge, 1))
			require.Equal(t, "succeeded", e.settle(e.a, p.PaymentID).Status)
		}
		var got openapi.PaymentTotals
		require.NoError(t, e.a.JSON(context.Background(), "GET", "/cabinet/v1/payments/totals", nil, &got))
		two := money.SumOf(math.MaxInt64, math.MaxInt64)
		require.Equal(t, "18446744073709551614", two.String())
		require.Equal(t, []openapi.CurrencyTotals{{Currency: "USD", Count: 2, SucceededCount: 2,
			SucceededMinor: two, CapturedMinor: two, RefundedMinor: money.SumOf()}}, got.Items)
		a := e.send("GET /cabinet/v1/payments/totals", "/cabinet/v1/payments/totals", "")
		require.Contains(t, string(a.body), `"succeeded_minor":18446744073709551614`)

		// Only a per-transaction limit: the day's sums stop at 2^63-1.
		most := int64(math.MaxInt64)
		e.setAllowance(e.b, allowance.Collection, &most, nil)
		session := `{"order_id":"o-` + uuid.NewString() + `",` + huge + `,"currency":"USD"}`
		require.Equal(t, http.StatusCreated, e.post(e.b, "/api/v1/payment-sessions", session).Status)
		b := e.post(e.b, "/api/v1/payment-sessions", `{"order_id":"o-2",`+huge+`,"currency":"USD"}`)
		require.Equal(t, http.StatusUnprocessableEntity, b.Status, "%s", b.Body)
		require.Contains(t, string(b.Body), `"limit_exceeded"`)
	})
}
