package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/fault"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// documentURL names the document as a schema resource. It is never fetched.
const documentURL = "https://paygate.invalid/api/v1/openapi.json"

// Validator checks request bodies against the schemas of the document and
// decodes them into wire types. It is safe for concurrent use.
type Validator struct {
	schemas map[string]*jsonschema.Schema
}

// NewValidator compiles every schema of components/schemas from the
// document itself (JSON Schema draft 2020-12, formats asserted), so the
// server enforces exactly the contract it publishes.
func NewValidator() (*Validator, error) {
	c, doc, err := newCompiler()
	if err != nil {
		return nil, err
	}
	v := &Validator{schemas: map[string]*jsonschema.Schema{}}
	for _, name := range schemaNames(doc) {
		sch, err := c.Compile(schemaURL(name))
		if err != nil {
			return nil, fmt.Errorf("openapi: compile schema %s: %w", name, err)
		}
		v.schemas[name] = sch
	}
	return v, nil
}

// newCompiler returns a compiler holding the document as a resource, and
// the document decoded with exact numbers.
func newCompiler() (*jsonschema.Compiler, any, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(parsed().json))
	if err != nil {
		return nil, nil, fmt.Errorf("openapi: decode document: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "int64", Validate: validateInt64})
	if err := c.AddResource(documentURL, doc); err != nil {
		return nil, nil, fmt.Errorf("openapi: add document: %w", err)
	}
	return c, doc, nil
}

func schemaURL(name string) string {
	return documentURL + "#/components/schemas/" + name
}

// schemaNames lists components/schemas in sorted order.
func schemaNames(doc any) []string {
	root, _ := doc.(map[string]any)
	comps, _ := root["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

var (
	minInt64 = big.NewRat(-1<<63, 1)
	maxInt64 = new(big.Rat).SetInt(new(big.Int).SetUint64(1<<63 - 1))
)

// validateInt64 asserts format int64: an integer that fits in 64 bits.
// Values of other types are left to the type keyword.
func validateInt64(v any) error {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() {
		return nil // not an integer: the type keyword reports it
	}
	if r.Cmp(minInt64) < 0 || r.Cmp(maxInt64) > 0 {
		return errors.New("out of range")
	}
	return nil
}

// Decode validates body against the named schema of components/schemas and
// then decodes it into dst (a pointer to a wire type; nil only validates).
//
// Text comes first (CheckText): bytes that are not UTF-8 or a lone
// surrogate escape answer fault.InvalidJSON, U+0000 in any string or key
// fault.ValidationError. An empty body, a body that is not JSON, or one
// that is not a JSON object answers fault.InvalidJSON. A schema failure answers fault.UnknownField or
// fault.ValidationError with Field set to the dotted path of the value
// (docs/design/decisions.md section 3). Only one error is answered, chosen
// deterministically: unknown fields first, then missing required fields,
// then the rest, each group ordered by field path. No message, field or
// detail ever repeats a submitted value.
//
// An endpoint whose body is optional decides itself what an empty body
// means before calling Decode.
func (v *Validator) Decode(schema string, body []byte, dst any) *fault.Error {
	sch := v.schemas[schema]
	if sch == nil {
		return fault.Newf(fault.Internal, "openapi: no schema named %s", schema)
	}
	if f := CheckText(body); f != nil {
		return f
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return fault.New(fault.InvalidJSON, "the request body must be a JSON object")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fault.New(fault.InvalidJSON, "the request body is not valid JSON")
	}
	if _, ok := inst.(map[string]any); !ok {
		return fault.New(fault.InvalidJSON, "the request body must be a JSON object")
	}
	tameNumbers(inst)
	if err := sch.Validate(inst); err != nil {
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			return fault.New(fault.ValidationError, "the request body is not valid")
		}
		return firstProblem(verr)
	}
	if dst == nil {
		return nil
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var invalid *json.InvalidUnmarshalError
		if errors.As(err, &invalid) {
			return fault.Newf(fault.Internal, "openapi: cannot decode into %T", dst)
		}
		field, message := locateUnmarshalError(inst, reflect.TypeOf(dst))
		return fault.OnField(fault.ValidationError, field, message)
	}
	return nil
}

// tameNumbers replaces, in place, numbers of absurd magnitude (1e999999)
// by ones of the same sign and integer-ness just beyond any limit of the
// document (±1e400, ±1e-400). The validator computes numbers exactly, and
// an exponent of a million would cost it tens of milliseconds per keyword;
// no answer changes, since messages never show the value.
func tameNumbers(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if n, ok := item.(json.Number); ok {
				v[k] = tameNumber(n)
			} else {
				tameNumbers(item)
			}
		}
	case []any:
		for i, item := range v {
			if n, ok := item.(json.Number); ok {
				v[i] = tameNumber(n)
			} else {
				tameNumbers(item)
			}
		}
	}
}

// tameNumber works on the JSON number grammar: -?digits(.digits)?(e[+-]?digits)?
func tameNumber(n json.Number) json.Number {
	const limit = 400
	s := string(n)
	mantissa, exponent, hasExp := strings.Cut(strings.ToLower(s), "e")
	var exp int64
	if hasExp {
		e, err := strconv.ParseInt(exponent, 10, 64)
		if err != nil { // more digits than an int64 holds
			e = 1 << 40
			if strings.HasPrefix(exponent, "-") {
				e = -e
			}
		}
		exp = max(min(e, 1<<40), -1<<40)
	}
	sign := ""
	if strings.HasPrefix(mantissa, "-") {
		sign, mantissa = "-", mantissa[1:]
	}
	intPart, frac, _ := strings.Cut(mantissa, ".")
	digits := intPart + frac
	first := strings.IndexFunc(digits, func(r rune) bool { return r != '0' })
	if first < 0 {
		if hasExp {
			return "0"
		}
		return n
	}
	// The value is 0.d₁d₂… × 10^magnitude, d₁ the first non-zero digit.
	magnitude := int64(len(intPart)-first) + exp
	switch {
	case magnitude > limit:
		return json.Number(sign + "1e400")
	case magnitude < -limit:
		return json.Number(sign + "1e-400")
	}
	return n
}

// FieldPath joins an instance location into the dotted path used in
// error.field: object keys joined by ".", array indices as numbers
// ("device.languages.3"). The whole body is "".
func FieldPath(loc []string) string {
	return strings.Join(loc, ".")
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	timeType        = reflect.TypeFor[Time]()
)

// locateUnmarshalError finds the value the schema accepted but Go cannot
// hold (1e2 or 1.0 for an integer field, an integer beyond the field's
// range), by walking the validated instance beside the destination type.
// encoding/json's own error names no array index and quotes the value.
func locateUnmarshalError(inst any, t reflect.Type) (field, message string) {
	if loc, msg, ok := walkUnmarshal(inst, t, nil); ok {
		return FieldPath(loc), msg
	}
	return "", "the request body cannot be decoded"
}

func walkUnmarshal(v any, t reflect.Type, loc []string) ([]string, string, bool) {
	for t.Kind() == reflect.Pointer {
		if v == nil {
			return nil, "", false
		}
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, err := json.Marshal(v)
		if err != nil {
			return loc, "is not valid", true
		}
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			if t == timeType {
				return loc, "must be a valid date-time", true
			}
			return loc, "is not valid", true
		}
		return nil, "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return loc, "must be an object", true
		}
		fields := jsonFields(t)
		for _, key := range sortedKeys(obj) {
			f, ok := fields[key]
			if !ok {
				continue
			}
			if l, m, bad := walkUnmarshal(obj[key], f.Type, append(slices.Clip(loc), key)); bad {
				return l, m, true
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return loc, "must be an object", true
		}
		for _, key := range sortedKeys(obj) {
			if l, m, bad := walkUnmarshal(obj[key], t.Elem(), append(slices.Clip(loc), key)); bad {
				return l, m, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return loc, "must be an array", true
		}
		for i, item := range arr {
			if l, m, bad := walkUnmarshal(item, t.Elem(), append(slices.Clip(loc), strconv.Itoa(i))); bad {
				return l, m, true
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return checkInteger(v, loc, func(s string) error {
			_, err := strconv.ParseInt(s, 10, t.Bits())
			return err
		}, strconv.FormatInt(math.MinInt64>>(64-t.Bits()), 10), strconv.FormatInt(math.MaxInt64>>(64-t.Bits()), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return checkInteger(v, loc, func(s string) error {
			_, err := strconv.ParseUint(s, 10, t.Bits())
			return err
		}, "0", strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10))
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return loc, "must be a number", true
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			return loc, "is out of range", true
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return loc, "must be a string", true
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return loc, "must be a boolean", true
		}
	}
	return nil, "", false
}

// checkInteger reports an integer field's value that Go's parser rejects:
// out of range, or written with a fraction or an exponent.
func checkInteger(v any, loc []string, parse func(string) error, lo, hi string) ([]string, string, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return loc, "must be an integer", true
	}
	err := parse(string(n))
	if err == nil {
		return nil, "", false
	}
	if strings.ContainsAny(string(n), ".eE") {
		return loc, "must be an integer written without a fraction or an exponent", true
	}
	if errors.Is(err, strconv.ErrRange) {
		if strings.HasPrefix(string(n), "-") {
			return loc, "must be at least " + lo, true
		}
		return loc, "must be at most " + hi, true
	}
	return loc, "must be an integer", true
}

// jsonFields maps the JSON names of a struct's fields, embedded structs
// flattened, as encoding/json sees them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fields[name]; !dup || len(f.Index) < len(fields[name].Index) {
			fields[name] = f
		}
	}
	return fields
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
