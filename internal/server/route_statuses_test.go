package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// statusWalker sends requests to every API route and checks each answer
// against the OpenAPI document: the status is one the operation declares,
// and an error answer is the ErrorEnvelope (docs/api.md, "Conventions":
// each operation lists every status it can answer; one answered but not
// declared breaks generated clients).
type statusWalker struct {
	t         *testing.T
	e         *env
	doc       map[string]any
	validator *openapi.Validator
	seen      map[string]map[int]bool // route → statuses answered
}

// answered is one answer of the walker.
type answered struct {
	status int
	header http.Header
	body   []byte
}

// request describes one request of the walker.
type request struct {
	route       string // the pattern, "POST /api/v1/payments/{id}/capture"
	method      string // "" for the route's own
	target      string // path and query
	body        []byte
	contentType string // "" for application/json when there is a body
	sign        bool
	idemKey     string // POST only; "" sends none
}

// apiRoutes are the registered /api/v1 and /cabinet/v1 routes (the
// cabinet's JSON is signed and declared alike). The checkout pages
// (/checkout, /assets) are HTML for payers and are not in the document
// (docs/checkout.md); /metrics is operational. Both are left out.
func apiRoutes(e *env) []string {
	var out []string
	for _, p := range e.server.Routes() {
		if strings.Contains(p, " /api/v1/") || strings.Contains(p, " /cabinet/v1/") {
			out = append(out, p)
		}
	}
	return out
}

func splitRoute(route string) (method, path string) {
	method, path, _ = strings.Cut(route, " ")
	return method, path
}

func openRoute(route string) bool {
	return route == "GET /api/v1/health" || route == "GET /api/v1/openapi.json"
}

// declared lists the statuses the document declares for route.
func (w *statusWalker) declared(route string) []string {
	method, path := splitRoute(route)
	op, _ := w.doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	require.NotNil(w.t, op, "%s is not in the document", route)
	var out []string
	for status := range op["responses"].(map[string]any) {
		out = append(out, status)
	}
	slices.Sort(out)
	return out
}

// methodsOf lists the methods, upper case and sorted, of every document
// path that a concrete path matches (/api/v1/payments/direct matches
// /api/v1/payments/{id} too).
func (w *statusWalker) methodsOf(concrete string) []string {
	var out []string
	for path, item := range w.doc["paths"].(map[string]any) {
		if !matchPath(path, concrete) {
			continue
		}
		for m := range item.(map[string]any) {
			if m != "parameters" && !slices.Contains(out, strings.ToUpper(m)) {
				out = append(out, strings.ToUpper(m))
			}
		}
	}
	slices.Sort(out)
	return out
}

func matchPath(pattern, concrete string) bool {
	ps, cs := strings.Split(pattern, "/"), strings.Split(concrete, "/")
	if len(ps) != len(cs) {
		return false
	}
	for i := range ps {
		if ps[i] != cs[i] && !strings.HasPrefix(ps[i], "{") {
			return false
		}
	}
	return true
}

// send sends r and checks the answer against the document.
func (w *statusWalker) send(r request) answered {
	w.t.Helper()
	method, _ := splitRoute(r.route)
	if r.method == "" {
		r.method = method
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, w.e.url+r.target, body)
	require.NoError(w.t, err)
	if r.body != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if r.idemKey != "" {
		req.Header.Set("Idempotency-Key", r.idemKey)
	}
	if r.sign {
		w.e.a.Sign(req, r.body)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err, "%s %s", r.method, r.target)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	a := answered{status: resp.StatusCode, header: resp.Header, body: b}
	w.check(r, a)
	return a
}

func (w *statusWalker) check(r request, a answered) {
	w.t.Helper()
	method, path := splitRoute(r.route)
	concrete, _, _ := strings.Cut(r.target, "?")
	where := fmt.Sprintf("%s %s (as %s %s)", method, path, r.method, r.target)
	if w.seen[r.route] == nil {
		w.seen[r.route] = map[int]bool{}
	}
	w.seen[r.route][a.status] = true
	if a.status == http.StatusMethodNotAllowed {
		// 405 answers a method the path has no operation for, so no
		// operation can declare it; the Allow header names the methods the
		// document has for the path (HEAD comes with GET from ServeMux).
		require.NotEqual(w.t, method, r.method, where)
		var allow []string
		for _, m := range strings.Split(a.header.Get("Allow"), ",") {
			if m = strings.TrimSpace(m); m != "" && m != http.MethodHead {
				allow = append(allow, m)
			}
		}
		slices.Sort(allow)
		require.Equal(w.t, w.methodsOf(concrete), allow, "%s: Allow", where)
	} else {
		require.Contains(w.t, w.declared(r.route), strconv.Itoa(a.status), "%s answered %d, not declared: %s", where, a.status, a.body)
	}
	if a.status >= 400 {
		require.Equal(w.t, "application/json", a.header.Get("Content-Type"), where)
		f := w.validator.Decode("ErrorEnvelope", a.body, nil)
		require.Nil(w.t, f, "%s: the error answer is not an ErrorEnvelope: %s", where, a.body)
	}
}

// target is the route's path with {id} replaced.
func target(route, id string) string {
	_, path := splitRoute(route)
	return strings.ReplaceAll(path, "{id}", id)
}

func newKey() string { return "walk-" + uuid.NewString() }

// TestRouteStatusesDeclared walks every API route and provokes each status
// it can produce (400, 401, 404, 405, 409, 413, 415, 422, 429, 503 and its
// success), on both databases; every answer's status must be declared for
// the operation in the document and every error answer must validate
// against ErrorEnvelope.
func TestRouteStatusesDeclared(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(openapi.JSON(), &doc))
		v, err := openapi.NewValidator()
		require.NoError(t, err)

		e := newEnv(t, db, options{})
		w := &statusWalker{t: t, e: e, doc: doc, validator: v, seen: map[string]map[int]bool{}}
		routes := apiRoutes(e)
		require.NotEmpty(t, routes)
		ids := w.resources()

		big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("a"), 65<<10)...)
		big = append(big, `"}`...)
		for _, route := range routes {
			method, path := splitRoute(route)
			unknown := target(route, uuid.NewString())

			// 405: a method the path has no operation for.
			w.send(request{route: route, method: http.MethodPut, target: unknown})

			// The route's success, on resources that exist.
			real := target(route, ids[path])
			if route == "GET /api/v1/cards/information" {
				real += "?bin=42424242"
			}
			w.send(request{route: route, target: real, sign: true, idemKey: postKey(method),
				body: validBody(route, e)})
			if openRoute(route) {
				continue
			}

			w.send(request{route: route, target: unknown})                         // 401: no headers
			w.send(request{route: route, target: unknown, body: big})              // 413
			w.send(request{route: route, target: unknown + "?limit=0", sign: true, // 400 on lists
				idemKey: postKey(method)})
			if strings.Contains(path, "{id}") {
				w.send(request{route: route, target: unknown, sign: true, idemKey: postKey(method)}) // 404
			}
			if method != http.MethodPost {
				continue
			}
			w.send(request{route: route, target: real, sign: true, idemKey: newKey(), body: []byte("hello"),
				contentType: "text/plain"}) // 415
			w.send(request{route: route, target: real, sign: true, body: []byte(`{}`)})                   // 400: no key
			w.send(request{route: route, target: real, sign: true, idemKey: newKey(), body: []byte(`{`)}) // 400: invalid_json
			w.send(request{route: route, target: real, sign: true, idemKey: newKey(),
				body: []byte(`{"no_such_field":1}`)}) // 400: unknown_field
			// 422: one Idempotency-Key, two different requests.
			// The first is answered and its answer stored (201, or 404 for
			// an unknown id); the second differs in its body.
			key, second := newKey(), validBody(route, e)
			if second == nil {
				second = []byte(`{}`)
			}
			w.send(request{route: route, target: unknown, sign: true, idemKey: key, body: validBody(route, e)})
			a := w.send(request{route: route, target: unknown, sign: true, idemKey: key, body: second})
			require.Equal(t, http.StatusUnprocessableEntity, a.status, "%s: %s", route, a.body)
		}

		// 429: with a limit of one request a second on a clock that stands
		// still, the first signed request passes and every later one is
		// refused.
		limited := newEnv(t, db, options{rateLimit: 1})
		lw := &statusWalker{t: t, e: limited, doc: doc, validator: v, seen: map[string]map[int]bool{}}
		lw.send(request{route: "GET /api/v1/payment-channels", target: "/api/v1/payment-channels", sign: true})
		for _, route := range routes {
			if openRoute(route) {
				continue
			}
			method, _ := splitRoute(route)
			a := lw.send(request{route: route, target: target(route, uuid.NewString()), sign: true, idemKey: postKey(method)})
			require.Equal(t, http.StatusTooManyRequests, a.status, route)
			require.Equal(t, "1", a.header.Get("Retry-After"), route)
			w.seen[route][a.status] = true
		}

		// 503: a draining server refuses every request.
		e.server.Drain()
		for _, route := range routes {
			method, _ := splitRoute(route)
			a := w.send(request{route: route, target: target(route, ids[splitPath(route)]), sign: true, idemKey: postKey(method)})
			require.Equal(t, http.StatusServiceUnavailable, a.status, route)
		}

		// Each route produced what it can produce.
		for _, route := range routes {
			method, path := splitRoute(route)
			want := []int{405, 503}
			if !openRoute(route) {
				want = append(want, 401, 413, 429)
			}
			if strings.Contains(path, "{id}") {
				want = append(want, 404)
			}
			if method == http.MethodPost {
				want = append(want, 400, 415, 422)
			}
			for _, s := range want {
				require.True(t, w.seen[route][s], "%s never answered %d; answered %v", route, s, w.seen[route])
			}
			if method == http.MethodPost && strings.Contains(path, "{id}") {
				continue // a created payment cannot be confirmed or captured: 409 above
			}
			success := false
			for s := range w.seen[route] {
				success = success || s/100 == 2
			}
			require.True(t, success, "%s never succeeded; answered %v", route, w.seen[route])
		}
		conflicts := 0
		for _, route := range routes {
			if w.seen[route][409] {
				conflicts++
			}
		}
		require.NotZero(t, conflicts, "no route answered 409")
	})
}

func splitPath(route string) string {
	_, p := splitRoute(route)
	return p
}

func postKey(method string) string {
	if method == http.MethodPost {
		return newKey()
	}
	return ""
}

// walkBodies makes each body of a route differ from the last (the 422 of
// one Idempotency-Key with two requests needs two different bodies).
var walkBodies atomic.Int64

// validBody is a body the route accepts; nil for none.
func validBody(route string, e *env) []byte {
	switch route {
	case "POST /api/v1/payment-sessions":
		return []byte(`{"order_id":"walk-` + uuid.NewString() + `","amount_minor":100,"currency":"UAH"}`)
	case "POST /api/v1/payments/direct":
		return []byte(fmt.Sprintf(`{"order_id":"walk-%s","amount_minor":100,"currency":"UAH",
			"customer":{"email":"a@example.com"},
			"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
			uuid.NewString(), e.clock.Now().Year()+1))
	case "POST /api/v1/webhook-endpoints":
		return []byte(`{"url":"https://hooks.example/paygate/` + uuid.NewString() + `"}`)
	case "POST /api/v1/card-verifications":
		return []byte(verificationBody("walk-"+uuid.NewString(), luhnCard(int(uuid.New().ID()%1e9))))
	case "POST /api/v1/card-verifications/{id}/verify":
		return []byte(fmt.Sprintf(`{"code":"%d"}`, uuid.New().ID()))
	case "POST /api/v1/payouts":
		return []byte(`{"order_id":"walk-` + uuid.NewString() + `","amount_minor":100,"currency":"UAH","account":"main",
			"payout_method":{"type":"google_pay","wallet":{"token":"sandbox_success"}}}`)
	case "POST /api/v1/subscriptions":
		if e.walkMandate == "" {
			e.walkMandate = activeMandate(e.t, e, e.aKey.ID).ID
		}
		return []byte(fmt.Sprintf(`{"mandate_id":%q,"amount_minor":%d,"currency":"UAH","interval_unit":"month",
			"interval_count":1,"first_run_at":%q}`, e.walkMandate, 100+walkBodies.Add(1),
			e.clock.Now().Add(24*time.Hour).Format(time.RFC3339)))
	case "POST /api/v1/sandbox/clock/advance":
		return []byte(fmt.Sprintf(`{"seconds":%d}`, walkBodies.Add(1)))
	}
	return nil
}

// resources creates what the {id} routes need to exist: a hosted payment
// (and so its payment.created event) and a webhook endpoint. It answers
// the id to use for each path.
func (w *statusWalker) resources() map[string]string {
	var p struct {
		PaymentID string `json:"payment_id"`
		SessionID string `json:"session_id"`
	}
	a := w.send(request{route: "POST /api/v1/payment-sessions", target: "/api/v1/payment-sessions", sign: true,
		idemKey: newKey(), body: validBody("POST /api/v1/payment-sessions", w.e)})
	require.Equal(w.t, http.StatusCreated, a.status, "%s", a.body)
	require.NoError(w.t, json.Unmarshal(a.body, &p))

	var ep struct{ ID string }
	a = w.send(request{route: "POST /api/v1/webhook-endpoints", target: "/api/v1/webhook-endpoints", sign: true,
		idemKey: newKey(), body: validBody("POST /api/v1/webhook-endpoints", w.e)})
	require.Equal(w.t, http.StatusCreated, a.status, "%s", a.body)
	require.NoError(w.t, json.Unmarshal(a.body, &ep))

	var events struct{ Items []struct{ ID string } }
	a = w.send(request{route: "GET /api/v1/events", target: "/api/v1/events", sign: true})
	require.Equal(w.t, http.StatusOK, a.status, "%s", a.body)
	require.NoError(w.t, json.Unmarshal(a.body, &events))
	require.NotEmpty(w.t, events.Items)

	var po struct {
		PayoutID string `json:"payout_id"`
	}
	a = w.send(request{route: "POST /api/v1/payouts", target: "/api/v1/payouts", sign: true,
		idemKey: newKey(), body: validBody("POST /api/v1/payouts", w.e)})
	require.Equal(w.t, http.StatusCreated, a.status, "%s", a.body)
	require.NoError(w.t, json.Unmarshal(a.body, &po))

	ids := map[string]string{"/api/v1/payment-sessions/{id}": p.SessionID, "/api/v1/webhook-endpoints/{id}": ep.ID,
		"/api/v1/events/{id}": events.Items[0].ID, "/api/v1/events/{id}/resend": events.Items[0].ID,
		"/cabinet/v1/payment-method-tokens/{id}": savedCard(w.t, w.e, w.e.aKey.ID, "walk-payer").ID,
		"/api/v1/payouts/{id}":                   po.PayoutID, "/api/v1/payouts/{id}/confirm": po.PayoutID}
	var v struct {
		VerificationID string `json:"verification_id"`
	}
	a = w.send(request{route: "POST /api/v1/card-verifications", target: "/api/v1/card-verifications", sign: true,
		idemKey: newKey(), body: validBody("POST /api/v1/card-verifications", w.e)})
	require.Equal(w.t, http.StatusCreated, a.status, "%s", a.body)
	require.NoError(w.t, json.Unmarshal(a.body, &v))
	var sub struct{ ID string }
	a = w.send(request{route: "POST /api/v1/subscriptions", target: "/api/v1/subscriptions", sign: true,
		idemKey: newKey(), body: validBody("POST /api/v1/subscriptions", w.e)})
	require.Equal(w.t, http.StatusCreated, a.status, "%s", a.body)
	require.NoError(w.t, json.Unmarshal(a.body, &sub))
	ids["/api/v1/mandates/{id}"] = w.e.walkMandate
	for _, route := range apiRoutes(w.e) {
		_, path := splitRoute(route)
		if strings.HasPrefix(path, "/api/v1/subscriptions/{id}") {
			ids[path] = sub.ID
		}
		if strings.HasPrefix(path, "/api/v1/payments/{id}") {
			ids[path] = p.PaymentID
		}
		if strings.HasPrefix(path, "/api/v1/card-verifications/{id}") {
			ids[path] = v.VerificationID
		}
	}
	return ids
}
