package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// chaosCards are the sandbox test cards the chaos pays with, in turn, and
// the status each must end in (docs/sandbox.md).
var chaosCards = []struct{ number, want string }{
	{"4242424242424242", "succeeded"},
	{"5555555555554444", "succeeded"},
	{"4242424242424242", "succeeded"},
	{"4000000000000259", "succeeded"}, // unreadable answers: manual_review on the way
	{"4000000000000341", "succeeded"}, // the first answer withheld: the outcome is inquired
	{"4000000000000002", "declined"},
	{"4000000000009995", "declined"},
	{"4000000000000119", "failed"},
}

// Crash chaos sizes and bounds.
const (
	chaosClients   = 16                     // merchant backends paying at once
	chaosGiveUp    = 3 * time.Minute        // a payment's retries stop after this
	chaosSettleFor = 3 * time.Minute        // the bounded wait for every payment to be final
	chaosFirstAmt  = int64(10_000)          // payment i is chaosFirstAmt+i minor units: the ledger tells them apart
	chaosMinGap    = 150 * time.Millisecond // between a restart and the next kill
	chaosMaxGap    = 900 * time.Millisecond
	chaosKillEvery = 700 * time.Millisecond // a kill cycle on average: a gap and a restart
)

// chaosOrder is one payment of the chaos and what its merchant learned.
type chaosOrder struct {
	id, key   string
	amount    int64
	card      int    // index in chaosCards
	paymentID string // from the 2xx; empty: never acknowledged
	rejected  string // a 4xx's label
}

// chaosTally is what the merchants saw on the way.
type chaosTally struct {
	mu                               sync.Mutex
	retries, noReply, server, inProg int
	replayed                         int
}

// crashChaos pays n direct payments while the Paygate processes are
// killed with SIGKILL at random (at least c.kills times) and restarted at
// the same address on the same database. Each merchant retries its payment
// with the same Idempotency-Key (signed afresh) on no reply, a 5xx or a
// 409 in progress, until a 2xx or a 4xx. Afterwards: every acknowledged
// payment exists, once; every payment ends final within a bounded wait;
// the acquirer's ledger has at most one charge per payment, one exactly
// when the payment succeeded and none when it was declined or failed.
func crashChaos(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "crash-chaos", pass: true}
	n, wantKills := cmp.Or(c.n, 2000), cmp.Or(c.kills, 20)
	// Short timeouts make recovery quick: a provider call gives up after
	// 1 s, a job after 2 s, and on PostgreSQL a dead worker's job is
	// rescued when it has run 3 s (River's rescuer looks every 30 s).
	f, err := startFleet(ctx, c, "--provider-timeout", "1s", "--job-timeout", "2s", "--rescue-after", "3s")
	if err != nil {
		return res, err
	}
	defer f.close()

	run := uuid.NewString()[:8]
	orders := make([]chaosOrder, n)
	for i := range orders {
		orders[i] = chaosOrder{id: fmt.Sprintf("chaos-%s-%d", run, i), key: fmt.Sprintf("chaos-%s-%d", run, i),
			amount: chaosFirstAmt + int64(i), card: i % len(chaosCards)}
	}
	res.add("processes", "%s", f.describe())
	res.add("payments", "%d direct payments by %d merchant clients; cards in turn: %s", n, chaosClients, cardMix())

	// The merchants.
	var (
		tally   chaosTally
		load    sync.WaitGroup
		work    = make(chan int)
		started = time.Now()
	)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: chaosClients}}
	defer hc.CloseIdleConnections()
	for range chaosClients {
		load.Go(func() {
			for i := range work {
				f.pay(ctx, hc, &orders[i], &tally)
			}
		})
	}
	// The payments are paced to last as long as the kills take (about
	// 0.7 s each), so that every kill meets payments on their way.
	every := time.Duration(wantKills) * chaosKillEvery / time.Duration(n)
	loadDone := make(chan struct{})
	go func() {
		defer close(work)
		for i := range orders {
			if sleepCtx(ctx, time.Until(started.Add(time.Duration(i)*every))) != nil {
				return
			}
			work <- i
		}
	}()
	go func() { load.Wait(); close(loadDone) }()

	// The chaos: kill a process at random, restart it, again, until the
	// load is done and there were enough kills.
	kills, killsBy, restarts, chaosErr := f.chaos(ctx, c, wantKills, loadDone)
	<-loadDone
	loadTook := time.Since(started)
	if chaosErr != nil {
		return res, chaosErr
	}
	res.add("kills", "%d SIGKILL (%s); restarts took %s in all", kills, killsBy, restarts.Round(time.Millisecond))
	if kills < wantKills {
		res.fail("%d kills, want at least %d", kills, wantKills)
	}

	acked := 0
	for _, o := range orders {
		if o.paymentID != "" {
			acked++
		}
	}
	res.add("acknowledged", "%d of %d with a 2xx (%d of them a replayed stored answer)", acked, n, tally.replayed)
	res.add("retries", "%d (no reply %d, 5xx %d, 409 in progress %d)", tally.retries, tally.noReply, tally.server, tally.inProg)
	res.add("load took", "%s", loadTook.Round(time.Millisecond))

	// Recovery: every payment final within a bounded wait.
	settleStart := time.Now()
	for {
		left, err := f.unsettled(ctx)
		if err != nil {
			return res, err
		}
		if left == 0 {
			res.add("time to settle", "%s after the last kill and the last acknowledgement", time.Since(settleStart).Round(time.Millisecond))
			break
		}
		if time.Since(settleStart) > chaosSettleFor {
			res.add("time to settle", "not settled: %d+ payments not final after %s", left, chaosSettleFor)
			res.fail("%d+ payments not final %s after the chaos", left, chaosSettleFor)
			break
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return res, err
		}
	}
	return f.reconcile(ctx, res, orders)
}

// pay takes one order to a 2xx or a 4xx as a merchant's backend would: the
// same Idempotency-Key every time, signed afresh, to any API process.
func (f *fleet) pay(ctx context.Context, hc *http.Client, o *chaosOrder, t *chaosTally) {
	body := directPayment(o.id, o.amount, chaosCards[o.card].number)
	giveUp := time.Now().Add(chaosGiveUp)
	for attempt := 0; ctx.Err() == nil && time.Now().Before(giveUp); attempt++ {
		if attempt > 0 {
			backoff := min(20*time.Millisecond<<min(attempt, 5), 500*time.Millisecond)
			if sleepCtx(ctx, backoff/2+rand.N(backoff/2)) != nil {
				return
			}
		}
		base := f.api[rand.IntN(len(f.api))].url()
		r := sendOnce(hc, f.signedPost(ctx, base, directTarget, body, o.key))
		retry := r.err != nil || r.status >= 500 ||
			(r.status == http.StatusConflict && r.code == "idempotency_request_in_progress")
		t.mu.Lock()
		switch {
		case !retry:
		case r.err != nil:
			t.noReply++
		case r.status >= 500:
			t.server++
		default:
			t.inProg++
		}
		if retry {
			t.retries++
		} else if r.replayed {
			t.replayed++
		}
		t.mu.Unlock()
		if retry {
			continue
		}
		if r.status/100 != 2 {
			o.rejected = r.label()
			return
		}
		var p struct {
			PaymentID string `json:"payment_id"`
		}
		_ = json.Unmarshal(r.body, &p)
		o.paymentID = cmp.Or(p.PaymentID, "?")
		return
	}
}

// chaos kills a random process every 150–900 ms and restarts it at its
// address until the load is done and there were at least want kills (the
// first ones take every process once). It
// returns the kills, by process, and how long the restarts took.
func (f *fleet) chaos(ctx context.Context, c checkConfig, want int, loadDone <-chan struct{}) (int, string, time.Duration, error) {
	kills, by, first := 0, map[string]int{}, rand.Perm(len(f.nodes))
	var restarts time.Duration
	for {
		select {
		case <-loadDone:
			if kills >= want {
				return kills, killCounts(f, by), restarts, nil
			}
		default:
		}
		gap := chaosMinGap + rand.N(chaosMaxGap-chaosMinGap)
		if err := sleepCtx(ctx, gap); err != nil {
			return kills, killCounts(f, by), restarts, err
		}
		// The first kills take every process once, in random order.
		nd := f.nodes[rand.IntN(len(f.nodes))]
		if kills < len(first) {
			nd = f.nodes[first[kills]]
		}
		nd.kill()
		kills++
		by[nd.name]++
		begin := time.Now()
		if err := nd.start(ctx); err != nil {
			return kills, killCounts(f, by), restarts, fmt.Errorf("restart after kill %d: %w", kills, err)
		}
		restarts += time.Since(begin)
		fmt.Fprintf(c.log, "kill %d: %s, back in %s\n", kills, nd.name, time.Since(begin).Round(time.Millisecond))
	}
}

func killCounts(f *fleet, by map[string]int) string {
	parts := make([]string, 0, len(f.nodes))
	for _, nd := range f.nodes {
		parts = append(parts, fmt.Sprintf("%s %d", nd.name, by[nd.name]))
	}
	return strings.Join(parts, ", ")
}

func cardMix() string {
	parts := make([]string, len(chaosCards))
	for i, c := range chaosCards {
		parts[i] = c.number[len(c.number)-4:] + "→" + c.want
	}
	return strings.Join(parts, ", ")
}

// reconcile compares what the merchants were told, what Paygate shows and
// what the acquirer's ledger holds.
func (f *fleet) reconcile(ctx context.Context, res checkResult, orders []chaosOrder) (checkResult, error) {
	all, err := f.payments(ctx, nil)
	if err != nil {
		return res, err
	}
	byOrder := map[string][]openapi.Payment{}
	for _, p := range all {
		byOrder[p.OrderID] = append(byOrder[p.OrderID], p)
	}
	charges := f.charges(acquirer.EntryCharge)
	var (
		mismatches int
		examples   []string
		outcomes   = map[string]int{}
		unacked    int
		rejected   []string
	)
	note := func(format string, args ...any) {
		mismatches++
		if len(examples) < 5 {
			examples = append(examples, fmt.Sprintf(format, args...))
		}
	}
	known := map[int64]bool{}
	for _, o := range orders {
		known[o.amount] = true
		ps, ch := byOrder[o.id], charges[o.amount]
		switch {
		case o.rejected != "":
			rejected = append(rejected, o.id+": "+o.rejected)
		case o.paymentID == "":
			unacked++
		case len(ps) == 0:
			note("order %s: acknowledged payment %s does not exist", o.id, o.paymentID)
		case ps[0].PaymentID != o.paymentID && len(ps) == 1:
			note("order %s: acknowledged %s, the payment is %s", o.id, o.paymentID, ps[0].PaymentID)
		}
		if len(ps) > 1 {
			note("order %s: %d payments for one Idempotency-Key", o.id, len(ps))
		}
		if ch > 1 {
			note("order %s: %d charges at the acquirer", o.id, ch)
		}
		if len(ps) == 0 && ch > 0 {
			note("order %s: charged without a payment", o.id)
		}
		for _, p := range ps {
			outcomes[p.Status]++
			switch {
			case !p.Final:
				note("payment %s: still %s", p.PaymentID, p.Status)
			case p.Status == "succeeded" && ch != 1, (p.Status == "declined" || p.Status == "failed") && ch != 0:
				note("payment %s: %s with %d charges", p.PaymentID, p.Status, ch)
			case p.Status != "succeeded" && p.Status != "declined" && p.Status != "failed":
				note("payment %s: final status %s", p.PaymentID, p.Status)
			case p.Status != chaosCards[o.card].want:
				note("payment %s (card …%s): %s, the card says %s", p.PaymentID, chaosCards[o.card].number[12:], p.Status, chaosCards[o.card].want)
			}
			if p.AmountMinor != o.amount {
				note("payment %s: amount %d, sent %d", p.PaymentID, p.AmountMinor, o.amount)
			}
		}
	}
	for _, e := range f.acq.Server.Ledger() {
		if e.Kind != acquirer.EntryCharge {
			note("a %s of %d at the acquirer: the chaos only charges", e.Kind, e.AmountMinor)
		}
	}
	for amount, k := range charges {
		if !known[amount] {
			note("a charge of %d at the acquirer (×%d) for no order of the chaos", amount, k)
		}
	}
	total, most := 0, 0
	for _, k := range charges {
		total, most = total+k, max(most, k)
	}
	res.add("outcomes", "%s", countsString(outcomes))
	res.add("ledger", "%d charges for %d payments (at most %d for one)", total, len(all), most)
	res.add("mismatches", "%d", mismatches)
	if unacked > 0 {
		res.fail("%d payments never acknowledged (retried for %s)", unacked, chaosGiveUp)
	}
	if len(rejected) > 0 {
		res.fail("%d payments refused with a 4xx, e.g. %s", len(rejected), rejected[0])
	}
	if mismatches > 0 {
		res.fail("%d mismatches: %s", mismatches, strings.Join(examples, "; "))
	}
	if len(all) != len(orders) {
		res.fail("%d payments listed for %d orders", len(all), len(orders))
	}
	return res, nil
}

func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
