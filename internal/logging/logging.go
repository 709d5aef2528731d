// Package logging builds Paygate's logger: JSON lines through log/slog
// (docs/design/dependencies.md) with card data and secrets taken out before a
// line is written. docs/design/decisions.md section 8 says card numbers, CVV,
// wallet payloads, phone numbers and codes never appear in a log, and section
// 1 says the same of secrets; this is the last line of defence behind the
// rule that such values are never logged in the first place.
package logging

import (
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
)

// Redacted replaces the value of every attribute with a sensitive key.
const Redacted = "[redacted]"

// sensitiveKeys are the attribute keys whose values are never logged,
// compared in lower case: the client API's write-only fields (card number,
// CVV, confirmation and verification codes, wallet payloads, phone numbers),
// secrets, and the headers that carry them. "code" and "value" are here
// because they are the API's names for one-time codes; log an error code
// as "error_code".
var sensitiveKeys = map[string]bool{
	"number":        true,
	"card_number":   true,
	"pan":           true,
	"cvv":           true,
	"cvc":           true,
	"code":          true,
	"otp":           true,
	"value":         true,
	"phone":         true,
	"wallet":        true,
	"secret":        true,
	"password":      true,
	"authorization": true,
	"x-signature":   true,
}

func sensitive(key string) bool {
	return sensitiveKeys[strings.ToLower(key)]
}

// New returns a logger that writes JSON lines to w from level up, with
// Redact applied to every attribute, the message included.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: Redact,
	}))
}

// Redact is the slog ReplaceAttr function New installs; it is exported for
// handlers built elsewhere (a text handler in a CLI). An attribute whose
// key, or whose enclosing group's key, is sensitive becomes "[redacted]".
// In every other value, each run of 12 to 19 digits (single spaces or
// dashes allowed between them) that passes the Luhn check is replaced by its
// mask, first six and last four (docs/design/decisions.md section 8).
// Strings, errors, numbers and values logged as structs or maps (through
// their JSON form) are all scrubbed.
func Redact(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && builtIn(a) {
		return a
	}
	if sensitive(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	for _, g := range groups {
		if sensitive(g) {
			return slog.String(a.Key, Redacted)
		}
	}
	a.Value = redactValue(a.Value)
	return a
}

// builtIn reports whether a is one of the handler's own time, level or
// source attributes, which hold no input and are left as they are.
func builtIn(a slog.Attr) bool {
	switch a.Key {
	case slog.TimeKey:
		return a.Value.Kind() == slog.KindTime
	case slog.LevelKey:
		_, ok := a.Value.Any().(slog.Level)
		return ok
	case slog.SourceKey:
		_, ok := a.Value.Any().(*slog.Source)
		return ok
	}
	return false
}

func redactValue(v slog.Value) slog.Value {
	switch v.Kind() {
	case slog.KindString:
		if s := MaskCardNumbers(v.String()); s != v.String() {
			return slog.StringValue(s)
		}
	case slog.KindInt64:
		return redactInteger(v, strconv.FormatInt(v.Int64(), 10))
	case slog.KindUint64:
		return redactInteger(v, strconv.FormatUint(v.Uint64(), 10))
	case slog.KindFloat64:
		if f := v.Float64(); f == float64(int64(f)) && f > -1e19 && f < 1e19 {
			return redactInteger(v, strconv.FormatInt(int64(f), 10))
		}
	case slog.KindAny:
		return redactAny(v)
	}
	return v
}

// redactInteger: a card number logged as a number is still a card number.
func redactInteger(v slog.Value, digits string) slog.Value {
	if s := MaskCardNumbers(digits); s != digits {
		return slog.StringValue(s)
	}
	return v
}

// redactAny scrubs a value the JSON handler would marshal: an error by its
// message, anything else by its JSON form, walked so that sensitive keys
// inside it are redacted too. A value that does not marshal is logged as
// its fmt form, scrubbed.
func redactAny(v slog.Value) slog.Value {
	x := v.Any()
	if err, ok := x.(error); ok {
		return slog.StringValue(MaskCardNumbers(err.Error()))
	}
	b, err := json.Marshal(x)
	if err != nil {
		return slog.StringValue(MaskCardNumbers(v.String()))
	}
	var tree any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return slog.StringValue(MaskCardNumbers(v.String()))
	}
	out, err := json.Marshal(redactJSON(tree))
	if err != nil {
		return slog.StringValue(Redacted)
	}
	return slog.AnyValue(json.RawMessage(out))
}

func redactJSON(x any) any {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if sensitive(k) {
				x[k] = Redacted
			} else {
				x[k] = redactJSON(v)
			}
		}
	case []any:
		for i, v := range x {
			x[i] = redactJSON(v)
		}
	case string:
		return MaskCardNumbers(x)
	case json.Number:
		if s := MaskCardNumbers(x.String()); s != x.String() {
			return s
		}
	}
	return x
}
