package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// apiProcess starts a second API server on the env's database with its own
// pool, as `serve --role api` would be: it queues jobs and runs none.
func (e *env) apiProcess() string {
	e.t.Helper()
	cfg := e.cfg
	cfg.Store, cfg.Work = e.openPool(), false
	return e.process(cfg)
}

// process starts another Paygate process of cfg (built by the composition
// root, as serve builds one) and returns its URL.
func (e *env) process(cfg app.Config) string {
	e.t.Helper()
	p, err := app.New(cfg)
	require.NoError(e.t, err)
	hs := httptest.NewServer(p.Server)
	e.t.Cleanup(hs.Close)
	return hs.URL
}

// pool opens another pool on the env's database, as another process has
// one: it queues jobs (in its transactions) and runs none.
func (e *env) pool() *store.Store {
	e.t.Helper()
	cfg := e.cfg
	cfg.Store, cfg.Work = e.openPool(), false
	_, err := app.New(cfg) // its job queue, with every kind registered
	require.NoError(e.t, err)
	return cfg.Store
}

// openPool opens another pool on the env's database.
func (e *env) openPool() *store.Store {
	e.t.Helper()
	s, err := store.Open(context.Background(), e.dbConfig)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { s.Close() })
	return s
}

// clients returns one client of a new key per server URL.
func (e *env) clients(name string, channel string, urls ...string) []*client.Client {
	e.t.Helper()
	ctx := context.Background()
	k, err := e.merchants.Create(ctx, merchant.NewKey{Name: name, DirectCardData: true})
	require.NoError(e.t, err)
	if channel != "" {
		require.NoError(e.t, e.merchants.Unassign(ctx, k.Key.AccessKey, "sandbox"))
		require.NoError(e.t, e.merchants.Assign(ctx, k.Key.AccessKey, channel))
	}
	var out []*client.Client
	for _, u := range urls {
		c := client.New(u, k.Key.AccessKey, k.Secret)
		c.Now, c.Retries = e.clock.Now, 0
		out = append(out, c)
	}
	return out
}

// post is one POST of a race.
type post struct{ target, body string }

// posts is n copies of one POST.
func posts(n int, target, body string) []post {
	out := make([]post, n)
	for i := range out {
		out[i] = post{target, body}
	}
	return out
}

// race sends the requests at once (after a common start), spread over the
// clients, and returns the answers in request order.
func race(t *testing.T, cs []*client.Client, reqs []post) []*client.Response {
	t.Helper()
	out := make([]*client.Response, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, rq := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := cs[i%len(cs)].Do(context.Background(), client.Request{Method: "POST", Target: rq.target, Body: []byte(rq.body)})
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			out[i] = resp
		}()
	}
	close(start)
	wg.Wait()
	require.False(t, t.Failed())
	return out
}

// tally counts the answers by "status code" (and the field for 400s).
func tally(t *testing.T, rs []*client.Response) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, r := range rs {
		key := fmt.Sprint(r.Status)
		if r.Status != http.StatusOK {
			env := decodeError(t, r.Body)
			key += " " + env.Error.Code
			if env.Error.Field != nil {
				key += " " + *env.Error.Field
			}
		}
		n[key]++
	}
	return n
}

// ledgerOf sums the acquirer's ledger entries for a payment (by the
// operation that created it at the acquirer) per kind: count and amount.
func ledgerOf(e *env, paymentID string) map[string][2]int64 {
	e.t.Helper()
	var first string
	require.NoError(e.t, e.store.DB().QueryRow(`SELECT id FROM operations WHERE resource = 'payment' AND resource_id = $1
		ORDER BY created_at, id LIMIT 1`, paymentID).Scan(&first))
	out := map[string][2]int64{}
	for _, en := range e.acquirer.Ledger() {
		if en.OperationID == first {
			v := out[en.Kind]
			out[en.Kind] = [2]int64{v[0] + 1, v[1] + en.AmountMinor}
		}
	}
	return out
}

func operationsOf(e *env, paymentID, kind string) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.store.DB().QueryRow(`SELECT count(*) FROM operations WHERE resource = 'payment' AND resource_id = $1 AND kind = $2`,
		paymentID, kind).Scan(&n))
	return n
}

// TestConcurrentOperations fires many captures, cancels and refunds at one
// payment at once, through two API processes on one database: exactly one
// is accepted where only one fits, the others are refused, and the
// acquirer moves the money once (docs/payments.md, "Concurrent
// operations").
func TestConcurrentOperations(t *testing.T) {
	const n = 24
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		second := e.apiProcess()
		authorized := func(cs []*client.Client) string {
			t.Helper()
			p := e.direct(cs[0], cardBody("4242424242424242", `,"operation_mode":"authorize"`))
			require.Equal(t, "authorized", e.settle(cs[0], p.PaymentID).Status)
			return p.PaymentID
		}

		t.Run("full captures", func(t *testing.T) {
			cs := e.clients("captures", "", e.url, second)
			id := authorized(cs)
			got := tally(t, race(t, cs, posts(n, "/api/v1/payments/"+id+"/capture", ``)))
			require.Equal(t, map[string]int{"200": 1, "409 invalid_payment_state": n - 1}, got)
			p := e.settle(cs[0], id, "authorized")
			require.Equal(t, "succeeded", p.Status)
			require.Equal(t, int64(1000), *p.CapturedAmountMinor)
			require.Equal(t, 1, operationsOf(e, id, "capture"))
			require.Equal(t, [2]int64{1, 1000}, ledgerOf(e, id)[acquirer.EntryCapture], "one capture at the acquirer")
		})

		t.Run("partial captures", func(t *testing.T) {
			cs := e.clients("partial", "", e.url, second)
			id := authorized(cs)
			got := tally(t, race(t, cs, posts(n, "/api/v1/payments/"+id+"/capture", `{"amount_minor":600}`)))
			require.Equal(t, map[string]int{"200": 1, "409 invalid_payment_state": n - 1}, got)
			p := e.settle(cs[0], id, "authorized")
			require.Equal(t, "succeeded", p.Status)
			require.Equal(t, int64(600), *p.CapturedAmountMinor)
			l := ledgerOf(e, id)
			require.Equal(t, [2]int64{1, 600}, l[acquirer.EntryCapture])
			require.Equal(t, [2]int64{1, 400}, l[acquirer.EntryRelease], "the rest released once")
		})

		t.Run("captures and cancels", func(t *testing.T) {
			cs := e.clients("mix", "", e.url, second)
			id := authorized(cs)
			reqs := posts(n, "/api/v1/payments/"+id+"/capture", ``)
			for i := 0; i < n; i += 2 {
				reqs[i].target = "/api/v1/payments/" + id + "/cancel"
			}
			got := tally(t, race(t, cs, reqs))
			require.Equal(t, map[string]int{"200": 1, "409 invalid_payment_state": n - 1}, got)
			p := e.settle(cs[0], id, "authorized")
			l := ledgerOf(e, id)
			switch p.Status {
			case "succeeded":
				require.Equal(t, [2]int64{1, 1000}, l[acquirer.EntryCapture])
				require.Zero(t, l[acquirer.EntryRelease][0])
			case "canceled":
				require.Equal(t, [2]int64{1, 1000}, l[acquirer.EntryRelease])
				require.Zero(t, l[acquirer.EntryCapture][0])
			default:
				t.Fatalf("status %s", p.Status)
			}
			require.Equal(t, 1, operationsOf(e, id, "capture")+operationsOf(e, id, "cancel"))
		})

		t.Run("refunds", func(t *testing.T) {
			cs := e.clients("refunds", "sandbox-refunds", e.url, second)
			p := e.direct(cs[0], cardBody("4242424242424242", ""))
			require.Equal(t, "succeeded", e.settle(cs[0], p.PaymentID).Status)
			id := p.PaymentID
			got := tally(t, race(t, cs, posts(n, "/api/v1/payments/"+id+"/refunds", `{"amount_minor":600}`)))
			require.Equal(t, map[string]int{"200": 1, "400 validation_error amount_minor": n - 1}, got)
			q := e.settle(cs[0], id, "succeeded")
			require.Equal(t, "partially_refunded", q.Status)
			require.Equal(t, int64(600), *q.RefundedAmountMinor)
			require.Equal(t, 1, operationsOf(e, id, "refund"))
			require.Equal(t, [2]int64{1, 600}, ledgerOf(e, id)[acquirer.EntryRefund])

			// The rest, raced again: one takes the 400 left, none more.
			// A loser that runs after the winner's refund completed finds the
			// payment refunded: 409 rather than 400.
			got = tally(t, race(t, cs, posts(n, "/api/v1/payments/"+id+"/refunds", ``)))
			require.Equal(t, n-1, got["400 validation_error amount_minor"]+got["409 invalid_payment_state"], got)
			require.Equal(t, 1, got["200"], got)
			q = e.settle(cs[0], id, "partially_refunded")
			require.Equal(t, "refunded", q.Status)
			require.Equal(t, [2]int64{2, 1000}, ledgerOf(e, id)[acquirer.EntryRefund])
		})
	})
}
