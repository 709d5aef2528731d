package openapi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
)

func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		name  string
		body  string
		code  fault.Code // "" for accepted
		field string
	}{
		{"plain", `{"a":"b","c":[1,"d"]}`, "", ""},
		{"multi-byte characters", `{"a":"é中😀"}`, "", ""},
		{"escaped characters", `{"a":"\u00e9\n\t\u001f"}`, "", ""},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, "", ""},
		{"escaped backslash before u0000", `{"a":"\\u0000"}`, "", ""},
		{"escaped backslash before ud800", `{"a":"\\ud800"}`, "", ""},
		{"escaped quote", `{"a":"\"\u0041"}`, "", ""},
		{"u0000 outside strings is the parser's", `{"a":1} \u0000`, "", ""},
		{"not JSON with a NUL escape", `{"a":"\u0000"`, "", ""},

		{"invalid UTF-8 in a value", "{\"a\":\"\xff\"}", fault.InvalidJSON, ""},
		{"invalid UTF-8 in a key", "{\"\xc3\":1}", fault.InvalidJSON, ""},
		{"overlong encoding", "{\"a\":\"\xc0\xaf\"}", fault.InvalidJSON, ""},
		{"encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", fault.InvalidJSON, ""},
		{"invalid UTF-8 outside strings", "{\"a\":1}\x80", fault.InvalidJSON, ""},
		{"lone high surrogate", `{"a":"\ud800"}`, fault.InvalidJSON, ""},
		{"lone high surrogate, upper case", `{"a":"x\uDBFFy"}`, fault.InvalidJSON, ""},
		{"high surrogate then a letter escape", `{"a":"\ud800\u0041"}`, fault.InvalidJSON, ""},
		{"two high surrogates", `{"a":"\ud800\ud800"}`, fault.InvalidJSON, ""},
		{"high surrogate at the end", `{"a":"\ud800`, fault.InvalidJSON, ""},
		{"lone low surrogate", `{"a":"\udc00"}`, fault.InvalidJSON, ""},
		{"lone surrogate in a key", `{"\ud800":1}`, fault.InvalidJSON, ""},

		{"NUL in a value", `{"order_id":"a\u0000b"}`, fault.ValidationError, "order_id"},
		{"NUL in a nested value", `{"metadata":{"note":"\u0000"}}`, fault.ValidationError, "metadata.note"},
		{"NUL in an array", `{"device":{"languages":["en","\u0000"]}}`, fault.ValidationError, "device.languages.1"},
		{"NUL in a key", `{"metadata":{"a\u0000":"x"}}`, fault.ValidationError, "metadata"},
		{"NUL in a top-level key", `{"\u0000":"x"}`, fault.ValidationError, ""},
		{"a key that is a card number is not echoed", `{"metadata":{"4111111111111111":"a\u0000"}}`, fault.ValidationError, "metadata"},
		{"nor one with odd characters", `{"metadata":{"a b":{"c":"\u0000"}}}`, fault.ValidationError, "metadata"},
		{"first NUL in path order", `{"z":"\u0000","b":{"c":"\u0000"},"a":1}`, fault.ValidationError, "b.c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := CheckText([]byte(c.body))
			if c.code == "" {
				require.Nil(t, f)
				return
			}
			require.NotNil(t, f)
			require.Equal(t, c.code, f.Code)
			require.Equal(t, c.field, f.Field)
		})
	}
}

// Decode applies the rule before the schema: the class of bodies that
// answered 500 on PostgreSQL (NUL) or were silently altered (invalid
// UTF-8, lone surrogates) never reaches a wire type.
func TestDecodeRefusesBadText(t *testing.T) {
	v := validator(t)
	const valid = `"amount_minor":100,"currency":"USD"`
	for _, c := range []struct {
		body  string
		code  fault.Code
		field string
	}{
		{`{"order_id":"o\u0000",` + valid + `}`, fault.ValidationError, "order_id"},
		{`{"order_id":"o",` + valid + `,"metadata":{"note":"\u0000"}}`, fault.ValidationError, "metadata.note"},
		{`{"order_id":"o",` + valid + `,"customer":{"first_name":"\u0000"}}`, fault.ValidationError, "customer.first_name"},
		{"{\"order_id\":\"\xff\"," + valid + "}", fault.InvalidJSON, ""},
		{`{"order_id":"\ud800",` + valid + `}`, fault.InvalidJSON, ""},
	} {
		f := v.Decode("CreatePayment", []byte(c.body), new(CreatePayment))
		require.NotNil(t, f, c.body)
		require.Equal(t, c.code, f.Code, c.body)
		require.Equal(t, c.field, f.Field, c.body)
	}
	require.Nil(t, v.Decode("CreatePayment", []byte(`{"order_id":"é\ud83d\ude00\u001f",`+valid+`}`), new(CreatePayment)))
}

func TestValidText(t *testing.T) {
	require.True(t, ValidText(""))
	require.True(t, ValidText("é中\t\x1f"))
	require.False(t, ValidText("a\x00"))
	require.False(t, ValidText("\xff"))
	require.False(t, ValidText("\xed\xa0\x80"))
}

func BenchmarkCheckText(b *testing.B) {
	body := []byte(`{"order_id":"order-1","amount_minor":100,"currency":"USD","description":"A \"quoted\" thing \u00e9",` +
		`"metadata":{"a":"b","c":"d"},"customer":{"first_name":"Ann","email":"ann@example.com"}}`)
	for b.Loop() {
		if CheckText(body) != nil {
			b.Fatal("refused")
		}
	}
}
