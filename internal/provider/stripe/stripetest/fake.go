package stripetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// Fake is a stateful stand-in for Stripe's API, enough of it for Paygate's
// adapter: PaymentMethods, Customers (and their search), PaymentIntents
// (confirm, 3DS, capture, cancel, search), Refunds, Checkout Sessions,
// balance transactions (listed, and planted behind Paygate's back), and
// events signed as Stripe signs them. It honours Idempotency-Key as Stripe
// does (a replay answers what the first request was answered; the same key
// with other parameters is a 400), keeps a ledger of the money it moved, and
// can lose an answer or fail on purpose. Every answer it gives goes through
// Answered, where a test validates it against Stripe's published document
// (Validator), so the fake cannot drift from Stripe.
//
// Test cards (Stripe's own numbers): 4242424242424242 pays;
// 4000000000000002 declines (generic_decline); 4000000000009995
// insufficient_funds; 4000000000000069 expired_card; 4000000000000119
// processing_error; 4100000000000019 fraudulent; 4000002500003155 asks for
// 3DS on session; 4000002760003184 asks for 3DS always (off session:
// authentication_required); 4000000000000341 saves, then every charge
// declines. A number that fails Luhn is refused at PaymentMethod creation
// (incorrect_number). Tokens: tok_visa, tok_chargeDeclined.
type Fake struct {
	URL string
	// Answered sees every answer (method, the request's path, status,
	// body); nil: none is checked.
	Answered func(method, path string, status int, body []byte)
	// SearchLag makes every search find nothing, as Stripe's search does
	// for up to a minute after a write.
	SearchLag bool

	srv *httptest.Server
	mu  sync.Mutex
	now func() time.Time
	seq int

	methods   map[string]*pm
	customers map[string]*object
	intents   map[string]*intent
	refunds   map[string]*object
	charges   map[string]object
	balances  []*balance
	sessions  map[string]*session
	idem      map[string]*replay
	ledger    []Move
	events    []json.RawMessage
	faults    []Fault
	requests  []string // "POST /v1/payment_intents" of every request
}

// Move is money the fake moved: a charge (or hold), a capture, a refund.
type Move struct {
	Kind          string // charge, hold, capture, refund
	OperationID   string // the metadata's paygate_operation_id (or capture's)
	PaymentIntent string
	AmountMinor   int64
	Currency      string
}

// Fault makes the next Times POSTs under Path fail.
type Fault struct {
	Path  string // a prefix: "/v1/payment_intents"
	Times int
	Mode  FaultMode
}

// FaultMode is how a request fails.
type FaultMode int

const (
	// LoseAnswer carries the request out, then drops the connection: the
	// caller never learns what happened.
	LoseAnswer FaultMode = iota + 1
	// Unavailable answers 503 without carrying anything out.
	Unavailable
	// Garbage carries the request out and answers 200 with a body that is
	// not JSON.
	Garbage
	// Refuse closes the connection before reading the request.
	Refuse
)

type pm struct {
	object
	number, behaviour string
	customer          string
}

type object map[string]any

type intent struct {
	object
	behaviour string
}

type session struct {
	object
	successURL string
	piData     map[string]string // payment_intent_data[metadata]
	capture    string
}

type replay struct {
	fingerprint string
	status      int
	body        []byte
}

// NewFake starts a fake on loopback for the test.
func NewFake(t testing.TB) *Fake {
	f := &Fake{now: time.Now, methods: map[string]*pm{}, customers: map[string]*object{}, intents: map[string]*intent{},
		refunds: map[string]*object{}, charges: map[string]object{}, sessions: map[string]*session{}, idem: map[string]*replay{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// Close stops the fake as an acquirer that went down would: its address
// refuses connections from now on.
func (f *Fake) Close() { f.srv.Close() }

// Inject queues a fault.
func (f *Fake) Inject(x Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, x)
}

// Moves counts the money movements of an operation id or a PaymentIntent.
func (f *Fake) Moves(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.ledger {
		if m.OperationID == id || m.PaymentIntent == id {
			n++
		}
	}
	return n
}

// Ledger is every movement so far.
func (f *Fake) Ledger() []Move {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ledger)
}

// Customers is the metadata of every Customer so far, by the Customer's id.
func (f *Fake) Customers() map[string]map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]map[string]string, len(f.customers))
	for id, c := range f.customers {
		out[id] = maps.Clone((*c)["metadata"].(map[string]string))
	}
	return out
}

// Requests lists "METHOD /path" of every request so far.
func (f *Fake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// Events are the events of every change so far, oldest first, as Stripe
// would send them.
func (f *Fake) Events() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// Sign signs a payload as Stripe signs a notification for an endpoint with
// secret, at t: the Stripe-Signature header.
func Sign(payload []byte, secret string, t time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: t}).Header
}

// Notify posts the event to url signed with secret now, as Stripe does,
// and returns the answer's status.
func (f *Fake) Notify(url, secret string, event json.RawMessage) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(event))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", Sign(event, secret, f.now()))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// Authenticate ends a PaymentIntent's 3DS step as the payer would.
func (f *Fake) Authenticate(pi string, ok bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.intents[pi]
	if in == nil || in.object["status"] != "requires_action" {
		return fmt.Errorf("no PaymentIntent %s waits for 3DS", pi)
	}
	delete(in.object, "next_action")
	if !ok {
		f.declineIntent(in, "payment_intent_authentication_failure", "")
		return nil
	}
	f.settle(in)
	return nil
}

// PaySession pays a Checkout Session with a card number, as the payer on
// Stripe's page would; it returns where the payer is sent.
func (f *Fake) PaySession(cs, number string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sessions[cs]
	if s == nil || s.object["status"] != "open" {
		return "", fmt.Errorf("no open Checkout Session %s", cs)
	}
	if !luhn(number) {
		return "", fmt.Errorf("the card number is incorrect")
	}
	m := f.newPM(number, 12, 2040)
	in := f.newIntent(s.object["amount_total"].(int64), s.object["currency"].(string), s.capture, m, "")
	for k, v := range s.piData {
		in.object["metadata"].(map[string]string)[k] = v
	}
	s.object["payment_intent"] = in.object["id"]
	f.confirm(in, false)
	if st := in.object["status"]; st == "succeeded" || st == "requires_capture" {
		s.object["status"], s.object["payment_status"] = "complete", "paid"
		if st == "requires_capture" {
			s.object["payment_status"] = "unpaid"
		}
	}
	return s.successURL, nil
}

func (f *Fake) id(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s_fake%06d", prefix, f.seq)
}

func (f *Fake) unix() int64 { return f.now().Unix() }

// serve routes a request.
func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/3ds/") || strings.HasPrefix(r.URL.Path, "/pay/") {
		f.page(w, r)
		return
	}
	_ = r.ParseForm()
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	mode := f.fault(r)
	if mode == Refuse || mode == Unavailable {
		f.mu.Unlock()
		if mode == Refuse {
			hijackClose(w)
			return
		}
		f.write(w, r, http.StatusServiceUnavailable, errBody("api_error", "", "", "Stripe is unavailable (a fault the test asked for)."))
		return
	}
	status, body := f.answer(r)
	f.mu.Unlock()
	switch mode {
	case LoseAnswer:
		hijackClose(w)
		return
	case Garbage:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html>upstream hiccup</html>"))
		return
	}
	f.write(w, r, status, body)
}

func (f *Fake) write(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	if f.Answered != nil {
		f.Answered(r.Method, r.URL.Path, status, body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func hijackClose(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// fault takes the fault for r, if one is queued.
func (f *Fake) fault(r *http.Request) FaultMode {
	if r.Method != http.MethodPost {
		return 0
	}
	for i := range f.faults {
		x := &f.faults[i]
		if x.Times > 0 && strings.HasPrefix(r.URL.Path, x.Path) {
			x.Times--
			return x.Mode
		}
	}
	return 0
}

// answer authenticates, honours Idempotency-Key, and carries r out.
func (f *Fake) answer(r *http.Request) (int, []byte) {
	key := bearer(r)
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "rk_test_") {
		return http.StatusUnauthorized, errBody("invalid_request_error", "", "", "Invalid API Key provided.")
	}
	idemKey := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost || idemKey == "" {
		return f.route(r)
	}
	fp := fingerprint(r)
	if prev, ok := f.idem[key+"\x00"+idemKey]; ok {
		if prev.fingerprint != fp {
			return http.StatusBadRequest, errBody("idempotency_error", "", "",
				"Keys for idempotent requests can only be used with the same parameters they were first used with.")
		}
		return prev.status, prev.body
	}
	status, body := f.route(r)
	f.idem[key+"\x00"+idemKey] = &replay{fingerprint: fp, status: status, body: body}
	return status, body
}

func bearer(r *http.Request) string {
	if u, _, ok := r.BasicAuth(); ok {
		return u
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func fingerprint(r *http.Request) string {
	keys := make([]string, 0, len(r.PostForm))
	for k := range r.PostForm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	fmt.Fprintln(h, r.Method, r.URL.Path)
	for _, k := range keys {
		fmt.Fprintln(h, k, r.PostForm[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

var (
	piPath      = regexp.MustCompile(`^/v1/payment_intents/(pi_[A-Za-z0-9]+)(/capture|/cancel)?$`)
	sessionPath = regexp.MustCompile(`^/v1/checkout/sessions/(cs_[A-Za-z0-9]+)$`)
)

func (f *Fake) route(r *http.Request) (int, []byte) {
	p, m := r.URL.Path, r.Method
	switch {
	case m == http.MethodPost && p == "/v1/payment_methods":
		return f.createPM(r)
	case m == http.MethodPost && p == "/v1/customers":
		c := object{"id": f.id("cus"), "object": "customer", "created": f.unix(), "livemode": false,
			"metadata": metadata(r.PostForm, "metadata")}
		f.customers[c["id"].(string)] = &c
		return ok(c)
	case m == http.MethodGet && p == "/v1/customers/search":
		var out []any
		for _, c := range sorted(f.customers) {
			if f.SearchLag {
				break
			}
			if matches(r.Form.Get("query"), (*c)["metadata"].(map[string]string)) {
				out = append(out, *c)
			}
		}
		return ok(searchResult(p, out))
	case m == http.MethodPost && p == "/v1/payment_intents":
		return f.createIntent(r)
	case m == http.MethodGet && p == "/v1/payment_intents/search":
		var out []any
		for _, in := range sortedIntents(f.intents) {
			if f.SearchLag {
				break
			}
			if matches(r.Form.Get("query"), in.object["metadata"].(map[string]string)) {
				out = append(out, f.render(in, nil))
			}
		}
		return ok(searchResult(p, out))
	case piPath.MatchString(p):
		g := piPath.FindStringSubmatch(p)
		in := f.intents[g[1]]
		if in == nil {
			return http.StatusNotFound, errBody("invalid_request_error", "resource_missing", "", "No such payment_intent: '"+g[1]+"'")
		}
		switch {
		case m == http.MethodGet && g[2] == "":
			return ok(f.render(in, expand(r.Form)))
		case m == http.MethodPost && g[2] == "/capture":
			return f.capture(r, in)
		case m == http.MethodPost && g[2] == "/cancel":
			return f.cancel(r, in)
		}
	case m == http.MethodPost && p == "/v1/refunds":
		return f.refund(r)
	case m == http.MethodGet && p == "/v1/refunds":
		var out []any
		for _, rf := range sorted(f.refunds) {
			if pi := r.Form.Get("payment_intent"); pi == "" || (*rf)["payment_intent"] == pi {
				out = append(out, *rf)
			}
		}
		return ok(object{"object": "list", "url": p, "has_more": false, "data": nonNil(out)})
	case m == http.MethodGet && p == "/v1/balance_transactions":
		return f.listBalance(r)
	case m == http.MethodPost && p == "/v1/checkout/sessions":
		return f.createSession(r)
	case m == http.MethodGet && sessionPath.MatchString(p):
		s := f.sessions[sessionPath.FindStringSubmatch(p)[1]]
		if s == nil {
			return http.StatusNotFound, errBody("invalid_request_error", "resource_missing", "", "No such checkout.session")
		}
		return ok(s.object)
	}
	return http.StatusNotFound, errBody("invalid_request_error", "", "", "Unrecognized request URL ("+m+": "+p+") in the fake.")
}

func (f *Fake) createPM(r *http.Request) (int, []byte) {
	form := r.PostForm
	number := form.Get("card[number]")
	switch tok := form.Get("card[token]"); tok {
	case "":
	case "tok_visa":
		number = "4242424242424242"
	case "tok_chargeDeclined":
		number = "4000000000000002"
	default:
		return http.StatusBadRequest, errBody("invalid_request_error", "resource_missing", "", "No such token")
	}
	if number == "" || !luhn(number) {
		return http.StatusPaymentRequired, errBody("card_error", "incorrect_number", "", "Your card number is incorrect.")
	}
	month, _ := strconv.Atoi(form.Get("card[exp_month]"))
	year, _ := strconv.Atoi(form.Get("card[exp_year]"))
	if form.Get("card[token]") != "" {
		month, year = 12, 2040
	}
	if month < 1 || month > 12 {
		return http.StatusPaymentRequired, errBody("card_error", "invalid_expiry_month", "", "Your card's expiration month is invalid.")
	}
	if year < f.now().Year() {
		return http.StatusPaymentRequired, errBody("card_error", "invalid_expiry_year", "", "Your card's expiration year is invalid.")
	}
	m := f.newPM(number, month, year)
	return ok(m.object)
}

func (f *Fake) newPM(number string, month, year int) *pm {
	brand := "visa"
	if strings.HasPrefix(number, "5") || strings.HasPrefix(number, "2") {
		brand = "mastercard"
	}
	m := &pm{number: number, behaviour: behaviours[number], object: object{
		"id": f.id("pm"), "object": "payment_method", "type": "card", "created": f.unix(), "livemode": false,
		"billing_details": object{"address": nil, "email": nil, "name": nil, "phone": nil},
		"card":            object{"brand": brand, "exp_month": month, "exp_year": year, "funding": "credit", "last4": number[len(number)-4:]},
		"customer":        nil,
	}}
	f.methods[m.object["id"].(string)] = m
	return m
}

// behaviours are the test cards' outcomes (see Fake).
var behaviours = map[string]string{
	"4000000000000002": "decline:generic_decline",
	"4000000000009995": "decline:insufficient_funds",
	"4000000000000069": "decline:expired_card",
	"4000000000000119": "decline:processing_error",
	"4100000000000019": "decline:fraudulent",
	"4000002500003155": "3ds:session",
	"4000002760003184": "3ds:always",
	"4000000000000341": "decline-later:card_declined",
}

func (f *Fake) newIntent(amount int64, currency, capture string, m *pm, customer string) *intent {
	in := &intent{behaviour: m.behaviour, object: object{
		"id": f.id("pi"), "object": "payment_intent", "created": f.unix(), "livemode": false,
		"amount": amount, "amount_capturable": int64(0), "amount_received": int64(0), "currency": currency,
		"capture_method": capture, "status": "requires_confirmation", "metadata": map[string]string{},
		"payment_method": m.object["id"], "customer": nilIfEmpty(customer), "latest_charge": nil,
		"last_payment_error": nil, "next_action": nil, "setup_future_usage": nil, "payment_method_types": []string{"card"},
	}}
	f.intents[in.object["id"].(string)] = in
	return in
}

func (f *Fake) createIntent(r *http.Request) (int, []byte) {
	form := r.PostForm
	amount, err := strconv.ParseInt(form.Get("amount"), 10, 64)
	if err != nil || amount < 1 {
		return http.StatusBadRequest, errBody("invalid_request_error", "parameter_invalid_integer", "", "Invalid amount.")
	}
	m := f.methods[form.Get("payment_method")]
	if m == nil {
		return http.StatusBadRequest, errBody("invalid_request_error", "resource_missing", "", "No such PaymentMethod")
	}
	customer := form.Get("customer")
	if customer != "" && f.customers[customer] == nil {
		return http.StatusBadRequest, errBody("invalid_request_error", "resource_missing", "", "No such customer")
	}
	if m.customer != "" && m.customer != customer {
		return http.StatusBadRequest, errBody("invalid_request_error", "", "", "The PaymentMethod belongs to another Customer.")
	}
	capture := form.Get("capture_method")
	if capture == "" {
		capture = "automatic"
	}
	in := f.newIntent(amount, form.Get("currency"), capture, m, customer)
	in.object["metadata"] = metadata(form, "metadata")
	if sfu := form.Get("setup_future_usage"); sfu != "" {
		in.object["setup_future_usage"] = sfu
	}
	if d := form.Get("description"); d != "" {
		in.object["description"] = d
	}
	in.object["return_url"] = form.Get("return_url")
	if form.Get("confirm") != "true" {
		return ok(f.render(in, expand(form)))
	}
	f.confirm(in, form.Get("off_session") == "true")
	if e, ok := in.object["last_payment_error"].(object); ok && in.object["status"] == "requires_payment_method" {
		out := object{}
		for k, v := range e {
			out[k] = v
		}
		out["payment_intent"] = f.render(in, nil)
		b, _ := json.Marshal(object{"error": out})
		return http.StatusPaymentRequired, b
	}
	return ok(f.render(in, expand(form)))
}

// confirm carries a PaymentIntent's charge out as its card says.
func (f *Fake) confirm(in *intent, offSession bool) {
	kind, code, _ := strings.Cut(in.behaviour, ":")
	m := f.methods[in.object["payment_method"].(string)]
	switch {
	case kind == "decline":
		f.declineIntent(in, code, "card_declined")
	case kind == "decline-later" && m.customer != "":
		f.declineIntent(in, code, "card_declined")
	case kind == "3ds" && offSession && code == "always":
		f.declineIntent(in, "", "authentication_required")
	case kind == "3ds" && !offSession && (code == "always" || m.customer == ""):
		in.object["status"] = "requires_action"
		url := f.URL + "/3ds/" + in.object["id"].(string)
		in.object["next_action"] = object{"type": "redirect_to_url",
			"redirect_to_url": object{"url": url, "return_url": in.object["return_url"]}}
		f.event("payment_intent.requires_action", in)
	default:
		f.settle(in)
	}
}

// settle makes the charge or the hold, and saves the card when asked.
func (f *Fake) settle(in *intent) {
	o := in.object
	amount := o["amount"].(int64)
	ch := object{"id": f.id("ch"), "object": "charge", "amount": amount, "amount_captured": int64(0),
		"amount_refunded": int64(0), "billing_details": object{"address": nil, "email": nil, "name": nil, "phone": nil},
		"captured": false, "created": f.unix(), "currency": o["currency"], "disputed": false, "livemode": false,
		"metadata": maps.Clone(o["metadata"].(map[string]string)), "paid": true, "refunded": false, "status": "succeeded",
		"payment_intent": o["id"], "balance_transaction": nil,
		"payment_method_details": object{"type": "card", "card": object{"exp_month": 12, "exp_year": 2040,
			"capture_before": f.now().Add(7 * 24 * time.Hour).Unix()}}}
	o["latest_charge"] = ch
	f.charges[ch["id"].(string)] = ch
	op := o["metadata"].(map[string]string)["paygate_operation_id"]
	if o["capture_method"] == "manual" {
		o["status"], o["amount_capturable"] = "requires_capture", amount
		f.ledger = append(f.ledger, Move{"hold", op, o["id"].(string), amount, o["currency"].(string)})
		f.event("payment_intent.amount_capturable_updated", in)
	} else {
		o["status"], o["amount_received"] = "succeeded", amount
		ch["captured"], ch["amount_captured"] = true, amount
		f.ledger = append(f.ledger, Move{"charge", op, o["id"].(string), amount, o["currency"].(string)})
		f.record("charge", ch, op, o["id"].(string), amount, o["currency"].(string), f.now())
		f.event("payment_intent.succeeded", in)
	}
	if o["setup_future_usage"] == "off_session" {
		if c, _ := o["customer"].(string); c != "" {
			m := f.methods[o["payment_method"].(string)]
			m.customer, m.object["customer"] = c, c
		}
	}
}

func (f *Fake) declineIntent(in *intent, declineCode, code string) {
	if code == "" {
		code = declineCode
	}
	e := object{"type": "card_error", "code": code, "message": "Your card was declined."}
	if declineCode != "" && declineCode != code {
		e["decline_code"] = declineCode
	}
	in.object["status"], in.object["last_payment_error"] = "requires_payment_method", e
	f.event("payment_intent.payment_failed", in)
}

func (f *Fake) capture(r *http.Request, in *intent) (int, []byte) {
	o := in.object
	if o["status"] != "requires_capture" {
		return http.StatusBadRequest, errBody("invalid_request_error", "payment_intent_unexpected_state", "",
			"This PaymentIntent could not be captured because it has a status of "+o["status"].(string)+".")
	}
	amount := o["amount_capturable"].(int64)
	if s := r.PostForm.Get("amount_to_capture"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > amount {
			return http.StatusBadRequest, errBody("invalid_request_error", "amount_too_large", "", "The amount to capture is too large.")
		}
		amount = n
	}
	for k, v := range metadata(r.PostForm, "metadata") {
		o["metadata"].(map[string]string)[k] = v
	}
	o["status"], o["amount_received"], o["amount_capturable"] = "succeeded", amount, int64(0)
	ch := o["latest_charge"].(object)
	ch["captured"], ch["amount_captured"] = true, amount
	op := r.PostForm.Get("metadata[paygate_capture_operation_id]")
	f.ledger = append(f.ledger, Move{"capture", op, o["id"].(string), amount, o["currency"].(string)})
	f.record("charge", ch, op, o["id"].(string), amount, o["currency"].(string), f.now())
	f.event("payment_intent.succeeded", in)
	return ok(f.render(in, expand(r.PostForm)))
}

func (f *Fake) cancel(r *http.Request, in *intent) (int, []byte) {
	o := in.object
	switch o["status"] {
	case "requires_capture", "requires_payment_method", "requires_action", "requires_confirmation":
	default:
		return http.StatusBadRequest, errBody("invalid_request_error", "payment_intent_unexpected_state", "",
			"This PaymentIntent could not be canceled because it has a status of "+o["status"].(string)+".")
	}
	o["status"], o["amount_capturable"], o["canceled_at"] = "canceled", int64(0), f.unix()
	f.event("payment_intent.canceled", in)
	return ok(f.render(in, expand(r.PostForm)))
}

func (f *Fake) refund(r *http.Request) (int, []byte) {
	form := r.PostForm
	in := f.intents[form.Get("payment_intent")]
	if in == nil {
		return http.StatusBadRequest, errBody("invalid_request_error", "resource_missing", "", "No such payment_intent")
	}
	o := in.object
	if o["status"] != "succeeded" {
		return http.StatusBadRequest, errBody("invalid_request_error", "charge_not_refundable", "", "This PaymentIntent has no succeeded charge to refund.")
	}
	ch := o["latest_charge"].(object)
	left := o["amount_received"].(int64) - ch["amount_refunded"].(int64)
	amount := left
	if s := form.Get("amount"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return http.StatusBadRequest, errBody("invalid_request_error", "parameter_invalid_integer", "", "Invalid amount.")
		}
		amount = n
	}
	if left == 0 {
		return http.StatusBadRequest, errBody("invalid_request_error", "charge_already_refunded", "", "Charge has already been refunded.")
	}
	if amount > left {
		return http.StatusBadRequest, errBody("invalid_request_error", "amount_too_large", "", "Refund amount is greater than unrefunded amount on charge.")
	}
	ch["amount_refunded"] = ch["amount_refunded"].(int64) + amount
	ch["refunded"] = ch["amount_refunded"] == o["amount_received"]
	meta := metadata(form, "metadata")
	rf := object{"id": f.id("re"), "object": "refund", "amount": amount, "created": f.unix(), "currency": o["currency"],
		"payment_intent": o["id"], "charge": ch["id"], "status": "succeeded", "metadata": meta}
	f.refunds[rf["id"].(string)] = &rf
	f.ledger = append(f.ledger, Move{"refund", meta["paygate_operation_id"], o["id"].(string), amount, o["currency"].(string)})
	f.record("refund", rf, meta["paygate_operation_id"], o["id"].(string), -amount, o["currency"].(string), f.now())
	f.eventOf("charge.refunded", ch)
	return ok(rf)
}

func (f *Fake) createSession(r *http.Request) (int, []byte) {
	form := r.PostForm
	amount, err := strconv.ParseInt(form.Get("line_items[0][price_data][unit_amount]"), 10, 64)
	if err != nil || amount < 1 || form.Get("mode") != "payment" || form.Get("success_url") == "" {
		return http.StatusBadRequest, errBody("invalid_request_error", "", "", "The fake takes payment-mode sessions of one priced line.")
	}
	id := f.id("cs")
	s := &session{successURL: form.Get("success_url"), piData: metadata(form, "payment_intent_data[metadata]"),
		capture: form.Get("payment_intent_data[capture_method]"), object: object{
			"id": id, "object": "checkout.session", "mode": "payment", "status": "open", "payment_status": "unpaid",
			"amount_total": amount, "currency": form.Get("line_items[0][price_data][currency]"), "url": f.URL + "/pay/" + id,
			"created": f.unix(), "expires_at": f.now().Add(24 * time.Hour).Unix(), "livemode": false,
			"automatic_tax": object{"enabled": false, "liability": nil, "status": nil}, "custom_fields": []any{},
			"custom_text":          object{"after_submit": nil, "shipping_address": nil, "submit": nil, "terms_of_service_acceptance": nil},
			"payment_method_types": []string{"card"}, "shipping_options": []any{}, "payment_intent": nil,
			"metadata": metadata(form, "metadata"), "success_url": form.Get("success_url"),
		}}
	if s.capture == "" {
		s.capture = "automatic"
	}
	f.sessions[id] = s
	return ok(s.object)
}

// page serves the payer's pages: the 3DS challenge and the Checkout page,
// each a form whose buttons end the step.
func (f *Fake) page(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Path[5:]
	if r.Method == http.MethodPost {
		_ = r.ParseForm()
		var (
			to  string
			err error
		)
		if strings.HasPrefix(r.URL.Path, "/3ds/") {
			err = f.Authenticate(id, r.PostForm.Get("result") == "approve")
			f.mu.Lock()
			if in := f.intents[id]; in != nil {
				to, _ = in.object["return_url"].(string)
			}
			f.mu.Unlock()
		} else {
			to, err = f.PaySession(id, r.PostForm.Get("number"))
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if strings.HasPrefix(r.URL.Path, "/3ds/") {
		fmt.Fprintf(w, `<!doctype html><title>3D Secure (Stripe fake)</title><form method="post" action="/3ds/%s">
<button name="result" value="approve">Approve</button> <button name="result" value="deny">Deny</button></form>`, html.EscapeString(id))
		return
	}
	fmt.Fprintf(w, `<!doctype html><title>Checkout (Stripe fake)</title><form method="post" action="/pay/%s">
<input name="number" value="4242424242424242"> <button>Pay</button></form>`, html.EscapeString(id))
}

// render is a PaymentIntent as Stripe answers it, with the expansions
// asked for (latest_charge, payment_method).
func (f *Fake) render(in *intent, expand []string) object {
	out := object{}
	for k, v := range in.object {
		out[k] = v
	}
	delete(out, "return_url")
	if ch, ok := out["latest_charge"].(object); ok && !slices.Contains(expand, "latest_charge") {
		out["latest_charge"] = ch["id"]
	}
	if id, ok := out["payment_method"].(string); ok && slices.Contains(expand, "payment_method") {
		out["payment_method"] = f.methods[id].object
	}
	return out
}

func (f *Fake) event(typ string, in *intent) { f.eventOf(typ, f.render(in, nil)) }

func (f *Fake) eventOf(typ string, obj object) {
	b, _ := json.Marshal(object{"id": f.id("evt"), "object": "event", "type": typ, "api_version": sdk.APIVersion,
		"created": f.unix(), "livemode": false, "pending_webhooks": 1, "data": object{"object": obj},
		"request": object{"id": nil, "idempotency_key": nil}})
	f.events = append(f.events, b)
}

// expand is what a request asks to expand (expand[0]=…, expand[]=…).
func expand(form url.Values) []string {
	var out []string
	for k, v := range form {
		if strings.HasPrefix(k, "expand[") {
			out = append(out, v...)
		}
	}
	return out
}

// metadata reads prefix[key]=value pairs of a form.
func metadata(form url.Values, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range form {
		if strings.HasPrefix(k, prefix+"[") && strings.HasSuffix(k, "]") && len(v) > 0 {
			out[k[len(prefix)+1:len(k)-1]] = v[0]
		}
	}
	return out
}

var queryRE = regexp.MustCompile(`^metadata\['([^']+)'\]:'([^']*)'$`)

// matches evaluates the one search query the adapter sends.
func matches(query string, meta map[string]string) bool {
	m := queryRE.FindStringSubmatch(query)
	return m != nil && meta[m[1]] == m[2]
}

func searchResult(path string, data []any) object {
	return object{"object": "search_result", "url": path, "has_more": false, "next_page": nil, "data": nonNil(data)}
}

func nonNil(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

func sorted(m map[string]*object) []*object {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*object, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func sortedIntents(m map[string]*intent) []*intent {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*intent, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ok(v any) (int, []byte) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return http.StatusOK, b
}

func errBody(typ, code, declineCode, msg string) []byte {
	e := object{"type": typ, "message": msg}
	if code != "" {
		e["code"] = code
	}
	if declineCode != "" {
		e["decline_code"] = declineCode
	}
	b, _ := json.Marshal(object{"error": e})
	return b
}

func luhn(number string) bool {
	if len(number) < 12 || len(number) > 19 {
		return false
	}
	sum, double := 0, false
	for i := len(number) - 1; i >= 0; i-- {
		d := int(number[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum, double = sum+d, !double
	}
	return sum%10 == 0
}
