package stripetest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stripe/stripe-mock/embedded"
)

// Validator checks answers against Stripe's published OpenAPI document,
// the copy stripe-mock carries (docs/providers/stripe.md, "Testing"): the
// schema of the answer an operation declares for the status, or its
// default (the error object).
type Validator struct {
	routes []route
	mu     sync.Mutex
	comp   *jsonschema.Compiler
	cache  map[string]*jsonschema.Schema
}

type route struct {
	re      *regexp.Regexp
	method  string
	path    string // the document's template
	answers map[string]bool
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// NewValidator reads the document (once per process: it is 8 MB).
func NewValidator() (*Validator, error) {
	loadOnce.Do(func() { loaded, loadErr = newValidator() })
	return loaded, loadErr
}

func newValidator() (*Validator, error) {
	var doc map[string]any
	if err := json.Unmarshal(embedded.OpenAPISpec, &doc); err != nil {
		return nil, err
	}
	v := &Validator{cache: map[string]*jsonschema.Schema{}}
	defs := map[string]any{}
	for name, s := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		defs[name] = openAPI30(s)
	}
	paths := doc["paths"].(map[string]any)
	for path, item := range paths {
		pattern := "^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + "$"
		for method, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			rt := route{re: regexp.MustCompile(pattern), method: strings.ToUpper(method), path: path, answers: map[string]bool{}}
			for status, res := range o["responses"].(map[string]any) {
				content, _ := res.(map[string]any)["content"].(map[string]any)
				media, _ := content["application/json"].(map[string]any)
				if media == nil {
					continue
				}
				defs[answerDef(rt.method, path, status)] = openAPI30(media["schema"])
				rt.answers[status] = true
			}
			v.routes = append(v.routes, rt)
		}
	}
	v.comp = jsonschema.NewCompiler()
	v.comp.DefaultDraft(jsonschema.Draft2020)
	if err := v.comp.AddResource("stripe.json", map[string]any{"$defs": defs}); err != nil {
		return nil, err
	}
	return v, nil
}

func answerDef(method, path, status string) string { return method + " " + path + " " + status }

// Check validates one answer: method, the request's path, status, body.
func (v *Validator) Check(method, path string, status int, body []byte) error {
	var rt *route
	for i := range v.routes {
		r := &v.routes[i]
		// A literal route beats a template (search beats {intent}).
		if r.method == method && r.re.MatchString(path) && (rt == nil || strings.Count(r.path, "{") < strings.Count(rt.path, "{")) {
			rt = r
		}
	}
	if rt == nil {
		return fmt.Errorf("%s %s: Stripe's document has no such operation", method, path)
	}
	key := strconv.Itoa(status)
	if !rt.answers[key] {
		key = "default"
	}
	if !rt.answers[key] {
		return fmt.Errorf("%s %s: Stripe's document declares no answer %d", method, rt.path, status)
	}
	sch, err := v.schema(answerDef(rt.method, rt.path, key))
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("%s %s %d: not JSON: %w", method, path, status, err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s %s %d does not match Stripe's document: %v", method, rt.path, status, err)
	}
	return nil
}

func (v *Validator) schema(def string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[def]; ok {
		return s, nil
	}
	s, err := v.comp.Compile("stripe.json#/$defs/" + jsonPointerEscape(def))
	if err != nil {
		return nil, err
	}
	v.cache[def] = s
	return s, nil
}

func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// openAPI30 turns an OpenAPI 3.0 schema into JSON Schema: nullable becomes
// a null type (or a null branch), references point into $defs, and
// OpenAPI's own keywords go.
func openAPI30(s any) any {
	switch x := s.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = openAPI30(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, v := range x {
			switch {
			case k == "$ref":
				out[k] = strings.Replace(v.(string), "#/components/schemas/", "stripe.json#/$defs/", 1)
			case k == "nullable" || strings.HasPrefix(k, "x-") || k == "description" || k == "title":
			case k == "properties" || k == "patternProperties":
				props := map[string]any{}
				for name, p := range v.(map[string]any) {
					props[name] = openAPI30(p)
				}
				out[k] = props
			default:
				out[k] = openAPI30(v)
			}
		}
		if x["nullable"] == true {
			switch {
			case out["$ref"] != nil:
				return map[string]any{"anyOf": []any{map[string]any{"$ref": out["$ref"]}, map[string]any{"type": "null"}}}
			case out["anyOf"] != nil:
				out["anyOf"] = append(out["anyOf"].([]any), map[string]any{"type": "null"})
			case out["oneOf"] != nil:
				out["oneOf"] = append(out["oneOf"].([]any), map[string]any{"type": "null"})
			case out["type"] != nil:
				out["type"] = []any{out["type"], "null"}
				if e, ok := out["enum"].([]any); ok {
					out["enum"] = append(e, nil)
				}
			}
		}
		return out
	}
	return s
}
