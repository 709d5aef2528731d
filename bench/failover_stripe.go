package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
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

// stripeFaults is the Stripe fake's fault mix in phase 2, rolled from a
// source seeded with 7, as the sandbox's --fault-* flags are, once per
// request that moves money (a POST under /v1/payment_intents: create and
// confirm, capture, cancel): one per operation, as with the sandbox, where
// a payment is one request (a Stripe payment is three: its PaymentMethod
// and Customer first). A timeout carries the request out and withholds
// the answer until the caller gives up; an unreadable answer carries it
// out and answers 200 with a body that is not JSON (the fake's Garbage);
// a 503 does nothing.
var stripeFaults = struct {
	seed                        uint64
	timeout, unreadable, status float64
}{7, 0.1, 0.05, 0.1}

// stripeAcquirer is the Stripe fake on an address of its own, taken down
// and brought back by the bench.
type stripeAcquirer struct {
	fake *stripetest.Fake
	addr string

	mu       sync.Mutex
	srv      *http.Server
	rng      *rand.Rand           // nil: no faults
	captured map[string]time.Time // PaymentIntent → when its capture was first carried out
}

var _ failoverAcquirer = (*stripeAcquirer)(nil)

var stripeCapturePath = regexp.MustCompile(`^/v1/payment_intents/(pi_[A-Za-z0-9]+)/capture$`)

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
		s.captured = map[string]time.Time{}
	}
	s.rng = nil
	if faulty {
		s.rng = rand.New(rand.NewPCG(stripeFaults.seed, 0x5a4db0c5))
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

func (s *stripeAcquirer) faults() string {
	f := stripeFaults
	return fmt.Sprintf("seed %d, every POST under /v1/payment_intents: %.0f %% timeouts, %.0f %% unreadable answers (200, not JSON), %.0f %% 503",
		f.seed, f.timeout*100, f.unreadable*100, f.status*100)
}

// fate is what the roll decided for one request: "", timeout, unreadable
// or 503.
func (s *stripeAcquirer) fate(r *http.Request) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng == nil || r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/payment_intents") {
		return ""
	}
	x := s.rng.Float64()
	switch f := stripeFaults; {
	case x < f.timeout:
		return "timeout"
	case x < f.timeout+f.unreadable:
		return "unreadable"
	case x < f.timeout+f.unreadable+f.status:
		return "503"
	}
	return ""
}

// serve hands the request to the fake, with the fault it rolled, and
// notes when each capture is carried out.
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
	if m := stripeCapturePath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost && rec.Code == http.StatusOK {
		s.mu.Lock()
		if _, ok := s.captured[m[1]]; !ok {
			s.captured[m[1]] = time.Now()
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

// record reads the fake's ledger (charges, holds, captures, refunds) and,
// for each hold, its PaymentIntent as Stripe answers it, asked of the fake
// itself (no fault touches it): a canceled one's hold is released.
func (s *stripeAcquirer) record(context.Context) (acqRecord, error) {
	var r acqRecord
	if s.fake == nil {
		return r, errors.New("the Stripe fake never started")
	}
	kinds := map[string]string{"charge": acquirer.EntryCharge, "hold": acquirer.EntryHold,
		"capture": acquirer.EntryCapture, "refund": acquirer.EntryRefund}
	holds := map[string]int64{} // PaymentIntent → amount
	for _, m := range s.fake.Ledger() {
		kind, ok := kinds[m.Kind]
		if !ok {
			return r, fmt.Errorf("the Stripe fake's ledger has a %q", m.Kind)
		}
		s.mu.Lock()
		at := s.captured[m.PaymentIntent]
		s.mu.Unlock()
		r.add(kind, m.AmountMinor, at)
		if kind == acquirer.EntryHold {
			holds[m.PaymentIntent] = m.AmountMinor
		}
	}
	for pi, amount := range holds {
		req := httptest.NewRequest(http.MethodGet, "/v1/payment_intents/"+pi, nil)
		req.Header.Set("Authorization", "Bearer sk_test_failover")
		rec := httptest.NewRecorder()
		s.fake.Handler().ServeHTTP(rec, req)
		var got struct{ Status string }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
			return r, fmt.Errorf("PaymentIntent %s: %d %s", pi, rec.Code, rec.Body.Bytes())
		}
		if got.Status == "canceled" {
			r.add(acquirer.EntryRelease, amount, time.Time{})
		}
	}
	return r, nil
}
