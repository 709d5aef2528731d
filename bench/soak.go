package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// soakCards are the test cards of docs/sandbox.md a fault soak pays with,
// in turn, and the final status each must reach whatever faults it meets.
var soakCards = []struct{ number, want string }{
	{"4242424242424242", "succeeded"},
	{"5555555555554444", "succeeded"},
	{"4000000000000002", "declined"},
	{"4242424242424242", "succeeded"},
	{"4000000000009995", "declined"},
	{"4000000000000119", "failed"},
}

// faultSoak sends direct payments through a sandbox acquirer that times
// out 10 % of its answers, fails 5 % with a 503 and cuts 5 % in half, and
// checks each final payment against the acquirer's ledger: a succeeded
// payment has exactly one charge, a declined or failed one none, and the
// ledger holds no other money movement (docs/design/decisions.md section 4: a
// retried call never charges twice; an unknown outcome is asked for, never
// sent again).
func faultSoak(ctx context.Context, c checkConfig) (checkResult, error) {
	n := c.n
	if n == 0 {
		n = 2000
	}
	res := checkResult{name: "fault-soak", pass: true}
	const providerTimeout = time.Second
	acq, err := startSoakAcquirer(acquirer.Faults{Seed: 1, TimeoutRate: 0.10, ServerErrorRate: 0.05, UnreadableRate: 0.05},
		3*providerTimeout)
	if err != nil {
		return res, err
	}
	defer acq.close()
	pg, err := startChecked(ctx, c, "soak", paygateSpec{args: []string{"--sandbox-url", acq.url, "--sandbox-key", acq.key,
		"--provider-timeout", providerTimeout.String(), "--job-timeout", "10s"}})
	if err != nil {
		return res, err
	}
	defer pg.close()
	fmt.Fprintf(c.log, "fault-soak: %d payments on %s through %s\n", n, c.db, acq.url)

	// Each payment has its own amount, so that the ledger tells them apart.
	started := time.Now()
	want, err := soakPay(ctx, pg, n)
	if err != nil {
		return res, err
	}
	left, err := waitAllFinal(ctx, pg.client, 5*time.Minute+time.Duration(n)*100*time.Millisecond)
	if err != nil {
		return res, err
	}
	finalIn := time.Since(started)
	payments, err := readAllPages[openapi.Payment](ctx, pg.client, "/api/v1/payments")
	if err != nil {
		return res, err
	}
	ledger := acq.srv.Ledger()
	sum := compareLedger(payments, want, ledger)

	res.add("payments", "%d on %s (%s)", n, c.db, sum.statuses())
	res.add("acquirer calls", "%d (inquiries %d)", acq.calls.Load(), acq.inquiries.Load())
	res.add("faults met", "%d timeouts, %d 5xx, %d unreadable answers", acq.timeouts.Load(), acq.serverErrors.Load(), acq.unreadable.Load())
	res.add("Paygate saw", "%s", providerErrors(pg.out.String()))
	res.add("ledger", "%d charges, %d other entries", sum.charges, sum.otherEntries)
	res.add("mismatches", "%d", len(sum.mismatches))
	res.add("wrong outcomes", "%d", len(sum.wrong))
	res.add("time to final", "%s (%.1f payments/s)", finalIn.Round(time.Millisecond), float64(n)/finalIn.Seconds())
	if left > 0 {
		res.fail("%d payments still not final after %s", left, finalIn.Round(time.Second))
	}
	if len(payments) != n {
		res.fail("%d payments listed, %d created", len(payments), n)
	}
	if len(sum.mismatches) > 0 {
		res.fail("ledger mismatches: %s", someOf(sum.mismatches))
	}
	if len(sum.wrong) > 0 {
		res.fail("outcomes other than the test card's: %s", someOf(sum.wrong))
	}
	if acq.timeouts.Load() == 0 || acq.serverErrors.Load() == 0 || acq.unreadable.Load() == 0 {
		res.fail("a fault was never met: the soak proved nothing about it")
	}
	return res, nil
}

// soakPay creates n direct payments, eight at a time, and returns the
// status each amount must end in.
func soakPay(ctx context.Context, pg *checkedPaygate, n int) (map[int64]string, error) {
	want := make(map[int64]string, n)
	var mu sync.Mutex
	var firstErr error
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				card := soakCards[i%len(soakCards)]
				amount := int64(1000 + i)
				var p openapi.Payment
				err := pg.client.JSON(ctx, "POST", "/api/v1/payments/direct",
					json.RawMessage(directCard(fmt.Sprintf("soak-%d", i), amount, card.number, "123")), &p)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("create payment %d: %w", i, err)
				}
				want[amount] = card.want
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return want, firstErr
}

// ledgerSummary is what comparing payments with the ledger found.
type ledgerSummary struct {
	byStatus     map[string]int
	charges      int
	otherEntries int
	mismatches   []string // payments whose charges do not match their status, and charges of no payment
	wrong        []string // payments whose status is not their card's
}

func (s ledgerSummary) statuses() string { return tallyText(s.byStatus) }

// compareLedger: succeeded ⇔ exactly one charge of its amount; declined
// or failed ⇔ none; a charge of no payment, or any other kind of entry
// (a hold, a refund), is a mismatch too.
func compareLedger(payments []openapi.Payment, want map[int64]string, ledger []acquirer.Entry) ledgerSummary {
	s := ledgerSummary{byStatus: map[string]int{}}
	charges := map[int64]int{}
	for _, e := range ledger {
		if e.Kind == acquirer.EntryCharge {
			charges[e.AmountMinor]++
			s.charges++
			continue
		}
		s.otherEntries++
		s.mismatches = append(s.mismatches, fmt.Sprintf("unexpected %s entry of %d", e.Kind, e.AmountMinor))
	}
	for _, p := range payments {
		s.byStatus[p.Status]++
		expected := 0
		if p.Status == "succeeded" {
			expected = 1
		}
		if got := charges[p.AmountMinor]; got != expected {
			s.mismatches = append(s.mismatches, fmt.Sprintf("payment %s %s with %d charges", p.PaymentID, p.Status, got))
		}
		delete(charges, p.AmountMinor)
		if w, ok := want[p.AmountMinor]; !ok || w != p.Status {
			s.wrong = append(s.wrong, fmt.Sprintf("payment %s %s, want %s", p.PaymentID, p.Status, w))
		}
	}
	for amount, k := range charges {
		s.mismatches = append(s.mismatches, fmt.Sprintf("%d charges of %d belong to no payment", k, amount))
	}
	return s
}

var errorKindRe = regexp.MustCompile(`"msg":"provider call failed".*?"error_kind":"([a-z_]+)"`)

// providerErrors counts the provider errors Paygate logged, by kind.
func providerErrors(logs string) string {
	kinds := map[string]int{}
	for _, m := range errorKindRe.FindAllStringSubmatch(logs, -1) {
		kinds[m[1]]++
	}
	if len(kinds) == 0 {
		return "no provider errors logged"
	}
	return "provider errors " + tallyText(kinds)
}

func someOf(list []string) string {
	if len(list) > 5 {
		return strings.Join(list[:5], "; ") + fmt.Sprintf("; … (%d in all)", len(list))
	}
	return strings.Join(list, "; ")
}

// soakAcquirer is the sandbox acquirer served from the bench process
// behind a counter of what Paygate met: every /v1 call, the status
// inquiries among them, and each injected fault as it reached Paygate.
type soakAcquirer struct {
	srv      *acquirer.Server
	http     *http.Server
	url, key string
	served   chan error

	calls, inquiries, timeouts, serverErrors, unreadable atomic.Int64
}

// startSoakAcquirer serves acquirer.Open's Server on 127.0.0.1:0, as
// acquirer.Listen does, with the counter in front.
func startSoakAcquirer(f acquirer.Faults, maxHang time.Duration) (*soakAcquirer, error) {
	key := "sk_sandbox_soak_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	srv, err := acquirer.Open(acquirer.Config{APIKey: key, Faults: f, MaxHang: maxHang})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &soakAcquirer{srv: srv, url: "http://" + ln.Addr().String(), key: key, served: make(chan error, 1)}
	a.http = &http.Server{Handler: a.count(srv), ReadHeaderTimeout: 10 * time.Second}
	go func() { a.served <- a.http.Serve(ln) }()
	return a, nil
}

// count classifies each API answer after the sandbox wrote it: a request
// whose client had gone by then met the timeout fault (the sandbox
// withholds the answer until the client gives up), a 503 the server error
// fault, a 2xx body that is not JSON the unreadable fault.
func (a *soakAcquirer) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/v1/ledger" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &answerRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		a.calls.Add(1)
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/operations/") {
			a.inquiries.Add(1)
		}
		switch {
		case r.Context().Err() != nil:
			a.timeouts.Add(1)
		case rec.status == http.StatusServiceUnavailable:
			a.serverErrors.Add(1)
		case rec.status/100 == 2 && !json.Valid(rec.body):
			a.unreadable.Add(1)
		}
	})
}

func (a *soakAcquirer) close() {
	a.srv.Close() // withheld answers go out now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if a.http.Shutdown(ctx) != nil {
		a.http.Close()
	}
	if err := <-a.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Println("bench: soak acquirer:", err)
	}
}

// answerRecorder keeps the status and body an answer was written with.
type answerRecorder struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (r *answerRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *answerRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return r.ResponseWriter.Write(b)
}
