package openapi

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/fault"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// problem is one schema failure, phrased for a merchant.
type problem struct {
	rank    int // 0 unknown field, 1 missing required field, 2 anything else
	code    fault.Code
	field   string
	message string
}

// firstProblem turns the library's error tree into the one error Paygate
// answers. The library's own messages quote the rejected value, so they are
// never used: messages are built from the keyword and the schema's limits.
func firstProblem(verr *jsonschema.ValidationError) *fault.Error {
	ps := problems(verr)
	if len(ps) == 0 {
		return fault.OnField(fault.ValidationError, FieldPath(verr.InstanceLocation), "is not valid")
	}
	slices.SortStableFunc(ps, func(a, b problem) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if c := strings.Compare(a.field, b.field); c != 0 {
			return c
		}
		return strings.Compare(a.message, b.message)
	})
	return fault.OnField(ps[0].code, ps[0].field, ps[0].message)
}

// problems flattens an error tree into its leaves. For anyOf and oneOf it
// keeps the branches that failed on more than the value's type: for
// "SubscriptionTerms or null", an object with a bad interval_unit reports
// the interval_unit, not "must be null".
func problems(e *jsonschema.ValidationError) []problem {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(e.Causes) > 0 {
			return alternatives(e)
		}
	}
	if len(e.Causes) > 0 {
		var ps []problem
		for _, c := range e.Causes {
			ps = append(ps, problems(c)...)
		}
		return ps
	}
	return leaf(e)
}

func alternatives(e *jsonschema.ValidationError) []problem {
	var types []string
	for _, branch := range e.Causes {
		if want, ok := typeMismatch(branch, e.InstanceLocation); ok {
			for _, t := range want {
				if !slices.Contains(types, t) {
					types = append(types, t)
				}
			}
			continue
		}
		return problems(branch) // the first branch of the right type
	}
	return []problem{other(e.InstanceLocation, "must be "+typeList(types))}
}

// typeMismatch reports whether a branch failed only because the value at
// loc is not of the branch's type, and which types the branch wanted.
func typeMismatch(e *jsonschema.ValidationError, loc []string) ([]string, bool) {
	for len(e.Causes) == 1 {
		e = e.Causes[0]
	}
	t, ok := e.ErrorKind.(*kind.Type)
	if !ok || len(e.Causes) > 0 || !slices.Equal(e.InstanceLocation, loc) {
		return nil, false
	}
	return t.Want, true
}

func other(loc []string, message string) problem {
	return problem{rank: 2, code: fault.ValidationError, field: FieldPath(loc), message: message}
}

func required(loc []string, names []string) []problem {
	ps := make([]problem, 0, len(names))
	for _, name := range names {
		ps = append(ps, problem{
			rank: 1, code: fault.ValidationError,
			field: FieldPath(append(slices.Clip(loc), name)), message: "is required",
		})
	}
	return ps
}

func unknown(parent []string, name string) problem {
	loc := parent
	if safeKey(name) {
		loc = append(slices.Clip(parent), name)
	}
	return problem{rank: 0, code: fault.UnknownField, field: FieldPath(loc), message: "unknown field"}
}

// safeKey reports whether an unknown property's name may be echoed in
// error.field. A name is chosen by the sender and could carry a card
// number, so a name with more than four digits, or with characters outside
// [A-Za-z0-9_-], or over 64 characters, is not echoed: the error then names
// the object that holds it.
func safeKey(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	digits := 0
	for _, r := range name {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == '-':
		default:
			return false
		}
	}
	return digits <= 4
}

func leaf(e *jsonschema.ValidationError) []problem {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		ps := make([]problem, 0, len(k.Properties))
		for _, name := range k.Properties {
			ps = append(ps, unknown(loc, name))
		}
		return ps
	case *kind.FalseSchema:
		if len(loc) > 0 && (strings.HasSuffix(e.SchemaURL, "/unevaluatedProperties") ||
			strings.HasSuffix(e.SchemaURL, "/additionalProperties")) {
			return []problem{unknown(loc[:len(loc)-1], loc[len(loc)-1])}
		}
		return []problem{other(loc, "is not allowed")}
	case *kind.Required:
		return required(loc, k.Missing)
	case *kind.DependentRequired:
		return required(loc, k.Missing)
	case *kind.Dependency:
		return required(loc, k.Missing)
	case *kind.Type:
		return []problem{other(loc, "must be "+typeList(k.Want))}
	case *kind.Enum:
		vals := make([]string, len(k.Want))
		for i, w := range k.Want {
			vals[i] = display(w)
		}
		return []problem{other(loc, "must be one of: "+strings.Join(vals, ", "))}
	case *kind.Const:
		return []problem{other(loc, "must be "+display(k.Want))}
	case *kind.MinLength:
		return []problem{other(loc, fmt.Sprintf("must be at least %s", plural(k.Want, "character")))}
	case *kind.MaxLength:
		return []problem{other(loc, fmt.Sprintf("must be at most %s", plural(k.Want, "character")))}
	case *kind.Pattern:
		return []problem{other(loc, "must match the pattern "+k.Want)}
	case *kind.Format:
		return []problem{other(loc, formatMessage(k.Want))}
	case *kind.Minimum:
		return []problem{other(loc, "must be at least "+ratString(k.Want))}
	case *kind.Maximum:
		return []problem{other(loc, "must be at most "+ratString(k.Want))}
	case *kind.ExclusiveMinimum:
		return []problem{other(loc, "must be greater than "+ratString(k.Want))}
	case *kind.ExclusiveMaximum:
		return []problem{other(loc, "must be less than "+ratString(k.Want))}
	case *kind.MultipleOf:
		return []problem{other(loc, "must be a multiple of "+ratString(k.Want))}
	case *kind.MinItems:
		return []problem{other(loc, fmt.Sprintf("must have at least %s", plural(k.Want, "item")))}
	case *kind.MaxItems:
		return []problem{other(loc, fmt.Sprintf("must have at most %s", plural(k.Want, "item")))}
	case *kind.MinProperties:
		return []problem{other(loc, fmt.Sprintf("must have at least %s", plural(k.Want, "property")))}
	case *kind.MaxProperties:
		return []problem{other(loc, fmt.Sprintf("must have at most %s", plural(k.Want, "property")))}
	case *kind.UniqueItems:
		return []problem{other(loc, "must not contain duplicate items")}
	case *kind.PropertyNames:
		return []problem{other(loc, "has a property name that is not allowed")}
	case *kind.Not:
		if strings.Contains(e.SchemaURL, "/then/properties/") {
			// A property an if/then rule forbids for the object's kind
			// (`{not: {}}`, as generators cannot read a false schema), such
			// as payment_method.wallet with type card: the property is
			// known, so it is a validation_error on it, not an unknown field.
			return []problem{other(loc, "is not allowed with this type")}
		}
		return []problem{other(loc, "is not allowed")}
	}
	return []problem{other(loc, "is not valid")}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

var typeNames = map[string]string{
	"string": "a string", "integer": "an integer", "number": "a number",
	"boolean": "a boolean", "object": "an object", "array": "an array", "null": "null",
}

// typeList phrases JSON types: "an object or null".
func typeList(types []string) string {
	names := make([]string, 0, len(types))
	for _, t := range types {
		if n, ok := typeNames[t]; ok {
			names = append(names, n)
		} else {
			names = append(names, t)
		}
	}
	// null reads best last
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case a == "null" && b != "null":
			return 1
		case b == "null" && a != "null":
			return -1
		}
		return 0
	})
	switch len(names) {
	case 0:
		return "of another type"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

var formatMessages = map[string]string{
	"email":     "must be a valid email address",
	"uuid":      "must be a valid UUID",
	"date-time": "must be a valid RFC 3339 date-time",
	"date":      "must be a valid RFC 3339 date",
	"uri":       "must be a valid absolute URI",
	"int64":     "must be an integer between -9223372036854775808 and 9223372036854775807",
}

func formatMessage(format string) string {
	if m, ok := formatMessages[format]; ok {
		return m
	}
	return "must be a valid " + format
}

// display renders a value of the schema (an enum or const value), never
// one of the instance.
func display(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case json.Number:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "the limit"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}
