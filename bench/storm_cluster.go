package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// fleet is the Paygate deployment a storm or the crash chaos runs
// against: on PostgreSQL two API processes and one worker on one fresh
// database, on SQLite the one process a data folder allows. The sandbox
// acquirer runs inside the bench process, so its ledger (the measuring
// stick) outlives every Paygate process.
type fleet struct {
	db    string
	acq   *acquirer.Running
	nodes []*fleetNode // every process
	api   []*fleetNode // the ones that serve the API
	// signer signs requests with the sandbox key the first process printed;
	// it also reads (GET) through the first API process.
	signer *client.Client
	drop   func()
}

// fleetNode is one Paygate process, restartable at the address it first got.
type fleetNode struct {
	name string
	spec paygateSpec
	mu   sync.Mutex
	p    *paygate
}

// startFleet builds the binary and starts the processes; extra are more
// serve flags for every one of them.
func startFleet(ctx context.Context, c checkConfig, extra ...string) (_ *fleet, err error) {
	bin, err := paygateBinary(ctx)
	if err != nil {
		return nil, err
	}
	acq, err := acquirer.Listen("127.0.0.1:0", acquirer.Config{StateFile: filepath.Join(c.dir, "acquirer.json")})
	if err != nil {
		return nil, err
	}
	f := &fleet{db: c.db, acq: acq, drop: func() {}}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	// On PostgreSQL the data folder only holds the master key file, which
	// every process shares.
	base := paygateSpec{bin: bin, dataDir: filepath.Join(c.dir, "data"),
		args: append([]string{"--sandbox-url", acq.URL, "--sandbox-key", acq.APIKey}, extra...)}
	if c.db == "postgres" {
		if base.databaseURL, f.drop, err = freshPostgres(ctx); err != nil {
			return nil, err
		}
		for _, n := range []struct{ name, role string }{{"api-1", "api"}, {"api-2", "api"}, {"worker", "worker"}} {
			spec := base
			spec.role = n.role
			f.nodes = append(f.nodes, &fleetNode{name: n.name, spec: spec})
		}
		f.api = f.nodes[:2]
	} else {
		f.nodes = []*fleetNode{{name: "all", spec: base}}
		f.api = f.nodes
	}
	// The first process migrates the database and prints the sandbox key;
	// the others start side by side after it.
	if err := f.nodes[0].start(ctx); err != nil {
		return nil, err
	}
	first := f.nodes[0].p
	if first.access == "" {
		return nil, errNoKey
	}
	f.signer = client.New(f.api[0].url(), first.access, first.secret)
	f.signer.Retries = 5
	errs := make(chan error, len(f.nodes))
	for _, n := range f.nodes[1:] {
		go func() { errs <- n.start(ctx) }()
	}
	for range f.nodes[1:] {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.log, "fleet: %s; acquirer %s\n", f.describe(), acq.URL)
	return f, nil
}

// describe names the processes, for the figures.
func (f *fleet) describe() string {
	if f.db == "postgres" {
		return "PostgreSQL: 2 API processes (serve --role api) + 1 worker (--role worker), one database"
	}
	return "SQLite: 1 process (a data folder is locked to one serve process)"
}

// close stops every process, the acquirer, and drops the database.
func (f *fleet) close() {
	for _, n := range f.nodes {
		n.kill()
	}
	f.acq.Close()
	f.drop()
}

// start starts the process; a restart keeps the first start's address,
// so that clients reconnect. A port another program took meanwhile is
// retried a few times.
func (n *fleetNode) start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var err error
	for range 5 {
		var p *paygate
		if p, err = startPaygate(ctx, n.spec); err == nil {
			n.p = p
			if n.spec.addr == "" {
				n.spec.addr = strings.TrimPrefix(p.url, "http://")
			}
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("%s: %w", n.name, err)
}

// kill sends SIGKILL and waits until the process is gone.
func (n *fleetNode) kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p != nil {
		n.p.kill()
		n.p = nil
	}
}

func (n *fleetNode) url() string { return "http://" + n.spec.addr }

// testPayer is the customer and card data of the sandbox test cards: enough
// for Visa's and Mastercard's customer requirements (client API).
const testPayer = `"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com",
	"billing_address":{"country":"GB","line1":"12 St James's Square","city":"London","postal_code":"SW1Y 4JH"}}`

// directPayment is the body of POST /payments/direct for one order.
func directPayment(order string, amount int64, card string) []byte {
	return fmt.Appendf(nil, `{"order_id":%q,"amount_minor":%d,"currency":"USD",%s,
		"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		order, amount, testPayer, card, time.Now().Year()+2)
}

// signedPost is a POST signed by f.signer for base. Its GetBody is
// removed: net/http resends a request that carries an Idempotency-Key on
// its own when a reused connection breaks, and a resent signed request
// is a spent nonce; a merchant's retry signs again.
func (f *fleet) signedPost(ctx context.Context, base, target string, body []byte, idemKey string) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+target, bytes.NewReader(body))
	r.GetBody = nil
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", idemKey)
	f.signer.Sign(r, body)
	return r
}

// reply is one HTTP reply as a storm records it.
type reply struct {
	status    int
	code      string // the error code of a non-2xx
	retryable bool   // the error's retryable
	replayed  bool
	body      []byte
	err       error // no reply at all
}

// sendOnce sends r as it is (no retry) and reads the whole answer.
func sendOnce(hc *http.Client, r *http.Request) reply {
	resp, err := hc.Do(r)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{err: err}
	}
	out := reply{status: resp.StatusCode, body: b, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if resp.StatusCode/100 != 2 {
		var env struct {
			Error struct {
				Code      string `json:"code"`
				Retryable bool   `json:"retryable"`
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &env)
		out.code, out.retryable = env.Error.Code, env.Error.Retryable
	}
	return out
}

// label is how a reply is counted in the figures: "201", "201 replayed",
// "409 idempotency_request_in_progress", "no reply".
func (r reply) label() string {
	switch {
	case r.err != nil:
		return "no reply"
	case r.replayed:
		return fmt.Sprintf("%d replayed", r.status)
	case r.code != "":
		return fmt.Sprintf("%d %s", r.status, r.code)
	}
	return fmt.Sprint(r.status)
}

// burst sends every request at once (they are all built first) and returns
// the replies in order and how long the storm took.
func burst(reqs []*http.Request) ([]reply, time.Duration) {
	hc := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: len(reqs), DisableCompression: true}}
	defer hc.CloseIdleConnections()
	out := make([]reply, len(reqs))
	var (
		wg   sync.WaitGroup
		gate = make(chan struct{})
	)
	for i, r := range reqs {
		wg.Go(func() {
			<-gate
			out[i] = sendOnce(hc, r)
		})
	}
	started := time.Now()
	close(gate)
	wg.Wait()
	return out, time.Since(started)
}

// tally counts replies by label for the figures, most frequent first:
// "201 replayed ×870, 409 idempotency_request_in_progress ×129, 201 ×1".
func tally(rs []reply) string {
	m := map[string]int{}
	for _, r := range rs {
		m[r.label()]++
	}
	labels := slices.Collect(maps.Keys(m))
	slices.SortFunc(labels, func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s ×%d", l, m[l])
	}
	return strings.Join(parts, ", ")
}

// waitFinal polls a payment until it is final, at most for d.
func (f *fleet) waitFinal(ctx context.Context, id string, d time.Duration) (openapi.Payment, error) {
	deadline := time.Now().Add(d)
	for {
		var p openapi.Payment
		if err := f.signer.JSON(ctx, "GET", "/api/v1/payments/"+url.PathEscape(id), nil, &p); err != nil {
			return p, err
		}
		if p.Final || time.Now().After(deadline) {
			return p, nil
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return p, err
		}
	}
}

// payments lists every payment of the key (GET /api/v1/payments, a page of
// 100 at a time), with more filters in query (e.g. order_id=…).
func (f *fleet) payments(ctx context.Context, query url.Values) ([]openapi.Payment, error) {
	var all []openapi.Payment
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("limit", "100")
	for {
		var page openapi.PaymentList
		if err := f.signer.JSON(ctx, "GET", "/api/v1/payments?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all, nil
		}
		q.Set("cursor", *page.NextCursor)
	}
}

// unsettled counts the key's payments that are not final, asking once per
// non-final status (at most 100 each: it only has to reach zero).
func (f *fleet) unsettled(ctx context.Context) (int, error) {
	n := 0
	for _, s := range payment.Statuses {
		if s.Final() {
			continue
		}
		var page openapi.PaymentList
		if err := f.signer.JSON(ctx, "GET", "/api/v1/payments?limit=100&status="+string(s), nil, &page); err != nil {
			return 0, err
		}
		n += len(page.Items)
	}
	return n, nil
}

// charges counts the acquirer's ledger entries of kind by amount (the
// checks give every payment its own amount; the ledger knows Paygate's
// operation ids, which the API does not show).
func (f *fleet) charges(kind string) map[int64]int {
	m := map[int64]int{}
	for _, e := range f.acq.Server.Ledger() {
		if e.Kind == kind {
			m[e.AmountMinor]++
		}
	}
	return m
}

// sleepCtx waits d or until ctx ends: a retry's back-off or a poll's interval,
// never a stand-in for synchronisation.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
