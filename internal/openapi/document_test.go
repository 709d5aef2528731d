package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/fault"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// loadDoc decodes the served JSON document with exact numbers.
func loadDoc(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(JSON()))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc))
	return doc
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func pointer(tokens ...string) string {
	var b strings.Builder
	b.WriteString("#")
	for _, tok := range tokens {
		b.WriteString("/" + escapeToken(tok))
	}
	return b.String()
}

// resolve follows a local reference such as #/components/schemas/Payment.
func resolve(doc map[string]any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// deref follows $ref until an object without one.
func deref(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	m := obj(v)
	for i := 0; m != nil && m["$ref"] != nil && i < 10; i++ {
		target, ok := resolve(doc, m["$ref"].(string))
		require.True(t, ok, "unresolved %v", m["$ref"])
		m = obj(target)
	}
	return m
}

// walk calls fn for every object of the document with its pointer tokens.
func walk(v any, tokens []string, fn func(tokens []string, m map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(tokens, v)
		for _, k := range sortedKeys(v) {
			walk(v[k], append(slices.Clip(tokens), k), fn)
		}
	case []any:
		for i, item := range v {
			walk(item, append(slices.Clip(tokens), fmt.Sprint(i)), fn)
		}
	}
}

// specEndpoints are the 23 endpoints of the client API, plus the document.
var specEndpoints = []string{
	"GET /api/v1/health",
	"POST /api/v1/payment-sessions",
	"GET /api/v1/payment-sessions/{id}",
	"POST /api/v1/payments/direct",
	"GET /api/v1/payments/{id}",
	"POST /api/v1/payments/{id}/confirm",
	"POST /api/v1/payments/{id}/capture",
	"POST /api/v1/payments/{id}/cancel",
	"GET /api/v1/payments/{id}/refunds",
	"POST /api/v1/payments/{id}/refunds",
	"POST /api/v1/subscriptions",
	"GET /api/v1/subscriptions/{id}",
	"POST /api/v1/subscriptions/{id}/pause",
	"POST /api/v1/subscriptions/{id}/resume",
	"POST /api/v1/subscriptions/{id}/cancel",
	"GET /api/v1/payment-channels",
	"GET /api/v1/cards/information",
	"POST /api/v1/card-verifications",
	"GET /api/v1/card-verifications/{id}",
	"POST /api/v1/card-verifications/{id}/verify",
	"POST /api/v1/payouts",
	"GET /api/v1/payouts/{id}",
	"POST /api/v1/payouts/{id}/confirm",
}

const unauthenticated = "GET /api/v1/openapi.json"

// extensions are Paygate's documented additions to the client API; each
// operation carries `x-paygate-extension: true`.
var extensions = []string{
	"GET /api/v1/payments",
	"POST /api/v1/webhook-endpoints", "GET /api/v1/webhook-endpoints", "DELETE /api/v1/webhook-endpoints/{id}",
	"GET /api/v1/events", "GET /api/v1/events/{id}", "POST /api/v1/events/{id}/resend",
	"GET /api/v1/mandates/{id}", "GET /api/v1/sandbox/clock", "POST /api/v1/sandbox/clock/advance",
	"GET /api/v1/payments/{id}/attempts",
}

// cabinet are the merchant cabinet's JSON endpoints (docs/design/decisions.md
// section 13), signed and scoped like /api/v1.
var cabinet = []string{
	"GET /cabinet/v1/payment-method-tokens", "DELETE /cabinet/v1/payment-method-tokens/{id}",
	"GET /cabinet/v1/payments/export", "GET /cabinet/v1/payments/totals",
}

func TestEndpoints(t *testing.T) {
	require.Len(t, specEndpoints, 23)
	var got []string
	ids := map[string]bool{}
	for _, op := range Operations() {
		require.Equal(t, strings.ToUpper(op.Method), op.Method)
		got = append(got, op.Method+" "+op.Path)
		require.False(t, ids[op.ID], "duplicate operationId %s", op.ID)
		ids[op.ID] = true
	}
	want := append(slices.Clone(specEndpoints), unauthenticated)
	want = append(want, extensions...)
	want = append(want, cabinet...)
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)
}

func TestDocumentBasics(t *testing.T) {
	var fromYAML map[string]any
	require.NoError(t, yaml.Unmarshal(YAML(), &fromYAML))
	doc := loadDoc(t)

	// The JSON is the YAML, converted.
	norm := func(v any) any {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var out any
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	require.Equal(t, norm(fromYAML), norm(doc))

	require.Equal(t, "3.1.0", doc["openapi"])
	info := obj(doc["info"])
	require.Equal(t, "Paygate API", info["title"])
	require.Equal(t, "1.2.0", info["version"])
	require.Equal(t, "1.2.0", Version()) // what GET /api/v1/health answers as version
	require.Contains(t, info["description"], "docs/signing.md")
	servers := doc["servers"].([]any)
	require.Equal(t, "http://127.0.0.1:8080", obj(servers[0])["url"])
	for path := range obj(doc["paths"]) {
		require.True(t, strings.HasPrefix(path, "/api/v1/") || strings.HasPrefix(path, "/cabinet/v1/"), path)
	}
}

func TestRefsResolve(t *testing.T) {
	doc := loadDoc(t)
	n := 0
	walk(doc, nil, func(tokens []string, m map[string]any) {
		ref, ok := m["$ref"].(string)
		if !ok {
			return
		}
		n++
		_, found := resolve(doc, ref)
		require.True(t, found, "%s: $ref %s does not resolve", pointer(tokens...), ref)
	})
	require.Greater(t, n, 100)
}

var camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

func TestOperations(t *testing.T) {
	doc := loadDoc(t)
	declaredTags := map[string]bool{}
	for _, tag := range doc["tags"].([]any) {
		declaredTags[obj(tag)["name"].(string)] = true
	}
	global := doc["security"].([]any)
	require.Len(t, global, 1)
	require.Equal(t, []string{"AccessKey", "Nonce", "Signature", "Timestamp"}, sortedKeys(obj(global[0])))
	schemes := obj(obj(doc["components"])["securitySchemes"])
	for name, header := range map[string]string{
		"AccessKey": "X-Access-Key", "Timestamp": "X-Timestamp", "Nonce": "X-Nonce", "Signature": "X-Signature",
	} {
		s := obj(schemes[name])
		require.Equal(t, "apiKey", s["type"], name)
		require.Equal(t, "header", s["in"], name)
		require.Equal(t, header, s["name"], name)
	}
	require.Contains(t, obj(schemes["Signature"])["description"], "HMAC-SHA256")

	for _, op := range Operations() {
		key := op.Method + " " + op.Path
		t.Run(key, func(t *testing.T) {
			item := obj(obj(doc["paths"])[op.Path])
			o := obj(item[strings.ToLower(op.Method)])
			require.Regexp(t, camelCase, o["operationId"])
			tags, _ := o["tags"].([]any)
			require.NotEmpty(t, tags)
			for _, tag := range tags {
				require.True(t, declaredTags[tag.(string)], "undeclared tag %v", tag)
			}

			// Security: inherited, or explicitly none for the open endpoints.
			sec, has := o["security"]
			if key == "GET /api/v1/health" || key == unauthenticated {
				require.True(t, has)
				require.Empty(t, sec)
			} else if has {
				require.Equal(t, global, sec)
			}

			// Parameters: path ones declared both ways; Idempotency-Key on POST.
			params := append(slices.Clone(asList(item["parameters"])), asList(o["parameters"])...)
			pathParams := map[string]bool{}
			idempotency := false
			for _, p := range params {
				if obj(p)["$ref"] == "#/components/parameters/IdempotencyKey" {
					idempotency = true
				}
				pm := deref(t, doc, p)
				if pm["in"] == "path" {
					require.Equal(t, true, pm["required"])
					pathParams[pm["name"].(string)] = true
				}
			}
			inPath := map[string]bool{}
			for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(op.Path, -1) {
				inPath[m[1]] = true
			}
			require.Equal(t, inPath, pathParams)
			require.Equal(t, op.Method == "POST", idempotency, "Idempotency-Key parameter")

			// Responses: a success, errors through the ErrorEnvelope.
			responses := obj(o["responses"])
			var success, errorsSeen int
			for status, r := range responses {
				rm := deref(t, doc, r)
				require.NotEmpty(t, rm["description"])
				require.NotNil(t, obj(rm["headers"])["X-Request-Id"], "%s lacks X-Request-Id", status)
				schema := obj(obj(obj(rm["content"])["application/json"])["schema"])
				switch status[0] {
				case '2':
					success++
					if op.Method == "POST" {
						require.NotNil(t, obj(rm["headers"])["Idempotent-Replayed"], "%s lacks Idempotent-Replayed", status)
					}
				case '4', '5':
					errorsSeen++
					require.Equal(t, "#/components/schemas/ErrorEnvelope", schema["$ref"], status)
					require.Contains(t, obj(r)["$ref"], "#/components/responses/", status)
				default:
					t.Fatalf("unexpected status %s", status)
				}
			}
			require.Equal(t, 1, success, "one success answer")
			require.NotZero(t, errorsSeen)
			authenticated := key != "GET /api/v1/health" && key != unauthenticated
			if authenticated {
				// Every authenticated operation reads the body to check its
				// signature, GET and DELETE too: over 64 KiB is 413.
				for _, s := range []string{"401", "413", "429"} {
					require.Contains(t, responses, s)
				}
			}
			require.Contains(t, responses, "500")
			require.Contains(t, responses, "503")
			if op.Method == "POST" {
				// 415 too where no body is taken: a text/plain body is refused.
				for _, s := range []string{"400", "409", "415", "422"} {
					require.Contains(t, responses, s)
				}
			}
			if strings.Contains(op.Path, "{id}") {
				require.Contains(t, responses, "404")
			}
		})
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// openObjects are the object schemas that intentionally accept any
// property.
var openObjects = []string{
	"#/components/schemas/Payment/properties/location",
	"#/components/schemas/Payment/properties/metadata",
	"#/components/schemas/CreatePayment/properties/metadata",
	"#/components/schemas/DirectPayment/properties/metadata",
	"#/components/schemas/Wallet",
	"#/components/schemas/CreateCardVerification/properties/metadata",
	"#/components/schemas/CreatePayout/properties/device",
	"#/components/schemas/CreatePayout/properties/metadata",
	"#/components/schemas/ErrorEnvelope/properties/error/properties/details",
	"#/components/schemas/EventData/properties/object",
	"#/paths/~1api~1v1~1openapi.json/get/responses/200/content/application~1json/schema",
}

// walkSchema calls fn for every schema below a schema, following the
// keywords that hold subschemas.
func walkSchema(s map[string]any, tokens []string, fn func(tokens []string, s map[string]any)) {
	if s == nil {
		return
	}
	fn(tokens, s)
	sub := func(v any, more ...string) {
		walkSchema(obj(v), append(slices.Clip(tokens), more...), fn)
	}
	for _, kw := range []string{"items", "additionalProperties", "unevaluatedProperties", "not", "if", "then", "else"} {
		sub(s[kw], kw)
	}
	for _, kw := range []string{"properties", "patternProperties", "$defs"} {
		m := obj(s[kw])
		for _, k := range sortedKeys(m) {
			sub(m[k], kw, k)
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		for i, v := range asList(s[kw]) {
			sub(v, kw, fmt.Sprint(i))
		}
	}
}

func isObjectType(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// TestSchemasClosed: every object schema of the document, named or inline,
// is either closed (additionalProperties or unevaluatedProperties false) or
// says additionalProperties: true and is listed in openObjects. Generators
// (openapi-typescript, oapi-codegen) read a missing additionalProperties
// differently, so free-form objects say it (docs/api.md, "What the
// document promises generated clients").
func TestSchemasClosed(t *testing.T) {
	doc := loadDoc(t)
	var open, implicit []string
	walk(doc, nil, func(tokens []string, m map[string]any) {
		var roots []map[string]any
		var at [][]string
		if len(tokens) == 2 && tokens[0] == "components" && tokens[1] == "schemas" {
			for _, name := range sortedKeys(m) {
				roots, at = append(roots, obj(m[name])), append(at, []string{"components", "schemas", name})
			}
		} else if s, ok := m["schema"].(map[string]any); ok && !(len(tokens) > 1 && tokens[0] == "components" && tokens[1] == "schemas") {
			roots, at = append(roots, s), append(at, append(slices.Clone(tokens), "schema"))
		}
		for i, root := range roots {
			walkSchema(root, at[i], func(tokens []string, s map[string]any) {
				if !isObjectType(s) {
					return
				}
				switch {
				case s["additionalProperties"] == false || s["unevaluatedProperties"] == false:
				case s["additionalProperties"] == true:
					open = append(open, pointer(tokens...))
				default:
					implicit = append(implicit, pointer(tokens...))
				}
			})
		}
	})
	require.Empty(t, implicit, "object schemas must say additionalProperties: false, or true when free-form")
	sort.Strings(open)
	want := slices.Clone(openObjects)
	sort.Strings(want)
	require.Equal(t, want, open, "free-form object schemas must be listed in openObjects")
}

// TestNoDefaults: no schema of the document carries default. A default on
// an optional request field makes openapi-typescript type it as required;
// the defaults are stated in descriptions and applied by the Go code
// (payment.NewDirect.Check, sessions, list filters), not by the validator.
func TestNoDefaults(t *testing.T) {
	doc := loadDoc(t)
	walk(doc, nil, func(tokens []string, m map[string]any) {
		if len(tokens) > 0 && tokens[len(tokens)-1] == "responses" {
			return // a "default" response would be a status, not a value
		}
		_, has := m["default"]
		require.False(t, has, "%s has a default", pointer(tokens...))
	})
}

// TestWebhooks: the events Paygate sends are described in the top-level
// webhooks section, with their Standard Webhooks headers, and the payment
// event's type lists exactly the payment statuses.
func TestWebhooks(t *testing.T) {
	doc := loadDoc(t)
	hooks := obj(doc["webhooks"])
	require.Equal(t, []string{"payment"}, sortedKeys(hooks))
	op := obj(obj(hooks["payment"])["post"])
	require.Equal(t, "paymentEvent", op["operationId"])
	require.Equal(t, []any{}, op["security"])
	headers := map[string]bool{}
	for _, p := range asList(op["parameters"]) {
		pm := obj(p)
		require.Equal(t, "header", pm["in"])
		require.Equal(t, true, pm["required"])
		headers[pm["name"].(string)] = true
	}
	require.Equal(t, map[string]bool{"webhook-id": true, "webhook-timestamp": true, "webhook-signature": true}, headers)
	body := obj(obj(obj(obj(op["requestBody"])["content"])["application/json"])["schema"])
	require.Equal(t, "#/components/schemas/PaymentEvent", body["$ref"])
	require.Contains(t, obj(op["responses"]), "200")
	require.Contains(t, obj(op["responses"]), "410")

	event, _ := resolve(doc, "#/components/schemas/PaymentEvent")
	var want []any
	for _, s := range asList(obj(obj(obj(obj(doc["components"])["schemas"])["PaymentStatus"]))["enum"]) {
		want = append(want, "payment."+s.(string))
	}
	require.Equal(t, want, asList(obj(obj(obj(event)["properties"])["type"])["enum"]))
	require.Equal(t, "#/components/schemas/Payment", obj(obj(obj(obj(obj(event)["properties"])["data"])["properties"])["object"])["$ref"])

	// The envelope is the Event's: the same property names.
	generic, _ := resolve(doc, "#/components/schemas/Event")
	require.Equal(t, sortedKeys(obj(obj(generic)["properties"])), sortedKeys(obj(obj(event)["properties"])))
}

func TestRequiredSchemaNames(t *testing.T) {
	doc := loadDoc(t)
	schemas := obj(obj(doc["components"])["schemas"])
	for _, name := range []string{
		"Payment", "PaymentCustomer", "NextAction", "Decline", "BankReference", "CreatePayment",
		"DirectPayment", "PaymentMethod", "PaymentCard", "Wallet", "MobileAccount", "Customer",
		"BillingAddress", "DeviceSnapshot", "SubscriptionTerms", "Amount", "ConfirmPayment", "Refund",
		"RefundList", "Subscription", "CreateSubscription", "PaymentChannel", "PaymentChannelList",
		"CardInformation", "CreateCardVerification", "VerificationCard", "VerifyCardVerification",
		"CardVerification", "CreatePayout", "PayoutMethod", "PayoutCard", "ConfirmPayout", "Payout",
		"Health", "ErrorEnvelope",
	} {
		require.Contains(t, schemas, name)
	}
}

func TestSchemasCompile(t *testing.T) {
	c, _, err := newCompiler()
	require.NoError(t, err)
	doc := loadDoc(t)
	n := 0
	// Every named schema, and every inline schema of a parameter, header or
	// media type.
	for _, name := range schemaNames(doc) {
		_, err := c.Compile(schemaURL(name))
		require.NoError(t, err, name)
		n++
	}
	walk(doc, nil, func(tokens []string, m map[string]any) {
		if len(tokens) > 0 && tokens[0] == "components" && len(tokens) > 1 && tokens[1] == "schemas" {
			return
		}
		if s, ok := m["schema"].(map[string]any); ok {
			_, err := c.Compile(documentURL + pointer(append(slices.Clone(tokens), "schema")...))
			require.NoError(t, err, "%s: %v", pointer(tokens...), s)
			n++
		}
	})
	require.Greater(t, n, 60)
}

func TestExamplesValidate(t *testing.T) {
	c, _, err := newCompiler()
	require.NoError(t, err)
	doc := loadDoc(t)
	check := func(schemaLoc string, example any, where string) {
		sch, err := c.Compile(documentURL + schemaLoc)
		require.NoError(t, err, where)
		require.NoError(t, sch.Validate(example), where)
	}
	n := 0
	// Examples of parameters, headers and media types.
	walk(doc, nil, func(tokens []string, m map[string]any) {
		if len(tokens) > 1 && tokens[0] == "components" && tokens[1] == "schemas" {
			return
		}
		if _, ok := m["schema"].(map[string]any); !ok {
			return
		}
		schemaLoc := pointer(append(slices.Clone(tokens), "schema")...)
		if ex, ok := m["example"]; ok {
			check(schemaLoc, ex, pointer(tokens...))
			n++
		}
		for name, ex := range obj(m["examples"]) {
			check(schemaLoc, deref(t, doc, ex)["value"], pointer(tokens...)+" example "+name)
			n++
		}
	})
	// Examples inside schemas.
	schemas := obj(obj(doc["components"])["schemas"])
	for _, name := range sortedKeys(schemas) {
		walkSchema(obj(schemas[name]), []string{"components", "schemas", name}, func(tokens []string, s map[string]any) {
			for i, ex := range asList(s["examples"]) {
				check(pointer(tokens...), ex, fmt.Sprintf("%s examples %d", pointer(tokens...), i))
				n++
			}
		})
	}
	require.GreaterOrEqual(t, n, 10)

	// The brief's must-haves: request examples of both payment creations.
	for _, path := range []string{"/api/v1/payment-sessions", "/api/v1/payments/direct"} {
		media := obj(obj(obj(obj(obj(obj(doc["paths"])[path])["post"])["requestBody"])["content"])["application/json"])
		require.NotEmpty(t, obj(media["examples"]), path)
	}
}

func TestDirectPaymentExtendsCreatePayment(t *testing.T) {
	doc := loadDoc(t)
	schemas := obj(obj(doc["components"])["schemas"])
	base, direct := obj(schemas["CreatePayment"]), obj(schemas["DirectPayment"])
	for name, def := range obj(base["properties"]) {
		require.Equal(t, def, obj(direct["properties"])[name], name)
	}
	for _, r := range asList(base["required"]) {
		require.Contains(t, asList(direct["required"]), r)
	}
	require.Equal(t, []string{"device", "operation_mode", "payment_method"},
		diffKeys(obj(direct["properties"]), obj(base["properties"])))
	require.Contains(t, asList(direct["required"]), "payment_method")
}

func diffKeys(a, b map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(a) {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

func TestSchemaConstraints(t *testing.T) {
	doc := loadDoc(t)
	schema := func(ref string) map[string]any {
		v, ok := resolve(doc, ref)
		require.True(t, ok, ref)
		return obj(v)
	}
	enum := func(ref string) []any { return asList(schema(ref)["enum"]) }
	list := func(s ...any) []any { return s }

	require.Equal(t, list("created", "awaiting_payment_data", "processing", "requires_action", "authorized",
		"succeeded", "declined", "failed", "canceled", "expired", "manual_review", "partially_refunded", "refunded"),
		enum("#/components/schemas/PaymentStatus"))
	require.Equal(t, list("pending", "code_sent", "verified", "failed", "manual_review"),
		enum("#/components/schemas/CardVerification/properties/status"))
	require.Equal(t, list("processing", "requires_action", "succeeded", "declined", "failed", "manual_review"),
		enum("#/components/schemas/Payout/properties/status"))
	require.Equal(t, list("incomplete", "active", "past_due", "paused", "canceled", "completed"),
		enum("#/components/schemas/Subscription/properties/status"))

	// mobile.phone: a pattern that accepts exactly what the domain's
	// NormalizePhone accepts (TestPhonePatternMatchesDomain).
	phone := schema("#/components/schemas/MobileAccount/properties/phone")
	require.Contains(t, phone, "pattern")
	require.Equal(t, json.Number("64"), phone["maxLength"])
	require.Equal(t, true, phone["writeOnly"])

	require.Equal(t, json.Number("20"), schema("#/components/schemas/CreatePayment/properties/metadata")["maxProperties"])

	// Every amount is an int64; in a request it is at least 1.
	schemas := obj(obj(doc["components"])["schemas"])
	for _, name := range sortedKeys(schemas) {
		walkSchema(obj(schemas[name]), []string{name}, func(tokens []string, s map[string]any) {
			for prop, def := range obj(s["properties"]) {
				if !strings.HasSuffix(prop, "amount_minor") {
					continue
				}
				d := obj(def)
				require.Equal(t, "integer", d["type"], "%v %s", tokens, prop)
				require.Equal(t, "int64", d["format"], "%v %s", tokens, prop)
				if strings.HasPrefix(name, "Create") || name == "DirectPayment" || name == "Amount" {
					require.Equal(t, json.Number("1"), d["minimum"], "%v %s", tokens, prop)
				}
			}
		})
	}

	// Write-only data is marked, and no answer can carry it.
	for _, ref := range []string{
		"#/components/schemas/PaymentCard", "#/components/schemas/VerificationCard",
		"#/components/schemas/PayoutCard",
	} {
		for name, def := range obj(schema(ref)["properties"]) {
			require.Equal(t, true, obj(def)["writeOnly"], "%s %s", ref, name)
		}
	}
	for _, ref := range []string{
		"#/components/schemas/Wallet", "#/components/schemas/ConfirmPayment/properties/value",
		"#/components/schemas/ConfirmPayout/properties/value", "#/components/schemas/VerifyCardVerification/properties/code",
	} {
		require.Equal(t, true, schema(ref)["writeOnly"], ref)
	}
	walk(doc, nil, func(tokens []string, m map[string]any) {
		if len(tokens) < 2 || tokens[len(tokens)-1] != "application/json" || !slices.Contains(tokens, "responses") {
			return
		}
		require.False(t, reachesWriteOnly(doc, obj(m["schema"]), map[string]bool{}), pointer(tokens...))
	})
}

// reachesWriteOnly reports whether a schema, following references, holds a
// write-only part.
func reachesWriteOnly(doc map[string]any, s map[string]any, seen map[string]bool) bool {
	found := false
	walkSchema(s, nil, func(_ []string, sub map[string]any) {
		if sub["writeOnly"] == true {
			found = true
		}
		if ref, ok := sub["$ref"].(string); ok && !seen[ref] {
			seen[ref] = true
			target, _ := resolve(doc, ref)
			if reachesWriteOnly(doc, obj(target), seen) {
				found = true
			}
		}
	})
	return found
}

func TestErrorCodesDocumented(t *testing.T) {
	doc := loadDoc(t)
	envelope := obj(obj(obj(doc["components"])["schemas"])["ErrorEnvelope"])
	table := map[fault.Code]int{}
	for _, e := range asList(envelope["x-error-codes"]) {
		m := obj(e)
		require.Equal(t, []string{"code", "description", "retryable", "status"}, sortedKeys(m), "%v", m)
		status, err := m["status"].(json.Number).Int64()
		require.NoError(t, err)
		table[fault.Code(m["code"].(string))] = int(status)
	}
	want := map[fault.Code]int{
		fault.InvalidJSON: 400, fault.ValidationError: 400, fault.UnknownField: 400, fault.InvalidBIN: 400,
		fault.CustomerReferenceRequired: 400, fault.CardAndSavedCardExclusive: 400,
		fault.IdempotencyKeyRequired: 400, fault.InvalidIdempotencyKey: 400,
		fault.AuthenticationRequired: 401, fault.InvalidSignature: 401, fault.TimestampOutOfRange: 401,
		fault.NonceReused: 401, fault.DirectCardDataNotAllowed: 403, fault.NotFound: 404,
		fault.BINNotFound: 404, fault.MethodNotAllowed: 405, fault.InvalidPaymentState: 409,
		fault.InvalidPayoutState: 409, fault.InvalidSubscriptionState: 409, fault.DuplicateOrderID: 409,
		fault.IdempotencyRequestInProgress: 409, fault.IdempotencyKeyReused: 422,
		fault.PayloadTooLarge: 413, fault.UnsupportedMediaType: 415, fault.CapabilityNotSupported: 422,
		fault.VerificationNotAwaitingCode: 422, fault.SavedCardNotFound: 422, fault.LimitExceeded: 422,
		fault.ChannelNotAvailable: 422, fault.MandateNotFound: 422, fault.RateLimited: 429,
		fault.Internal: 500, fault.Unavailable: 503,
	}
	require.Equal(t, want, table)
	description := obj(doc["info"])["description"].(string)
	for code := range want {
		require.Contains(t, description, "`"+string(code)+"`")
	}
}

func TestParseDocumentRejects(t *testing.T) {
	for name, src := range map[string]string{
		"not yaml":      "a: [",
		"duplicate key": "paths: {}\npaths: {}\n",
		"merge key":     "a: &x {b: 1}\nc:\n  <<: *x\npaths: {}\n",
		"no paths":      "openapi: 3.1.0\n",
		"no version":    "openapi: 3.1.0\npaths: {}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseDocument([]byte(src))
			require.Error(t, err)
		})
	}
	p, err := parseDocument([]byte("info: {version: 2.0.1}\npaths: {/a: {get: {operationId: a}}}\nn: 0x10\nf: 1.5\nb: true\nz: ~\nd: 2026-01-01\n"))
	require.NoError(t, err)
	require.JSONEq(t, `{"info":{"version":"2.0.1"},"paths":{"/a":{"get":{"operationId":"a"}}},"n":16,"f":1.5,"b":true,"z":null,"d":"2026-01-01"}`, string(p.json))
	require.Equal(t, "2.0.1", p.version)
	require.Equal(t, []Operation{{Method: "GET", Path: "/a", ID: "a"}}, p.operations)
}

func TestAccessorsReturnCopies(t *testing.T) {
	j := JSON()
	j[0] = 'x'
	require.Equal(t, byte('{'), JSON()[0])
	y := YAML()
	y[0] = 'x'
	require.NotEqual(t, byte('x'), YAML()[0])
	ops := Operations()
	ops[0].Path = "changed"
	require.NotEqual(t, "changed", Operations()[0].Path)
	require.True(t, reflect.DeepEqual(Operations(), Operations()))
}
