package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/provider/stripe/stripetest"
)

// stripeProcessingError is Stripe's test card that declines with
// processing_error, the one decline Paygate moves a new payment on.
const stripeProcessingError = "4000000000000119"

// failoverStripe is the failover check with Stripe beside the sandbox:
// acquirer A is the Stripe fake (internal/provider/stripe/stripetest),
// served over HTTP on loopback by the bench process, B a sandbox acquirer.
// A goes down by closing its listener and its connections (its address
// refuses connections; its PaymentIntents stay) and comes back on the same
// address; its fault mix is stripeFaults, with Stripe's processing_error
// card on every tenth payment of phase 2 (see runFailover).
func failoverStripe(ctx context.Context, c checkConfig) (checkResult, error) {
	newA := func(string, string, string) failoverAcquirer { return &stripeAcquirer{} }
	return runFailover(ctx, c, "failover-stripe", newA, stripeProcessingError)
}

// stripeFaults is the Stripe fake's fault mix in phase 2
// (docs/reliability.md, Failover): one roll per request of three kinds,
// each kind from a source of its own, seeded as the sandbox's --fault-*
// flags are, so that the faults a kind meets do not depend on how many
// requests of the others came first. Requests that move money (a POST
// under /v1/payment_intents: create and confirm, capture, cancel): one
// roll per operation, as with the sandbox, where a payment is one request
// (a Stripe payment is two or more: its PaymentMethod first, which is not
// rolled on). Customer creations (POST /v1/customers, made when a payment
// saves its card), at the same rates. Reads (every GET: a PaymentIntent
// read or searched for when an outcome is unknown, the Refunds of one,
// the Customer search of a payment that saves its card), at half those
// rates: a fault on an inquiry costs the payment a round of asking, and
// the run should not grow much. A timeout carries the request out and
// withholds the answer until the caller gives up; an unreadable answer
// carries it out and answers 200 with a body that is not JSON (the
// fake's Garbage); a 503 does nothing.
var stripeFaults = []stripeRoll{
	{"payment_intents POSTs", 7, stripeRates{0.1, 0.05, 0.1}},
	{"Customer creations", 9, stripeRates{0.1, 0.05, 0.1}},
	{"reads", 8, stripeRates{0.05, 0.025, 0.05}},
}

// stripeRoll is the roll on one kind of request.
type stripeRoll struct {
	kind  string
	seed  uint64
	rates stripeRates
}

// stripeRates are the shares of timeouts, unreadable answers and 503s.
type stripeRates struct{ timeout, unreadable, status float64 }

// stripeKind is the index in stripeFaults of r's kind; -1: not rolled on.
func stripeKind(r *http.Request) int {
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/payment_intents"):
		return 0
	case r.Method == http.MethodPost && r.URL.Path == "/v1/customers":
		return 1
	case r.Method == http.MethodGet:
		return 2
	}
	return -1
}

// stripeAcquirer is the Stripe fake on an address of its own, taken down
// and brought back by the bench.
type stripeAcquirer struct {
	fake *stripetest.Fake
	addr string

	mu     sync.Mutex
	srv    *http.Server
	dice   []*rand.Rand         // one a kind of stripeFaults; nil: no faults
	met    map[string]int       // "kind fate" → faults met, "kind" → requests rolled on
	landed map[string]time.Time // PaymentIntent → when its capture or cancel was first carried out
}

var _ failoverAcquirer = (*stripeAcquirer)(nil)

var stripeFollowUpPath = regexp.MustCompile(`^/v1/payment_intents/(pi_[A-Za-z0-9]+)/(capture|cancel)$`)

func (s *stripeAcquirer) up(ctx context.Context, faulty bool) error {
	addr := cmp.Or(s.addr, "127.0.0.1:0")
	var (
		ln  net.Listener
		err error
	)
	for range 20 { // a restart whose port is not free yet is tried again
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("the Stripe fake on %s: %w", addr, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fake == nil {
		s.addr = ln.Addr().String()
		s.fake = stripetest.Standalone("http://" + s.addr)
		s.landed = map[string]time.Time{}
	}
	s.dice = nil
	if faulty {
		for _, f := range stripeFaults {
			s.dice = append(s.dice, rand.New(rand.NewPCG(f.seed, 0x5a4db0c5)))
		}
		s.met = map[string]int{}
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// down closes the listener and every connection at once, as a killed
// process would: requests being carried out finish, their answers are
// lost.
func (s *stripeAcquirer) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

func (s *stripeAcquirer) account(dir string) ([]string, error) {
	file := filepath.Join(dir, "stripe.key")
	if err := os.WriteFile(file, []byte("sk_test_failover"), 0o600); err != nil {
		return nil, err
	}
	return []string{"--kind", "stripe", "--secret-key-file", file, "--base-url", "http://" + s.addr}, nil
}

func (s *stripeAcquirer) describe() string {
	return "the Stripe fake, served by the bench process; down: its listener and connections closed"
}

func (s *stripeAcquirer) faults() (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mix, met, unmet []string
	for _, f := range stripeFaults {
		mix = append(mix, fmt.Sprintf("%s (seed %d) %.1f %% timeouts, %.1f %% unreadable answers (200, not JSON), %.1f %% 503",
			f.kind, f.seed, f.rates.timeout*100, f.rates.unreadable*100, f.rates.status*100))
		t, u, x := s.met[f.kind+" timeout"], s.met[f.kind+" unreadable"], s.met[f.kind+" 503"]
		met = append(met, fmt.Sprintf("%s %d timeouts, %d unreadable, %d 503 (of %d)", f.kind, t, u, x, s.met[f.kind]))
		if t+u+x == 0 {
			unmet = append(unmet, f.kind)
		}
	}
	return strings.Join(mix, "; ") + "; met: " + strings.Join(met, "; "), unmet
}

// moves: Stripe's 503 does not say that nothing was done, so in phase 2
// only its reroutable decline moves a payment, or A's circuit if it opens.
func (s *stripeAcquirer) moves() []string { return []string{"soft_decline", "circuit_open"} }

// fate is what the roll decided for one request: "", timeout, unreadable
// or 503.
func (s *stripeAcquirer) fate(r *http.Request) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := stripeKind(r)
	if s.dice == nil || k < 0 {
		return ""
	}
	f := stripeFaults[k]
	s.met[f.kind]++
	fate := ""
	switch x := s.dice[k].Float64(); {
	case x < f.rates.timeout:
		fate = "timeout"
	case x < f.rates.timeout+f.rates.unreadable:
		fate = "unreadable"
	case x < f.rates.timeout+f.rates.unreadable+f.rates.status:
		fate = "503"
	default:
		return ""
	}
	s.met[f.kind+" "+fate]++
	return fate
}

// serve hands the request to the fake, with the fault it rolled, and
// notes when each capture and cancel is carried out.
func (s *stripeAcquirer) serve(w http.ResponseWriter, r *http.Request) {
	fate := s.fate(r)
	if fate == "503" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"type":"api_error","message":"Stripe is unavailable (a fault the bench asked for)."}}`))
		return
	}
	rec := httptest.NewRecorder()
	s.fake.Handler().ServeHTTP(rec, r)
	if m := stripeFollowUpPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost && rec.Code == http.StatusOK {
		s.mu.Lock()
		if _, ok := s.landed[m[1]]; !ok {
			s.landed[m[1]] = time.Now()
		}
		s.mu.Unlock()
	}
	switch fate {
	case "timeout":
		select { // until the caller gives up (or the fake goes down)
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		panic(http.ErrAbortHandler)
	case "unreadable":
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html>upstream hiccup</html>"))
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// record reads the fake's ledger (charges, holds, captures, refunds) and
// PaymentIntents as Stripe answers them, asked of the fake itself (no
// fault touches it): a hold's canceled PaymentIntent is its release; a
// charge that asked to save its card has it saved when its PaymentMethod
// belongs to the PaymentIntent's Customer. It also counts the payers
// with more than one Customer (docs/design/decisions.md section 16: one
// a payer).
func (s *stripeAcquirer) record(context.Context) (acqRecord, error) {
	r := acqRecord{saved: map[int64]bool{}}
	if s.fake == nil {
		return r, errors.New("the Stripe fake never started")
	}
	kinds := map[string]string{"charge": acquirer.EntryCharge, "hold": acquirer.EntryHold,
		"capture": acquirer.EntryCapture, "refund": acquirer.EntryRefund}
	holds, charges := map[string]int64{}, map[string]int64{} // PaymentIntent → amount
	s.mu.Lock()
	landed := maps.Clone(s.landed)
	s.mu.Unlock()
	for _, m := range s.fake.Ledger() {
		kind, ok := kinds[m.Kind]
		if !ok {
			return r, fmt.Errorf("the Stripe fake's ledger has a %q", m.Kind)
		}
		r.add(kind, m.AmountMinor, landed[m.PaymentIntent])
		switch kind {
		case acquirer.EntryHold:
			holds[m.PaymentIntent] = m.AmountMinor
		case acquirer.EntryCharge:
			charges[m.PaymentIntent] = m.AmountMinor
		}
	}
	for pi, amount := range holds {
		got, err := s.intent(pi)
		if err != nil {
			return r, err
		}
		if got.Status == "canceled" {
			r.add(acquirer.EntryRelease, amount, landed[pi])
		}
	}
	for pi, amount := range charges {
		got, err := s.intent(pi)
		if err != nil {
			return r, err
		}
		if got.SetupFutureUsage == "off_session" {
			r.saved[amount] = got.Customer != "" && got.PaymentMethod.Customer == got.Customer
		}
	}
	payers := map[string]int{}
	for _, meta := range s.fake.Customers() {
		if p := meta["paygate_payer"]; p != "" {
			if payers[p]++; payers[p] == 2 {
				r.payersTwice++
			}
		}
	}
	return r, nil
}

// stripeIntent is what record reads of a PaymentIntent.
type stripeIntent struct {
	Status           string `json:"status"`
	Customer         string `json:"customer"`
	SetupFutureUsage string `json:"setup_future_usage"`
	PaymentMethod    struct {
		Customer string `json:"customer"`
	} `json:"payment_method"`
}

// intent reads a PaymentIntent, its PaymentMethod expanded, from the
// fake's handler, past the fault mix.
func (s *stripeAcquirer) intent(pi string) (stripeIntent, error) {
	req := httptest.NewRequest(http.MethodGet, "/v1/payment_intents/"+pi+"?expand[]=payment_method", nil)
	req.Header.Set("Authorization", "Bearer sk_test_failover")
	rec := httptest.NewRecorder()
	s.fake.Handler().ServeHTTP(rec, req)
	var got stripeIntent
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		return got, fmt.Errorf("PaymentIntent %s: %d %s", pi, rec.Code, rec.Body.Bytes())
	}
	return got, nil
}
