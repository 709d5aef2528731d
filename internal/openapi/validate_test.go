package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/fault"
	"github.com/stretchr/testify/require"
)

var testValidator = sync.OnceValues(NewValidator)

func validator(t testing.TB) *Validator {
	t.Helper()
	v, err := testValidator()
	require.NoError(t, err)
	return v
}

// newDst returns a fresh wire value for a request schema.
func newDst(schema string) any {
	switch schema {
	case "CreatePayment":
		return new(CreatePayment)
	case "DirectPayment":
		return new(DirectPayment)
	case "Amount":
		return new(Amount)
	case "ConfirmPayment":
		return new(ConfirmPayment)
	case "CreateSubscription":
		return new(CreateSubscription)
	case "CreateCardVerification":
		return new(CreateCardVerification)
	case "VerifyCardVerification":
		return new(VerifyCardVerification)
	case "CreatePayout":
		return new(CreatePayout)
	case "ConfirmPayout":
		return new(ConfirmPayout)
	}
	return nil
}

// body builds a JSON object from a base and changes: a nil value deletes.
func body(base string, changes map[string]any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		panic(err)
	}
	for path, v := range changes {
		set(m, strings.Split(path, "."), v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func set(m map[string]any, path []string, v any) {
	if len(path) == 1 {
		if v == nil {
			delete(m, path[0])
		} else {
			m[path[0]] = v
		}
		return
	}
	next, ok := m[path[0]].(map[string]any)
	if !ok {
		next = map[string]any{}
		m[path[0]] = next
	}
	set(next, path[1:], v)
}

// raw is a JSON fragment inserted as is by body.
type raw = json.RawMessage

const (
	minimalPayment = `{"order_id":"order-1","amount_minor":100,"currency":"UAH"}`
	directPayment  = `{"order_id":"order-1","amount_minor":100,"currency":"UAH",
		"payment_method":{"type":"card","card":{"number":"4242424242424242","expire_month":12,"expire_year":2030,"cvv":"123"}}}`
	subscriptionBody = `{"mandate_id":"6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b","amount_minor":100,"currency":"EUR",
		"interval_unit":"month","interval_count":1}`
	verificationBody = `{"order_id":"v-1","currency":"UAH","card":{"number":"4242424242424242","expire_month":1,"expire_year":2030,"cvv":"123"}}`
	payoutBody       = `{"order_id":"p-1","amount_minor":100,"currency":"UAH","account":"main",
		"payout_method":{"type":"card","card":{"number":"4242424242424242","expire_month":1,"expire_year":2030}}}`
	terms = `{"interval_unit":"month","interval_count":1,"first_charge_at":"2026-08-01T00:00:00Z","disclosure_version":"v1"}`
)

const cardNumber = "4242424242424242"

func TestDecodeValidation(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	metadata := func(n int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = i
		}
		return m
	}
	tests := []struct {
		name    string
		schema  string
		body    string
		code    fault.Code // empty: valid
		field   string
		message string
	}{
		// valid bodies
		{name: "minimal payment", schema: "CreatePayment", body: minimalPayment},
		{name: "null subscription", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": raw("null")})},
		{name: "subscription terms", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": raw(terms)})},
		{name: "null address line", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.line2": raw("null")})},
		{name: "max int64", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("9223372036854775807")})},
		{name: "20 metadata properties", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"metadata": metadata(20)})},
		{name: "direct card", schema: "DirectPayment", body: directPayment},
		{name: "mobile phone with spaces", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"mobile","mobile":{"phone":"+1 (202) 555-0100"}}`)})},
		{name: "empty amount", schema: "Amount", body: `{}`},
		{name: "subscription", schema: "CreateSubscription", body: subscriptionBody},
		{name: "verification", schema: "CreateCardVerification", body: verificationBody},
		{name: "payout", schema: "CreatePayout", body: payoutBody},
		{name: "payout card and saved card left to the domain", schema: "CreatePayout", body: body(payoutBody, map[string]any{"payout_method.saved_card_id": "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"})},
		{name: "payout open device", schema: "CreatePayout", body: body(payoutBody, map[string]any{"device": map[string]any{"anything": []int{1}}})},

		// not a JSON object
		{name: "empty body", schema: "CreatePayment", body: "", code: fault.InvalidJSON},
		{name: "blank body", schema: "CreatePayment", body: " \n", code: fault.InvalidJSON},
		{name: "truncated", schema: "CreatePayment", body: `{"order_id":`, code: fault.InvalidJSON, message: "the request body is not valid JSON"},
		{name: "trailing data", schema: "CreatePayment", body: minimalPayment + ` {}`, code: fault.InvalidJSON},
		{name: "array", schema: "CreatePayment", body: `[]`, code: fault.InvalidJSON, message: "the request body must be a JSON object"},
		{name: "null", schema: "CreatePayment", body: `null`, code: fault.InvalidJSON},
		{name: "string", schema: "CreatePayment", body: `"x"`, code: fault.InvalidJSON},

		// unknown properties
		{name: "unknown top level", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"foo": 1}), code: fault.UnknownField, field: "foo", message: "unknown field"},
		{name: "unknown nested", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.nickname": "x"}), code: fault.UnknownField, field: "customer.nickname"},
		{name: "unknown deeper", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.zip": "x"}), code: fault.UnknownField, field: "customer.billing_address.zip"},
		{name: "unknown in card", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.card.pin": "1234"}), code: fault.UnknownField, field: "payment_method.card.pin"},
		{name: "unknown in subscription", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": raw(`{"interval_unit":"month","interval_count":1,"first_charge_at":"2026-08-01T00:00:00Z","disclosure_version":"v1","trial":true}`)}), code: fault.UnknownField, field: "subscription.trial"},
		{name: "direct fields not in a session", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"operation_mode": "charge"}), code: fault.UnknownField, field: "operation_mode"},
		{name: "cardholder not in verification", schema: "CreateCardVerification", body: body(verificationBody, map[string]any{"card.cardholder": "A"}), code: fault.UnknownField, field: "card.cardholder"},
		{name: "unknown first", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"zzz": 1, "order_id": "", "currency": nil}), code: fault.UnknownField, field: "zzz"},
		{name: "unknown fields by path", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"b": 1, "a": 1}), code: fault.UnknownField, field: "a"},
		{name: "case differs", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"Order_ID": "x"}), code: fault.UnknownField, field: "Order_ID"},
		{name: "unknown name with a card number", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer." + cardNumber: 1}), code: fault.UnknownField, field: "customer"},

		// required
		{name: "empty object", schema: "CreatePayment", body: `{}`, code: fault.ValidationError, field: "amount_minor", message: "is required"},
		{name: "required before other rules", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"order_id": "", "currency": nil}), code: fault.ValidationError, field: "currency", message: "is required"},
		{name: "nested required", schema: "CreateCardVerification", body: body(verificationBody, map[string]any{"card.cvv": nil}), code: fault.ValidationError, field: "card.cvv", message: "is required"},
		{name: "payment method required", schema: "DirectPayment", body: minimalPayment, code: fault.ValidationError, field: "payment_method", message: "is required"},
		{name: "card required for card", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"card"}`)}), code: fault.ValidationError, field: "payment_method.card", message: "is required"},
		{name: "wallet required for wallet", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"google_pay"}`)}), code: fault.ValidationError, field: "payment_method.wallet", message: "is required"},
		{name: "card with a wallet", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.wallet": raw(`{"token":"t"}`)}), code: fault.ValidationError, field: "payment_method.wallet", message: "is not allowed with this type"},
		{name: "card with a mobile", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.mobile": raw(`{"phone":"+12025550100"}`)}), code: fault.ValidationError, field: "payment_method.mobile", message: "is not allowed with this type"},
		{name: "wallet with a card", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.type": "apple_pay", "payment_method.wallet": raw(`{"token":"t"}`)}), code: fault.ValidationError, field: "payment_method.card", message: "is not allowed with this type"},
		{name: "mobile with a wallet", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"mobile","mobile":{"phone":"+12025550100"},"wallet":{}}`)}), code: fault.ValidationError, field: "payment_method.wallet", message: "is not allowed with this type"},
		{name: "wallet alone", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"samsung_pay","wallet":{"token":"t"},"payload_mode":"direct"}`)})},
		{name: "mobile required for mobile", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"mobile"}`)}), code: fault.ValidationError, field: "payment_method.mobile", message: "is required"},
		{name: "verify code required", schema: "VerifyCardVerification", body: `{}`, code: fault.ValidationError, field: "code", message: "is required"},
		{name: "subscription terms required", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": raw(`{"interval_unit":"month","first_charge_at":"2026-08-01T00:00:00Z","disclosure_version":"v1"}`)}), code: fault.ValidationError, field: "subscription.interval_count", message: "is required"},

		// types
		{name: "amount as string", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": "100"}), code: fault.ValidationError, field: "amount_minor", message: "must be an integer"},
		{name: "amount with fraction", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("1.5")}), code: fault.ValidationError, field: "amount_minor", message: "must be an integer"},
		{name: "order id as number", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"order_id": 5}), code: fault.ValidationError, field: "order_id", message: "must be a string"},
		{name: "customer as string", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer": "x"}), code: fault.ValidationError, field: "customer", message: "must be an object"},
		{name: "boolean", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"save_payment_method": "yes"}), code: fault.ValidationError, field: "save_payment_method", message: "must be a boolean"},
		{name: "device number", schema: "DirectPayment", body: body(directPayment, map[string]any{"device.screen_width": "wide"}), code: fault.ValidationError, field: "device.screen_width", message: "must be a number"},
		{name: "line2 type", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.line2": 1}), code: fault.ValidationError, field: "customer.billing_address.line2", message: "must be a string or null"},
		{name: "subscription string", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": "monthly"}), code: fault.ValidationError, field: "subscription", message: "must be an object or null"},
		{name: "wallet as string", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"apple_pay","wallet":"tok"}`)}), code: fault.ValidationError, field: "payment_method.wallet", message: "must be an object"},
		{name: "metadata as array", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"metadata": []int{1}}), code: fault.ValidationError, field: "metadata", message: "must be an object"},

		// lengths
		{name: "empty order id", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"order_id": ""}), code: fault.ValidationError, field: "order_id", message: "must be at least 1 character"},
		{name: "long order id", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"order_id": long(201)}), code: fault.ValidationError, field: "order_id", message: "must be at most 200 characters"},
		{name: "order id at limit", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"order_id": long(200)})},
		{name: "verification order id", schema: "CreateCardVerification", body: body(verificationBody, map[string]any{"order_id": long(129)}), code: fault.ValidationError, field: "order_id", message: "must be at most 128 characters"},
		{name: "long description", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"description": long(501)}), code: fault.ValidationError, field: "description", message: "must be at most 500 characters"},
		{name: "characters not bytes", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"description": strings.Repeat("ї", 500)})},
		{name: "short card number", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.card.number": "42424242"}), code: fault.ValidationError, field: "payment_method.card.number", message: "must be at least 12 characters"},
		{name: "long cvv", schema: "CreatePayout", body: body(payoutBody, map[string]any{"payout_method.card.cvv": "12345"}), code: fault.ValidationError, field: "payout_method.card.cvv", message: "must be at most 4 characters"},
		{name: "long line1", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.line1": long(201)}), code: fault.ValidationError, field: "customer.billing_address.line1", message: "must be at most 200 characters"},
		{name: "long line3", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.line3": long(201)}), code: fault.ValidationError, field: "customer.billing_address.line3", message: "must be at most 200 characters"},
		{name: "long phone", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method": raw(`{"type":"mobile","mobile":{"phone":"` + long(65) + `"}}`)}), code: fault.ValidationError, field: "payment_method.mobile.phone", message: "must be at most 64 characters"},
		{name: "long confirm value", schema: "ConfirmPayment", body: `{"value":"` + long(129) + `"}`, code: fault.ValidationError, field: "value", message: "must be at most 128 characters"},
		{name: "empty payout account", schema: "CreatePayout", body: body(payoutBody, map[string]any{"account": ""}), code: fault.ValidationError, field: "account", message: "must be at least 1 character"},
		{name: "empty disclosure version", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": raw(`{"interval_unit":"month","interval_count":1,"first_charge_at":"2026-08-01T00:00:00Z","disclosure_version":""}`)}), code: fault.ValidationError, field: "subscription.disclosure_version", message: "must be at least 1 character"},

		// patterns
		{name: "lower-case currency", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"currency": "uah"}), code: fault.ValidationError, field: "currency", message: "must match the pattern ^[A-Z]{3}$"},
		{name: "country", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.country": "GBR"}), code: fault.ValidationError, field: "customer.billing_address.country", message: "must match the pattern ^[A-Za-z]{2}$"},
		{name: "lower-case country allowed", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.billing_address.country": "gb"})},
		{name: "verify code letters", schema: "VerifyCardVerification", body: `{"code":"12a4"}`, code: fault.ValidationError, field: "code", message: "must match the pattern ^[0-9]{1,32}$"},
		{name: "verify code too long", schema: "VerifyCardVerification", body: `{"code":"` + strings.Repeat("1", 33) + `"}`, code: fault.ValidationError, field: "code"},

		// enums
		{name: "locale", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"locale": "de"}), code: fault.ValidationError, field: "locale", message: "must be one of: ru, en, ua"},
		{name: "operation mode", schema: "DirectPayment", body: body(directPayment, map[string]any{"operation_mode": "sale"}), code: fault.ValidationError, field: "operation_mode", message: "must be one of: charge, authorize"},
		{name: "payment method type", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.type": "cash"}), code: fault.ValidationError, field: "payment_method.type", message: "must be one of: card, apple_pay, google_pay, samsung_pay, mobile"},
		{name: "payout has no mobile", schema: "CreatePayout", body: body(payoutBody, map[string]any{"payout_method.type": "mobile"}), code: fault.ValidationError, field: "payout_method.type", message: "must be one of: card, apple_pay, google_pay, samsung_pay"},
		{name: "interval unit in terms", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"subscription": raw(`{"interval_unit":"fortnight","interval_count":1,"first_charge_at":"2026-08-01T00:00:00Z","disclosure_version":"v1"}`)}), code: fault.ValidationError, field: "subscription.interval_unit", message: "must be one of: day, week, month, year"},

		// ranges
		{name: "zero amount", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": 0}), code: fault.ValidationError, field: "amount_minor", message: "must be at least 1"},
		{name: "negative amount", schema: "CreatePayout", body: body(payoutBody, map[string]any{"amount_minor": -5}), code: fault.ValidationError, field: "amount_minor", message: "must be at least 1"},
		{name: "short expiry", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"expires_in_seconds": 299}), code: fault.ValidationError, field: "expires_in_seconds", message: "must be at least 300"},
		{name: "long expiry", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"expires_in_seconds": 7201}), code: fault.ValidationError, field: "expires_in_seconds", message: "must be at most 7200"},
		{name: "expire month", schema: "CreateCardVerification", body: body(verificationBody, map[string]any{"card.expire_month": 13}), code: fault.ValidationError, field: "card.expire_month", message: "must be at most 12"},
		{name: "interval count", schema: "CreateSubscription", body: body(subscriptionBody, map[string]any{"interval_count": 0}), code: fault.ValidationError, field: "interval_count", message: "must be at least 1"},
		{name: "capture amount", schema: "Amount", body: `{"amount_minor":0}`, code: fault.ValidationError, field: "amount_minor", message: "must be at least 1"},
		{name: "metadata properties", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"metadata": metadata(21)}), code: fault.ValidationError, field: "metadata", message: "must have at most 20 properties"},
		{name: "languages", schema: "DirectPayment", body: body(directPayment, map[string]any{"device.languages": strings.Split("a b c d e f g h i j k", " ")}), code: fault.ValidationError, field: "device.languages", message: "must have at most 10 items"},
		{name: "language item", schema: "DirectPayment", body: body(directPayment, map[string]any{"device.languages": []string{"en", "uk", "ru", long(33)}}), code: fault.ValidationError, field: "device.languages.3", message: "must be at most 32 characters"},

		// formats
		{name: "email", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"customer.email": "not-an-email"}), code: fault.ValidationError, field: "customer.email", message: "must be a valid email address"},
		{name: "relative return url", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"return_url": "/orders/1"}), code: fault.ValidationError, field: "return_url", message: "must be a valid absolute URI"},
		{name: "mandate uuid", schema: "CreateSubscription", body: body(subscriptionBody, map[string]any{"mandate_id": "mandate-1"}), code: fault.ValidationError, field: "mandate_id", message: "must be a valid UUID"},
		{name: "saved card uuid", schema: "CreatePayout", body: body(payoutBody, map[string]any{"payout_method.saved_card_id": "x"}), code: fault.ValidationError, field: "payout_method.saved_card_id", message: "must be a valid UUID"},
		{name: "date only", schema: "CreateSubscription", body: body(subscriptionBody, map[string]any{"first_run_at": "2026-08-01"}), code: fault.ValidationError, field: "first_run_at", message: "must be a valid RFC 3339 date-time"},
		{name: "date-time with offset", schema: "CreateSubscription", body: body(subscriptionBody, map[string]any{"first_run_at": "2026-08-01T10:00:00.5+03:00"})},

		// int64 bounds and what Go cannot hold
		{name: "amount over int64", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("9223372036854775808")}), code: fault.ValidationError, field: "amount_minor"},
		{name: "amount far over int64", schema: "CreatePayout", body: body(payoutBody, map[string]any{"amount_minor": raw("1e400")}), code: fault.ValidationError, field: "amount_minor"},
		{name: "amount with exponent", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("1e2")}), code: fault.ValidationError, field: "amount_minor", message: "must be an integer written without a fraction or an exponent"},
		{name: "amount as 100.0", schema: "Amount", body: `{"amount_minor":100.0}`, code: fault.ValidationError, field: "amount_minor", message: "must be an integer written without a fraction or an exponent"},
		{name: "expire year overflow", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.card.expire_year": raw("99999999999999999999")}), code: fault.ValidationError, field: "payment_method.card.expire_year", message: "must be at most 9999"},
		{name: "expire year underflow", schema: "DirectPayment", body: body(directPayment, map[string]any{"payment_method.card.expire_year": raw("-99999999999999999999")}), code: fault.ValidationError, field: "payment_method.card.expire_year", message: "must be at least 0"},
		{name: "huge exponent", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("1e999999")}), code: fault.ValidationError, field: "amount_minor", message: "must be an integer between -9223372036854775808 and 9223372036854775807"},
		{name: "huge negative exponent", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("1e-999999")}), code: fault.ValidationError, field: "amount_minor", message: "must be an integer"},
		{name: "one written long", schema: "CreatePayment", body: body(minimalPayment, map[string]any{"amount_minor": raw("1" + strings.Repeat("0", 3000) + "e-3000")}), code: fault.ValidationError, field: "amount_minor", message: "must be an integer written without a fraction or an exponent"},
		{name: "device number out of float range", schema: "DirectPayment", body: body(directPayment, map[string]any{"device.utc_offset": raw("-1e999999")}), code: fault.ValidationError, field: "device.utc_offset", message: "is out of range"},
		{name: "leap second", schema: "CreateSubscription", body: body(subscriptionBody, map[string]any{"first_run_at": "2016-12-31T23:59:60Z"}), code: fault.ValidationError, field: "first_run_at", message: "must be a valid date-time"},
	}
	v := validator(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Decode(tc.schema, []byte(tc.body), newDst(tc.schema))
			if tc.code == "" {
				require.Nil(t, err, "body %s", tc.body)
				return
			}
			require.NotNil(t, err, "body %s", tc.body)
			require.Equal(t, tc.code, err.Code, err.Error())
			require.Equal(t, tc.field, err.Field, err.Error())
			if tc.message != "" {
				require.Equal(t, tc.message, err.Message)
			}
			require.Empty(t, err.Details)
		})
	}
}

func TestDecodeFillsWireTypes(t *testing.T) {
	v := validator(t)
	var p DirectPayment
	src := body(directPayment, map[string]any{
		"subscription":                   raw("null"),
		"metadata":                       raw(`{"big":12345678901234567890,"s":"x"}`),
		"customer.billing_address.line2": raw("null"),
		"description":                    "",
		"save_payment_method":            false,
	})
	require.Nil(t, v.Decode("DirectPayment", []byte(src), &p))
	require.Equal(t, "order-1", p.OrderID)
	require.Equal(t, int64(100), p.AmountMinor)
	require.Nil(t, p.Subscription)
	require.Nil(t, p.Customer.BillingAddress.Line2)
	require.Nil(t, p.OperationMode)
	require.NotNil(t, p.Description) // present and empty differs from absent
	require.Equal(t, "", *p.Description)
	require.False(t, *p.SavePaymentMethod)
	require.Equal(t, "12345678901234567890", string(p.Metadata["big"]))
	require.Equal(t, cardNumber, p.PaymentMethod.Card.Number)

	var w DirectPayment
	require.Nil(t, v.Decode("DirectPayment", []byte(body(directPayment, map[string]any{
		"payment_method": raw(`{"type":"apple_pay","wallet":{"token":"sandbox_success","n":1.50}}`),
	})), &w))
	require.JSONEq(t, `{"token":"sandbox_success","n":1.50}`, string(w.PaymentMethod.Wallet))

	var s CreatePayment
	require.Nil(t, v.Decode("CreatePayment", []byte(body(minimalPayment, map[string]any{"subscription": raw(terms)})), &s))
	require.Equal(t, "month", s.Subscription.IntervalUnit)
	require.Equal(t, "2026-08-01T00:00:00Z", s.Subscription.FirstChargeAt.Std().Format("2006-01-02T15:04:05Z07:00"))

	// nil dst only validates
	require.Nil(t, v.Decode("CreatePayment", []byte(minimalPayment), nil))
}

func TestDecodeProgrammerErrors(t *testing.T) {
	v := validator(t)
	err := v.Decode("NoSuchSchema", []byte(minimalPayment), new(CreatePayment))
	require.NotNil(t, err)
	require.Equal(t, fault.Internal, err.Code)
	var notPointer CreatePayment
	err = v.Decode("CreatePayment", []byte(minimalPayment), notPointer)
	require.NotNil(t, err)
	require.Equal(t, fault.Internal, err.Code)
}

func TestDecodeIsDeterministic(t *testing.T) {
	v := validator(t)
	src := body(minimalPayment, map[string]any{
		"order_id": "", "currency": "x", "locale": "de", "description": strings.Repeat("d", 600),
		"customer": map[string]any{"email": "x", "first_name": strings.Repeat("n", 101)},
	})
	first := v.Decode("CreatePayment", []byte(src), new(CreatePayment))
	require.NotNil(t, first)
	require.Equal(t, "currency", first.Field)
	for range 50 {
		require.Equal(t, first, v.Decode("CreatePayment", []byte(src), new(CreatePayment)))
	}
}

// leaks reports whether an error repeats the marker anywhere a merchant or
// a log could see it.
func leaks(err *fault.Error, marker string) bool {
	if err == nil {
		return false
	}
	details, _ := json.Marshal(err.Details)
	return strings.Contains(err.Message, marker) || strings.Contains(err.Field, marker) ||
		strings.Contains(string(details), marker) || strings.Contains(err.Error(), marker)
}

func TestErrorsNeverRepeatSubmittedValues(t *testing.T) {
	v := validator(t)
	n := cardNumber
	tests := []struct {
		name, schema, body string
	}{
		{"too long order id", "CreatePayment", body(minimalPayment, map[string]any{"order_id": strings.Repeat(n, 13)})},
		{"unknown field value", "CreatePayment", body(minimalPayment, map[string]any{"card": n})},
		{"unknown field name", "CreatePayment", body(minimalPayment, map[string]any{n: "x"})},
		{"unknown nested name", "CreatePayment", body(minimalPayment, map[string]any{"customer.c" + n: "x"})},
		{"unknown name split", "CreatePayment", body(minimalPayment, map[string]any{"4242-4242-4242-4242": "x"})},
		{"enum", "CreatePayment", body(minimalPayment, map[string]any{"locale": n})},
		{"pattern", "CreatePayment", body(minimalPayment, map[string]any{"currency": n})},
		{"type", "CreatePayment", body(minimalPayment, map[string]any{"amount_minor": n})},
		{"number overflow", "CreatePayment", body(minimalPayment, map[string]any{"amount_minor": raw(n + n)})},
		{"exponent", "CreatePayment", body(minimalPayment, map[string]any{"amount_minor": raw(n + "e2")})},
		{"integer overflow in card", "DirectPayment", body(directPayment, map[string]any{"payment_method.card.expire_year": raw(n + n)})},
		{"email", "CreatePayment", body(minimalPayment, map[string]any{"customer.email": n})},
		{"uri", "CreatePayment", body(minimalPayment, map[string]any{"return_url": n})},
		{"uuid", "CreatePayout", body(payoutBody, map[string]any{"payout_method.saved_card_id": n})},
		{"date-time", "CreateSubscription", body(subscriptionBody, map[string]any{"first_run_at": n})},
		{"too long card number", "DirectPayment", body(directPayment, map[string]any{"payment_method.card.number": n + n})},
		{"cvv", "CreateCardVerification", body(verificationBody, map[string]any{"card.cvv": n})},
		{"code", "VerifyCardVerification", `{"code":"` + n + `x"}`},
		{"phone", "DirectPayment", body(directPayment, map[string]any{"payment_method": raw(`{"type":"mobile","mobile":{"phone":"` + strings.Repeat(n, 5) + `"}}`)})},
		{"subscription", "CreatePayment", body(minimalPayment, map[string]any{"subscription": n})},
		{"metadata", "CreatePayment", body(minimalPayment, map[string]any{"metadata": raw(`[` + n + `]`)})},
		{"languages", "DirectPayment", body(directPayment, map[string]any{"device.languages": []string{strings.Repeat(n, 3)}})},
		{"not json", "CreatePayment", `{"order_id":"` + n + `",`},
		{"not an object", "CreatePayment", `"` + n + `"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, strings.Contains(tc.body, n) || strings.Contains(tc.body, "4242-4242"), tc.body)
			err := v.Decode(tc.schema, []byte(tc.body), newDst(tc.schema))
			require.NotNil(t, err, tc.body)
			require.False(t, leaks(err, n), "error repeats the card number: %#v", err)
			require.False(t, leaks(err, "4242-4242"), "error repeats card digits: %#v", err)
		})
	}
}

func TestTameNumber(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "-0", "0e999999": "0", "0.000e-5": "0", "1": "1", "1.5": "1.5", "-12e3": "-12e3",
		"1e400": "1e400", "1e401": "1e400", "-1e999999": "-1e400", "1e-401": "1e-401", "1e-402": "1e-400", "-1E-999999": "-1e-400",
		"0.001e402": "0.001e402", "0.001e403": "1e400", "0.001e401": "0.001e401", "1000e-403": "1000e-403", "1000e-405": "1e-400", "1e99999999999999999999999": "1e400",
		"1e-99999999999999999999999": "1e-400", "123456789012345678901234567890": "123456789012345678901234567890",
	} {
		require.Equal(t, json.Number(want), tameNumber(json.Number(in)), in)
	}
}

func TestFieldPath(t *testing.T) {
	require.Equal(t, "", FieldPath(nil))
	require.Equal(t, "order_id", FieldPath([]string{"order_id"}))
	require.Equal(t, "device.languages.3", FieldPath([]string{"device", "languages", "3"}))
}

var fuzzSchemas = []string{
	"CreatePayment", "DirectPayment", "Amount", "ConfirmPayment", "CreateSubscription",
	"CreateCardVerification", "VerifyCardVerification", "CreatePayout", "ConfirmPayout",
}

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		"", "{}", "[]", "null", `{"a":`, minimalPayment, directPayment, subscriptionBody, verificationBody, payoutBody,
		body(minimalPayment, map[string]any{"order_id": strings.Repeat(cardNumber, 20)}),
		body(minimalPayment, map[string]any{"nickname": cardNumber}),
		body(minimalPayment, map[string]any{cardNumber: cardNumber}),
		body(minimalPayment, map[string]any{"subscription": raw(terms)}),
		body(minimalPayment, map[string]any{"amount_minor": raw(cardNumber + cardNumber)}),
		body(directPayment, map[string]any{"device.languages": []string{cardNumber, strings.Repeat(cardNumber, 3)}}),
		body(directPayment, map[string]any{"payment_method.card.number": cardNumber + "0000"}),
		`{"code":"` + cardNumber + `a"}`,
		`{"value":` + cardNumber + `}`,
	} {
		f.Add(seed)
	}
	v := validator(f)
	f.Fuzz(func(t *testing.T, src string) {
		for _, schema := range fuzzSchemas {
			err := v.Decode(schema, []byte(src), newDst(schema))
			if err == nil {
				continue
			}
			if leaks(err, cardNumber) {
				t.Fatalf("%s: error repeats the marker: %#v", schema, err)
			}
			switch err.Code {
			case fault.InvalidJSON, fault.ValidationError, fault.UnknownField:
			default:
				t.Fatalf("%s: unexpected code %s", schema, err.Code)
			}
		}
	})
}
