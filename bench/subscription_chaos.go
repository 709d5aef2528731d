package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// Subscription chaos sizes and bounds.
const (
	subChaosPeriods  = 12                     // periods charged per subscription
	subChaosFirstAmt = int64(20_000)          // subscription i charges subChaosFirstAmt+i: the ledger tells them apart
	subChaosConsent  = int64(19_999)          // the consent payment that makes the mandate
	subChaosSettle   = 3 * time.Minute        // the bounded wait for every period to be charged
	subChaosGiveUp   = 2 * time.Minute        // an advance's retries stop after this
	subChaosEvery    = "200ms"                // the scheduler's tick in the worker
	subChaosDay      = 24 * time.Hour         // the subscriptions' interval
	subChaosSlack    = 30 * time.Minute       // an advance stops this far past a period's due time
	subChaosPace     = 700 * time.Millisecond // a kill cycle on average (crash chaos): the advances are paced to it
	subChaosRetry    = 100 * time.Millisecond // an advance's retry waits 1–2× this
)

// subscriptionChaos makes n daily subscriptions on one mandate and charges
// subChaosPeriods periods of each while the Paygate processes are killed
// with SIGKILL at random (at least c.kills times) and restarted. The
// merchant moves its sandbox clock one day at a time (POST
// /sandbox/clock/advance, retried on any API process until it answers):
// each advance charges the day's periods in the API process, and the
// scheduler in the worker charges whatever is due by the key's clock
// beside it, so both race for every period. Afterwards, every period of
// every subscription has exactly one succeeded charge (duplicates 0), none
// is missing (gaps 0), and the acquirer's ledger holds exactly one charge
// per period (docs/design/decisions.md section 11).
func subscriptionChaos(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "subscription-chaos", pass: true}
	n, wantKills := cmp.Or(c.n, 100), cmp.Or(c.kills, 20)
	f, err := startFleet(ctx, c, "--provider-timeout", "1s", "--job-timeout", "2s", "--rescue-after", "3s",
		"--scheduler-every", subChaosEvery)
	if err != nil {
		return res, err
	}
	defer f.close()
	res.add("processes", "%s", f.describe())

	subs, err := f.subscriptions(ctx, n)
	if err != nil {
		return res, err
	}
	start := time.Now().UTC()
	res.add("subscriptions", "%d daily on one mandate, %d periods each: %d periods", n, subChaosPeriods, n*subChaosPeriods)

	// The merchant: one advance a day, paced to last as long as the kills
	// take, each retried (a fresh request) until it answers.
	var (
		advances, retries int
		ran               = map[string]int{}
		loadDone          = make(chan struct{})
		loadErr           error
		began             = time.Now()
		every             = time.Duration(wantKills) * subChaosPace / subChaosPeriods
	)
	hc := &http.Client{Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	go func() {
		defer close(loadDone)
		for d := range subChaosPeriods {
			if sleepCtx(ctx, time.Until(began.Add(time.Duration(d)*every))) != nil {
				return
			}
			r, k, err := f.advance(ctx, hc, start.Add(time.Duration(d)*subChaosDay+subChaosSlack))
			retries += k
			if err != nil {
				loadErr = err
				return
			}
			advances++
			for what, m := range r {
				ran[what] += m
			}
		}
	}()
	kills, killsBy, restarts, chaosErr := f.chaos(ctx, c, wantKills, loadDone)
	<-loadDone
	if chaosErr != nil {
		return res, chaosErr
	}
	if loadErr != nil {
		return res, loadErr
	}
	res.add("kills", "%d SIGKILL (%s); restarts took %s in all", kills, killsBy, restarts.Round(time.Millisecond))
	if kills < wantKills {
		res.fail("%d kills, want at least %d", kills, wantKills)
	}
	res.add("advances", "%d answered (%d retried after no reply or a 5xx); the answers counted %d charges, %d retries (the scheduler and advances cut by a kill made the rest)",
		advances, retries, ran["subscription_charges"], ran["retries"])
	res.add("chaos took", "%s", time.Since(began).Round(time.Millisecond))

	// Recovery: every subscription charged through its last period within
	// a bounded wait; one more advance (no kills now) picks up a charge
	// that was interrupted and retried after a day.
	settleStart := time.Now()
	for {
		left, err := f.subscriptionsLeft(ctx, subs)
		if err != nil {
			return res, err
		}
		if left == 0 {
			res.add("time to settle", "%s after the last kill", time.Since(settleStart).Round(time.Millisecond))
			break
		}
		if time.Since(settleStart) > subChaosSettle {
			res.add("time to settle", "not settled: %d subscriptions short of period %d after %s", left, subChaosPeriods, subChaosSettle)
			res.fail("%d subscriptions not charged through period %d %s after the chaos", left, subChaosPeriods-1, subChaosSettle)
			break
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return res, err
		}
	}
	return f.reconcileSubscriptions(ctx, res, subs, kills)
}

// chaosSubscription is one subscription of the chaos.
type chaosSubscription struct {
	id     string
	amount int64
}

// subscriptions makes the mandate (a direct payment with terms, its own
// subscription canceled at once) and n subscriptions on it, each due at
// once and daily after.
func (f *fleet) subscriptions(ctx context.Context, n int) ([]chaosSubscription, error) {
	body := fmt.Sprintf(`{"order_id":"subscription-chaos-consent","amount_minor":%d,"currency":"USD",%s,
		"customer_reference":"payer-subscription-chaos","payment_method":{"type":"card","card":{"number":"4242424242424242",
		"expire_month":12,"expire_year":%d,"cvv":"123"}},"subscription":{"interval_unit":"month","interval_count":1,
		"first_charge_at":%q,"disclosure_version":"chaos-v1"}}`, subChaosConsent, testPayer, time.Now().Year()+3,
		time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339))
	var p openapi.Payment
	if err := f.signer.JSON(ctx, "POST", directTarget, json.RawMessage(body), &p); err != nil {
		return nil, fmt.Errorf("consent payment: %w", err)
	}
	if p, err := f.waitFinal(ctx, p.PaymentID, time.Minute); err != nil || p.Status != "succeeded" {
		return nil, fmt.Errorf("consent payment: %s, %v", p.Status, err)
	}
	if err := f.signer.JSON(ctx, "POST", "/api/v1/subscriptions/"+p.SubscriptionID+"/cancel", nil, nil); err != nil {
		return nil, fmt.Errorf("cancel the consent's own subscription: %w", err)
	}
	subs := make([]chaosSubscription, n)
	for i := range subs {
		var s openapi.Subscription
		if err := f.signer.JSON(ctx, "POST", "/api/v1/subscriptions", openapi.CreateSubscription{
			MandateID: p.MandateID, AmountMinor: subChaosFirstAmt + int64(i), Currency: "USD",
			IntervalUnit: "day", IntervalCount: 1}, &s); err != nil {
			return nil, fmt.Errorf("subscription %d: %w", i, err)
		}
		subs[i] = chaosSubscription{id: s.ID, amount: s.AmountMinor}
	}
	return subs, nil
}

// advance moves the key's clock to `to` on a random API process, sent
// again (signed afresh, a new Idempotency-Key: an advance to a time is
// the same whenever it runs) on no reply or a 5xx. It returns what the
// answer says ran and how many retries it took.
func (f *fleet) advance(ctx context.Context, hc *http.Client, to time.Time) (map[string]int, int, error) {
	body := fmt.Appendf(nil, `{"to":%q}`, to.Format(time.RFC3339Nano))
	giveUp := time.Now().Add(subChaosGiveUp)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if time.Now().After(giveUp) {
				return nil, attempt, fmt.Errorf("advance to %s: no answer for %s", to, subChaosGiveUp)
			}
			if err := sleepCtx(ctx, subChaosRetry+rand.N(subChaosRetry)); err != nil {
				return nil, attempt, err
			}
		}
		base := f.api[rand.IntN(len(f.api))].url()
		r := sendOnce(hc, f.signedPost(ctx, base, "/api/v1/sandbox/clock/advance", body, uuid.NewString()))
		if r.err != nil || r.status >= 500 {
			continue
		}
		if attempt > 0 && r.status == http.StatusBadRequest && bytes.Contains(r.body, []byte("the clock only moves forward")) {
			// An earlier attempt moved the clock to `to` and its answer was
			// lost with its process; the clock has run on since. Done, with
			// what it ran unknown (the report counts what it saw).
			return map[string]int{}, attempt, nil
		}
		if r.status != http.StatusOK {
			return nil, attempt, fmt.Errorf("advance to %s: %s", to, r.label())
		}
		var out openapi.SandboxClockAdvanced
		if err := json.Unmarshal(r.body, &out); err != nil {
			return nil, attempt, err
		}
		return out.Ran, attempt, nil
	}
}

// subscriptionsLeft counts the subscriptions not yet charged through
// their last period, or with a charge in flight.
func (f *fleet) subscriptionsLeft(ctx context.Context, subs []chaosSubscription) (int, error) {
	left := 0
	for _, s := range subs {
		var got openapi.Subscription
		if err := f.signer.JSON(ctx, "GET", "/api/v1/subscriptions/"+s.id, nil, &got); err != nil {
			return 0, err
		}
		if got.NextPeriod < subChaosPeriods {
			left++
		}
	}
	if left > 0 {
		return left, nil
	}
	return f.unsettled(ctx)
}

// reconcileSubscriptions compares the charges Paygate lists with the
// acquirer's ledger: per (subscription, period) exactly one succeeded
// payment and one charge.
func (f *fleet) reconcileSubscriptions(ctx context.Context, res checkResult, subs []chaosSubscription, kills int) (checkResult, error) {
	all, err := f.payments(ctx, url.Values{"customer_reference": {"payer-subscription-chaos"}})
	if err != nil {
		return res, err
	}
	type key struct {
		sub    string
		period int64
	}
	succeeded, attempts := map[key]int{}, map[string]int{}
	bySub := map[string]bool{}
	for _, s := range subs {
		bySub[s.id] = true
	}
	var (
		duplicates, gaps, extra, mismatches int
		examples                            []string
	)
	note := func(counter *int, format string, args ...any) {
		*counter++
		if len(examples) < 5 {
			examples = append(examples, fmt.Sprintf(format, args...))
		}
	}
	for _, p := range all {
		if p.SubscriptionPeriod == nil {
			continue // the consent payment
		}
		attempts[p.Status]++
		if !bySub[p.SubscriptionID] {
			note(&extra, "payment %s: a charge of subscription %s, not the chaos's", p.PaymentID, p.SubscriptionID)
			continue
		}
		if p.Status == "succeeded" {
			succeeded[key{p.SubscriptionID, *p.SubscriptionPeriod}]++
		}
	}
	charges := f.charges(acquirer.EntryCharge)
	periods := 0
	for _, s := range subs {
		var got openapi.Subscription
		if err := f.signer.JSON(ctx, "GET", "/api/v1/subscriptions/"+s.id, nil, &got); err != nil {
			return res, err
		}
		if got.Status != "active" {
			note(&mismatches, "subscription %s: %s (%s)", s.id, got.Status, got.LastDeclineCode)
		}
		for n := range got.NextPeriod {
			switch k := succeeded[key{s.id, n}]; {
			case k == 0:
				note(&gaps, "subscription %s period %d: no succeeded charge", s.id, n)
			case k > 1:
				note(&duplicates, "subscription %s period %d: %d succeeded charges", s.id, n, k)
			}
		}
		for k, m := range succeeded {
			if k.sub == s.id && k.period >= got.NextPeriod {
				note(&extra, "subscription %s period %d: %d succeeded charges past next_period %d", s.id, k.period, m, got.NextPeriod)
			}
		}
		periods += int(got.NextPeriod)
		if charges[s.amount] != int(got.NextPeriod) {
			note(&mismatches, "subscription %s: %d charges at the acquirer for %d periods", s.id, charges[s.amount], got.NextPeriod)
		}
	}
	if charges[subChaosConsent] != 1 {
		note(&mismatches, "the consent payment: %d charges at the acquirer", charges[subChaosConsent])
	}
	ledger := 0
	for _, k := range charges {
		ledger += k
	}
	res.add("periods × kills", "%d periods × %d kills", periods, kills)
	res.add("charges", "%d payments: %s", attemptsTotal(attempts), countsString(attempts))
	res.add("ledger", "%d charges (%d periods + the consent payment)", ledger, periods)
	res.add("duplicates", "%d", duplicates)
	res.add("gaps", "%d", gaps)
	res.add("mismatches", "%d (ledger or status disagreeing, charges of no period)", mismatches+extra)
	if want := len(subs) * subChaosPeriods; periods != want {
		res.fail("%d periods charged, want %d", periods, want)
	}
	if duplicates+gaps+mismatches+extra > 0 {
		res.fail("duplicates %d, gaps %d, mismatches %d: %s", duplicates, gaps, mismatches+extra, strings.Join(examples, "; "))
	}
	return res, nil
}

func attemptsTotal(m map[string]int) int {
	n := 0
	for _, k := range m {
		n += k
	}
	return n
}
