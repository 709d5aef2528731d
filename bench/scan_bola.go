package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
)

// bolaResult is what probing key A's ids with key B found.
type bolaResult struct {
	paths, ids, probes int
	failures           []string // answers to key B other than 404
	controlFailures    []string // key A could not read its own resource: the probe would prove nothing
	// uncovered are the paths no id of their own kind was probed on (a
	// payout's id on /payouts/{id}…): key A's flows create none yet.
	uncovered []string
}

// ownKind is the kind of id a path with {id} takes: the path segment that
// names the resource, /api/v1/<kind>/{id}… or /cabinet/v1/<kind>/{id}…; the
// cabinet's payment-method tokens are the saved cards' ids.
func ownKind(path string) string {
	kind := strings.Split(path, "/")[3]
	if kind == "payment-method-tokens" {
		return "saved-cards"
	}
	return kind
}

var pathParamRe = regexp.MustCompile(`\{[^}]+\}`)

// probeBOLA calls every operation of the OpenAPI document whose path has a
// parameter ({id}), so that a new endpoint is probed as soon as it is
// documented, with each of key A's ids (one of every kind A has) and key
// B's signature: every answer must be 404 (docs/design/decisions.md section
// 3: an id of another key is not_found). A required body is built from the
// operation's schema, so that the request reaches the ownership check (the
// schema is checked first). As a control, key A reads its own resource by
// every GET path of its kind.
func probeBOLA(ctx context.Context, a, b *client.Client, ids map[string][]string) (bolaResult, error) {
	var res bolaResult
	var doc map[string]any
	if err := json.Unmarshal(openapi.JSON(), &doc); err != nil {
		return res, err
	}
	kinds := make([]string, 0, len(ids))
	for k, list := range ids {
		if len(list) > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	res.ids = len(kinds)
	for _, op := range openapi.Operations() {
		if !pathParamRe.MatchString(op.Path) {
			continue
		}
		res.paths++
		body, err := probeBody(doc, op)
		if err != nil {
			return res, err
		}
		own := ownKind(op.Path)
		if len(ids[own]) == 0 {
			res.uncovered = append(res.uncovered, op.Method+" "+op.Path)
		}
		for _, kind := range kinds {
			target := pathParamRe.ReplaceAllString(op.Path, ids[kind][0])
			resp, err := b.Do(ctx, client.Request{Method: op.Method, Target: target, Body: body})
			if err != nil {
				return res, fmt.Errorf("%s %s: %w", op.Method, target, err)
			}
			res.probes++
			if resp.Status != http.StatusNotFound {
				res.failures = append(res.failures, fmt.Sprintf("%s %s with key A's %s id answered key B %d %s",
					op.Method, op.Path, kind, resp.Status, truncate(resp.Body, 200)))
			}
			if kind == own && op.Method == http.MethodGet {
				if resp, err := a.Do(ctx, client.Request{Method: op.Method, Target: target}); err != nil {
					return res, err
				} else if resp.Status != http.StatusOK {
					res.controlFailures = append(res.controlFailures, fmt.Sprintf("%s %s answered key A %d", op.Method, target, resp.Status))
				}
			}
		}
	}
	// A mandate is named in a body too: key B's schedule on key A's
	// mandate is 422 mandate_not_found, as an unknown one is
	// (createSubscription (POST /subscriptions)).
	if mandates := ids["mandates"]; len(mandates) > 0 {
		body := fmt.Sprintf(`{"mandate_id":%q,"amount_minor":100,"currency":"USD","interval_unit":"day","interval_count":1}`, mandates[0])
		resp, err := b.Do(ctx, client.Request{Method: http.MethodPost, Target: "/api/v1/subscriptions", Body: []byte(body)})
		if err != nil {
			return res, err
		}
		if resp.Status != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), `"mandate_not_found"`) {
			res.failures = append(res.failures, fmt.Sprintf("POST /api/v1/subscriptions with key A's mandate answered key B %d %s",
				resp.Status, truncate(resp.Body, 200)))
		}
	}
	// The saved card's id is a payment-method token's id: key A finds it in
	// its own list, so B's DELETE probed a real token.
	if cards := ids["saved-cards"]; len(cards) > 0 {
		resp, err := a.Do(ctx, client.Request{Method: http.MethodGet, Target: "/cabinet/v1/payment-method-tokens"})
		if err != nil {
			return res, err
		}
		if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), cards[0]) {
			res.controlFailures = append(res.controlFailures, fmt.Sprintf("key A's saved card %s is not in its payment-method tokens: %d", cards[0], resp.Status))
		}
	}
	return res, nil
}

// probeBody is a small valid body for an operation whose request body is
// required, built from its schema; nil when the body is optional or absent.
func probeBody(doc map[string]any, op openapi.Operation) ([]byte, error) {
	rb := dig(doc, "paths", op.Path, strings.ToLower(op.Method), "requestBody")
	if rb == nil || rb["required"] != true {
		return nil, nil
	}
	schema := dig(rb, "content", "application/json", "schema")
	v, err := sampleOf(doc, schema, 0)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op.Method, op.Path, err)
	}
	return json.Marshal(v)
}

// dig walks nested JSON objects by key; nil when a step is missing.
func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// sampleOf builds a value that satisfies schema: its example, default,
// const or first enum value when it has one, else the required properties
// of an object, or the simplest value of its type. Enough for the probes'
// bodies; not a general generator.
func sampleOf(doc, schema map[string]any, depth int) (any, error) {
	if schema == nil || depth > 10 {
		return nil, fmt.Errorf("cannot build a body: no schema")
	}
	if ref, ok := schema["$ref"].(string); ok {
		return sampleOf(doc, dig(doc, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...), depth+1)
	}
	for _, k := range []string{"example", "default", "const"} {
		if v, ok := schema[k]; ok {
			return v, nil
		}
	}
	for _, k := range []string{"examples", "enum"} {
		if list, ok := schema[k].([]any); ok && len(list) > 0 {
			return list[0], nil
		}
	}
	if list, ok := schema["oneOf"].([]any); ok && len(list) > 0 {
		first, _ := list[0].(map[string]any)
		return sampleOf(doc, first, depth+1)
	}
	typ, _ := schema["type"].(string)
	if list, ok := schema["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch typ {
	case "object", "":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			p, _ := props[name].(map[string]any)
			v, err := sampleOf(doc, p, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = v
		}
		return out, nil
	case "string":
		switch schema["format"] {
		case "uuid":
			return uuid.NewString(), nil
		case "date-time":
			return time.Now().UTC().Format(time.RFC3339), nil
		case "email":
			return "probe@example.com", nil
		case "uri":
			return "https://example.com/", nil
		}
		n := 1
		if f, ok := schema["minLength"].(float64); ok && f > 1 {
			n = int(f)
		}
		return strings.Repeat("1", n), nil // digits pass the digit-only patterns (codes)
	case "integer", "number":
		if f, ok := schema["minimum"].(float64); ok {
			return f, nil
		}
		return 1, nil
	case "boolean":
		return false, nil
	case "array":
		return []any{}, nil
	}
	return nil, fmt.Errorf("cannot build a body: type %q", typ)
}

// probeSavedCards: key B opens a hosted session for key A's payer (the
// same customer_reference, docs/design/decisions.md section 5: saved cards
// belong to a key): its page must not offer A's saved card, and its form
// naming that card must not pay. It returns what went wrong, if anything.
func (f *pciFlows) probeSavedCards(b *client.Client) ([]string, error) {
	cards := f.ids["saved-cards"]
	if len(cards) == 0 {
		return []string{"key A has no saved card to probe with"}, nil
	}
	fb := &pciFlows{ctx: f.ctx, cl: b, ids: map[string][]string{}}
	defer func() { f.answers.WriteString(fb.answers.String()) }()
	p, err := fb.payment("key B's session for key A's payer", "/api/v1/payment-sessions",
		`{"order_id":"bola-hosted","amount_minor":4600,"currency":"USD","customer_reference":"pci-payer","customer":{"email":"pci@example.com"}}`, 201)
	if err != nil {
		return nil, err
	}
	browser, page, csrf, err := fb.openCheckout(p.CheckoutURL)
	if err != nil {
		return nil, err
	}
	var out []string
	if strings.Contains(page, cards[0]) || strings.Contains(page, canaryMask) {
		out = append(out, "key B's checkout page offers key A's saved card")
	}
	if _, _, err := fb.browse(browser, "POST", p.CheckoutURL, url.Values{"csrf_token": {csrf}, "method": {"card"},
		"saved_card_id": {cards[0]}, "email": {"pci@example.com"}}); err != nil {
		return nil, err
	}
	var after openapi.Payment
	if err := b.JSON(f.ctx, "GET", "/api/v1/payments/"+p.PaymentID, nil, &after); err != nil {
		return nil, err
	}
	if after.Status != "awaiting_payment_data" {
		out = append(out, "key B's checkout form naming key A's saved card made the payment "+after.Status)
	}
	return out, nil
}
