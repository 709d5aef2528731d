package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/stretchr/testify/require"
)

// wirePair ties a Go wire type to its schema. Requests use pointers for
// optional fields; responses omit optional fields when empty.
type wirePair struct {
	value   any
	schema  string // a pointer below #/components/schemas/
	request bool
}

var wirePairs = []wirePair{
	{CreatePayment{}, "CreatePayment", true},
	{DirectPayment{}, "DirectPayment", true},
	{PaymentMethod{}, "PaymentMethod", true},
	{PaymentCard{}, "PaymentCard", true},
	{MobileAccount{}, "MobileAccount", true},
	{Customer{}, "Customer", true},
	{BillingAddress{}, "BillingAddress", true},
	{DeviceSnapshot{}, "DeviceSnapshot", true},
	{SubscriptionTerms{}, "SubscriptionTerms", true},
	{Amount{}, "Amount", true},
	{ConfirmPayment{}, "ConfirmPayment", true},
	{CreateSubscription{}, "CreateSubscription", true},
	{CreateCardVerification{}, "CreateCardVerification", true},
	{VerificationCard{}, "VerificationCard", true},
	{VerifyCardVerification{}, "VerifyCardVerification", true},
	{CreatePayout{}, "CreatePayout", true},
	{PayoutMethod{}, "PayoutMethod", true},
	{PayoutCard{}, "PayoutCard", true},
	{ConfirmPayout{}, "ConfirmPayout", true},
	{CreateWebhookEndpoint{}, "CreateWebhookEndpoint", true},
	{ResendEvent{}, "ResendEvent", true},

	{Payment{}, "Payment", false},
	{PaymentCustomer{}, "PaymentCustomer", false},
	{NextAction{}, "NextAction", false},
	{Decline{}, "Decline", false},
	{BankReference{}, "BankReference", false},
	{Refund{}, "Refund", false},
	{RefundList{}, "RefundList", false},
	{PaymentAttempt{}, "PaymentAttempt", false},
	{PaymentAttemptList{}, "PaymentAttemptList", false},
	{Subscription{}, "Subscription", false},
	{PaymentChannel{}, "PaymentChannel", false},
	{PaymentChannelList{}, "PaymentChannelList", false},
	{PaymentList{}, "PaymentList", false},
	{CardInformation{}, "CardInformation", false},
	{CardVerification{}, "CardVerification", false},
	{VerificationNextAction{}, "VerificationNextAction", false},
	{Payout{}, "Payout", false},
	{Health{}, "Health", false},
	{ErrorEnvelope{}, "ErrorEnvelope", false},
	{ErrorBody{}, "ErrorEnvelope/properties/error", false},
	{WebhookEndpoint{}, "WebhookEndpoint", false},
	{CreatedWebhookEndpoint{}, "CreatedWebhookEndpoint", false},
	{WebhookEndpointList{}, "WebhookEndpointList", false},
	{Event{}, "Event", false},
	{EventData{}, "EventData", false},
	{EventList{}, "EventList", false},
	{EventDetails{}, "EventDetails", false},
	{WebhookDelivery{}, "WebhookDelivery", false},
	{WebhookAttempt{}, "WebhookAttempt", false},
	{PaymentMethodToken{}, "PaymentMethodToken", false},
	{PaymentMethodTokenList{}, "PaymentMethodTokenList", false},
	{PaymentTotals{}, "PaymentTotals", false},
	{CurrencyTotals{}, "CurrencyTotals", false},
}

// responseRoots are the types the server answers with.
var responseRoots = []any{
	Payment{}, RefundList{}, PaymentAttemptList{}, Subscription{}, PaymentChannelList{}, CardInformation{},
	CardVerification{}, Payout{}, Health{}, ErrorEnvelope{},
	CreatedWebhookEndpoint{}, WebhookEndpointList{}, EventList{}, EventDetails{},
	PaymentMethodTokenList{}, PaymentTotals{},
}

func TestWireTypesMatchSchemas(t *testing.T) {
	doc := loadDoc(t)
	for _, p := range wirePairs {
		t.Run(p.schema, func(t *testing.T) {
			v, ok := resolve(doc, "#/components/schemas/"+p.schema)
			require.True(t, ok)
			schema := obj(v)
			props := obj(schema["properties"])
			fields := jsonFields(reflect.TypeOf(p.value))
			require.Equal(t, sortedKeys(props), sortedFieldNames(fields), "JSON names of %T", p.value)

			required := map[string]bool{}
			for _, r := range asList(schema["required"]) {
				required[r.(string)] = true
			}
			for name, f := range fields {
				opts := f.Tag.Get("json")
				omits := strings.Contains(opts, ",omitempty") || strings.Contains(opts, ",omitzero")
				nilable := slices.Contains([]reflect.Kind{reflect.Pointer, reflect.Map, reflect.Slice}, f.Type.Kind())
				if p.request {
					// Absent differs from zero for every optional value.
					require.Equal(t, !required[name], nilable, "%s: optional fields are nilable, required ones are not", name)
				} else {
					nullable := slices.Contains(asList(obj(props[name])["type"]), any("null"))
					require.Equal(t, !required[name] && !nullable, omits, "%s: only optional fields are omitted", name)
				}
			}
		})
	}
}

func sortedFieldNames(fields map[string]reflect.StructField) []string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// TestResponsesCarryNoWriteOnlyData: every struct an answer can contain is
// a response type, and its schema has nothing write-only.
func TestResponsesCarryNoWriteOnlyData(t *testing.T) {
	doc := loadDoc(t)
	schemaOf := map[reflect.Type]wirePair{}
	for _, p := range wirePairs {
		schemaOf[reflect.TypeOf(p.value)] = p
	}
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == timeType || seen[typ] {
			return
		}
		seen[typ] = true
		p, ok := schemaOf[typ]
		if typ != reflect.TypeFor[DeviceSnapshot]() { // shared by request and answer, nothing write-only
			require.True(t, ok, "%v has no schema", typ)
			require.False(t, p.request, "answer holds the request type %v", typ)
		}
		v, _ := resolve(doc, "#/components/schemas/"+p.schema)
		require.False(t, reachesWriteOnly(doc, obj(v), map[string]bool{}), "%v", typ)
		for _, f := range jsonFields(typ) {
			visit(f.Type)
		}
	}
	for _, r := range responseRoots {
		visit(reflect.TypeOf(r))
	}
	for _, forbidden := range []string{"number", "cvv", "cardholder", "wallet", "phone", "value"} {
		for typ := range seen {
			_, has := jsonFields(typ)[forbidden]
			require.False(t, has, "%v has a %s field", typ, forbidden)
		}
	}
}

func TestTime(t *testing.T) {
	kyiv := time.FixedZone("EEST", 3*3600)
	b, err := json.Marshal(Time(time.Date(2026, 7, 1, 13, 0, 5, 999_000_000, kyiv)))
	require.NoError(t, err)
	require.Equal(t, `"2026-07-01T10:00:05Z"`, string(b))

	var got Time
	require.NoError(t, json.Unmarshal([]byte(`"2026-07-01T13:00:05.25+03:00"`), &got))
	require.True(t, got.Std().Equal(time.Date(2026, 7, 1, 10, 0, 5, 250_000_000, time.UTC)))
	require.Error(t, json.Unmarshal([]byte(`"2026-07-01"`), &got))
	require.Error(t, json.Unmarshal([]byte(`5`), &got))

	// Optional times are omitted, required ones written.
	r := Refund{ID: "x", CreatedAt: Time(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	b, err = json.Marshal(r)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"x","amount_minor":0,"status":"","created_at":"2026-01-02T03:04:05Z"}`, string(b))
}

func TestResponsesValidateAgainstSchemas(t *testing.T) {
	c, _, err := newCompiler()
	require.NoError(t, err)
	now := Time(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	captured := int64(100)
	for schema, value := range map[string]any{
		"Payment": Payment{
			PaymentID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Status: "authorized", CreatedAt: now, UpdatedAt: now,
			OrderID: "o", AmountMinor: 100, Currency: "UAH", CapturedAmountMinor: &captured,
			Customer: &PaymentCustomer{FirstName: "Ada"}, NextAction: &NextAction{Type: "none"},
			Metadata: map[string]json.RawMessage{"a": json.RawMessage(`1`)},
		},
		"RefundList": RefundList{Items: []Refund{}},
		"PaymentAttemptList": PaymentAttemptList{Items: []PaymentAttempt{{Channel: "a", Status: "failed", Reason: "provider_unreachable", CreatedAt: now},
			{Channel: "b", Status: "succeeded", CreatedAt: now}}},
		"PaymentChannelList": PaymentChannelList{Items: []PaymentChannel{{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Alias: "a", PaymentMethods: []string{"card"}, Currencies: []string{"UAH"}, CheckoutMode: "platform"}}},
		"CardVerification": CardVerification{VerificationID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", OrderID: "v", Status: "code_sent",
			NextAction: &VerificationNextAction{Type: "lookup"}, CreatedAt: now, UpdatedAt: now},
		"Payout": Payout{PayoutID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", OrderID: "p", Status: "processing", AmountMinor: 1,
			Currency: "UAH", Account: "a", PayoutMethod: "card", CreatedAt: now, UpdatedAt: now},
		"Subscription": Subscription{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", MandateID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b",
			AmountMinor: 1, Currency: "UAH", IntervalUnit: "month", IntervalCount: 1, Status: "active"},
		"CreatedWebhookEndpoint": CreatedWebhookEndpoint{WebhookEndpoint: WebhookEndpoint{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b",
			URL: "https://shop.example/hooks", EventTypes: []string{}, CreatedAt: now}, Secret: "whsec_c2VjcmV0"},
		"EventDetails": EventDetails{Event: Event{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Type: "payment.succeeded",
			CreatedAt: now, Data: EventData{Object: json.RawMessage(`{"payment_id":"x"}`)}},
			Deliveries: []WebhookDelivery{{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", EndpointID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b",
				URL: "https://shop.example/hooks", Status: "failed", FailureReason: "endpoint_disabled", CreatedAt: now,
				Attempts: []WebhookAttempt{{AttemptedAt: now, StatusCode: 410, LatencyMS: 12, Response: "gone"},
					{AttemptedAt: now, LatencyMS: 15000, Error: "timeout"}}}}},
		"EventList":     EventList{Items: []Event{}},
		"Health":        Health{Status: "ok", Service: "paygate", Version: "1.2.0", ServiceVersion: "0.1.0", Environment: "sandbox"},
		"ErrorEnvelope": NewErrorEnvelope(fault.OnField(fault.ValidationError, "order_id", "is required"), "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"),
	} {
		t.Run(schema, func(t *testing.T) {
			b, err := json.Marshal(value)
			require.NoError(t, err)
			var inst any
			require.NoError(t, json.Unmarshal(b, &inst))
			sch, err := c.Compile(schemaURL(schema))
			require.NoError(t, err)
			require.NoError(t, sch.Validate(inst), string(b))
		})
	}
}

func TestNewErrorEnvelope(t *testing.T) {
	b, err := json.Marshal(NewErrorEnvelope(fault.New(fault.Internal, "internal error"), "rid"))
	require.NoError(t, err)
	require.JSONEq(t, `{"error":{"code":"internal_error","message":"internal error","field":null,"request_id":"rid","retryable":false,"details":{}}}`, string(b))

	e := &fault.Error{Code: fault.InvalidSignature, Message: "m", Field: "X-Signature", Retryable: true, Details: map[string]any{"canonical_string": "GET"}}
	b, err = json.Marshal(NewErrorEnvelope(e, "rid"))
	require.NoError(t, err)
	require.JSONEq(t, `{"error":{"code":"invalid_signature","message":"m","field":"X-Signature","request_id":"rid","retryable":true,"details":{"canonical_string":"GET"}}}`, string(b))
}
