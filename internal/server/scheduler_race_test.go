package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
)

// scheduler is one process's subscription scheduler: the env's
// subscription service on a pool of its own (e.pool), with an id source
// that remembers the charges it started.
type scheduler struct {
	svc     *subscription.Service
	mu      sync.Mutex
	started map[string]bool // ids this scheduler handed out: its charges
}

// newScheduler builds a scheduler on s (the env's store or another pool),
// sharing the env's payment service, as every worker process runs one
// (cmd/paygate/serve.go).
func (e *env) newScheduler(s *store.Store) *scheduler {
	sc := &scheduler{started: map[string]bool{}}
	svc := *e.subs
	svc.Store = s
	svc.Transact = func(ctx context.Context, fn func(subscription.ChargeTx) error) error {
		return s.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
	}
	svc.NewID = func() string {
		id := uuid.Must(uuid.NewV7()).String()
		sc.mu.Lock()
		sc.started[id] = true
		sc.mu.Unlock()
		return id
	}
	sc.svc = &svc
	return sc
}

// charged counts the payments among ids that this scheduler started.
func (sc *scheduler) charged(ids []string) int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	n := 0
	for _, id := range ids {
		if sc.started[id] {
			n++
		}
	}
	return n
}

// dueSubscriptions stores n daily subscriptions on the mandate whose
// periods 0 … periods-1 are all due now (the anchor periods-1 days and an
// hour ago), each with its own amount so that the acquirer's ledger tells
// them apart.
func dueSubscriptions(t *testing.T, e *env, m string, n, periods int, amount int64) []string {
	t.Helper()
	ctx := context.Background()
	now := e.clock.Now().UTC()
	anchor := now.Add(-time.Duration(periods-1)*24*time.Hour - time.Hour)
	var ids []string
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			at := anchor
			sub := &subscription.Subscription{ID: uuid.NewString(), AccessKeyID: e.aKey.ID, MandateID: m,
				Status: subscription.Active, AmountMinor: amount + int64(i), Currency: "USD",
				Interval: subscription.Interval{Unit: subscription.Day, Count: 1}, Anchor: anchor, NextRunAt: &at,
				CreatedAt: now, UpdatedAt: now}
			if err := tx.CreateSubscription(ctx, sub); err != nil {
				return err
			}
			ids = append(ids, sub.ID)
		}
		return nil
	}))
	return ids
}

// periodCharge is one subscription charge as stored, with the operation
// that sent it to the acquirer.
type periodCharge struct {
	id, sub, status, op string
	period              int64
	attempt             int
	amount              int64
}

// periodCharges lists the subscription charges of the given subscriptions.
func periodCharges(t *testing.T, e *env, subs []string) []periodCharge {
	t.Helper()
	want := map[string]bool{}
	for _, s := range subs {
		want[s] = true
	}
	rows, err := e.store.DB().Query(`SELECT p.id, p.subscription_id, p.status, p.subscription_period,
		p.subscription_attempt, p.amount_minor, COALESCE((SELECT o.id FROM operations o WHERE o.resource = 'payment' AND o.resource_id = p.id
		ORDER BY o.created_at, o.id LIMIT 1), '')
		FROM payments p WHERE p.kind = $1`, string(payment.KindRecurring))
	require.NoError(t, err)
	defer rows.Close()
	var out []periodCharge
	for rows.Next() {
		var c periodCharge
		require.NoError(t, rows.Scan(&c.id, &c.sub, &c.status, &c.period, &c.attempt, &c.amount, &c.op))
		if want[c.sub] {
			out = append(out, c)
		}
	}
	require.NoError(t, rows.Err())
	return out
}

// exactlyOnce checks that each subscription's periods 0 … upTo[sub]-1
// have exactly one payment each, succeeded, and that the acquirer's ledger
// holds exactly one charge of the subscription's amount for each: no
// duplicate, no gap, nothing extra. It returns the charges' payment ids.
func exactlyOnce(t *testing.T, e *env, upTo map[string]int64, amounts map[string]int64) []string {
	t.Helper()
	var subs []string
	for s := range upTo {
		subs = append(subs, s)
	}
	charges := periodCharges(t, e, subs)
	ledger := map[string][]acquirer.Entry{}
	for _, en := range e.acquirer.Ledger() {
		if en.Kind == acquirer.EntryCharge {
			ledger[en.OperationID] = append(ledger[en.OperationID], en)
		}
	}
	seen := map[string]int{}
	var ids []string
	for _, c := range charges {
		key := fmt.Sprintf("%s/%d", c.sub, c.period)
		seen[key]++
		ids = append(ids, c.id)
		require.Less(t, c.period, upTo[c.sub], "%s: a period past the last one due", key)
		require.Zero(t, c.attempt, "%s: no retry", key)
		require.Equal(t, string(payment.Succeeded), c.status, key)
		require.Equal(t, amounts[c.sub], c.amount, key)
		require.Len(t, ledger[c.op], 1, "%s: one charge at the acquirer", key)
		require.Equal(t, amounts[c.sub], ledger[c.op][0].AmountMinor, key)
	}
	total := 0
	for s, n := range upTo {
		for p := range n {
			require.Equal(t, 1, seen[fmt.Sprintf("%s/%d", s, p)], "subscription %s period %d", s, p)
		}
		total += int(n)
		// Nothing in the ledger for this subscription's amount that its
		// charges do not explain.
		at := 0
		for _, l := range ledger {
			for _, en := range l {
				if en.AmountMinor == amounts[s] {
					at++
				}
			}
		}
		require.Equal(t, int(n), at, "subscription %s: the acquirer's charges of its amount", s)
	}
	require.Len(t, charges, total, "no extra payments")
	return ids
}

// tickUntil runs the scheduler until done says everything is charged and
// settled, or the deadline passes.
func tickUntil(t *testing.T, sc *scheduler, start <-chan struct{}, done func() bool) error {
	<-start
	deadline := time.Now().Add(2 * time.Minute)
	for !done() {
		if _, err := sc.svc.Tick(context.Background(), 100); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not settled in 2 minutes")
		}
		// The charges' provider calls run in the env's workers: look again
		// shortly.
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// subscriptionsLeft counts the subscriptions among ids that still have a
// period before `periods` to charge or a charge in flight.
func subscriptionsLeft(t *testing.T, e *env, ids []string, periods int) int {
	n := 0
	for _, id := range ids {
		s, err := e.store.FindSubscriptionByID(context.Background(), id)
		require.NoError(t, err)
		if s.ChargingPaymentID != "" || (s.Status == subscription.Active && s.Period < int64(periods)) {
			n++
		}
	}
	return n
}

// TestTwoSchedulers runs two schedulers at once, each on its own pool as
// two worker processes do, over 40 daily subscriptions with 5 periods due
// each: every one of the 200 periods is charged exactly once, none is
// missing, and the acquirer's ledger agrees (docs/design/decisions.md
// section 11). Then a merchant pauses subscriptions while both schedulers
// charge them: each ends paused and no charge starts once the pause has
// committed.
func TestTwoSchedulers(t *testing.T) {
	const subs, periods = 40, 5
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		p, _ := e.subscribe(e.a, "4242424242424242", e.clock.Now().Add(30*24*time.Hour))

		t.Run("200 periods", func(t *testing.T) {
			ids := dueSubscriptions(t, e, p.MandateID, subs, periods, 2000)
			one, two := e.newScheduler(e.store), e.newScheduler(e.pool())
			start := make(chan struct{})
			done := func() bool { return subscriptionsLeft(t, e, ids, periods) == 0 }
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, sc := range []*scheduler{one, two} {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = tickUntil(t, sc, start, done) }()
			}
			close(start)
			wg.Wait()
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])

			upTo, amounts := map[string]int64{}, map[string]int64{}
			for i, id := range ids {
				upTo[id], amounts[id] = periods, 2000+int64(i)
				s, err := e.store.FindSubscriptionByID(context.Background(), id)
				require.NoError(t, err)
				require.Equal(t, subscription.Active, s.Status)
				require.Equal(t, int64(periods), s.Period)
				require.Empty(t, s.ChargingPaymentID)
			}
			charged := exactlyOnce(t, e, upTo, amounts)
			require.Len(t, charged, subs*periods)
			a, b := one.charged(charged), two.charged(charged)
			require.Equal(t, subs*periods, a+b, "every charge was started by one of the two")
			t.Logf("%s: %d periods, scheduler 1 charged %d, scheduler 2 charged %d", db.Name, subs*periods, a, b)
		})

		t.Run("pause races a charge", func(t *testing.T) {
			const n = 20
			ids := dueSubscriptions(t, e, p.MandateID, n, periods, 3000)
			one, two := e.newScheduler(e.store), e.newScheduler(e.pool())
			start := make(chan struct{})
			paused := make(chan struct{})
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, sc := range []*scheduler{one, two} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Tick until every pause has answered, then twice more:
					// anything still due would be charged by then.
					after := 0
					errs[i] = tickUntil(t, sc, start, func() bool {
						select {
						case <-paused:
							after++
						default:
						}
						return after > 2
					})
				}()
			}
			close(start)

			// Pause subscription i once the schedulers have charged 2i
			// periods of the batch (or all they still can): the pauses fall
			// at every stage, some while a charge is in flight. What the subscription has once
			// the pause answered is all it may ever have.
			atPause, inFlight := map[string]int{}, 0
			for i, id := range ids {
				require.Eventually(t, func() bool {
					return len(periodCharges(t, e, ids)) >= i*periods/2 || subscriptionsLeft(t, e, ids[i:], periods) == 0
				}, time.Minute, 2*time.Millisecond)
				var got openapi.Subscription
				require.NoError(t, e.a.JSON(context.Background(), "POST", "/api/v1/subscriptions/"+id+"/pause", nil, &got))
				require.Equal(t, "paused", got.Status)
				atPause[id] = len(periodCharges(t, e, []string{id}))
				s, err := e.store.FindSubscriptionByID(context.Background(), id)
				require.NoError(t, err)
				if s.ChargingPaymentID != "" {
					inFlight++
				}
			}
			close(paused)
			wg.Wait()
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			// Charges in flight at the pause finish.
			e.await(0, func() error {
				if n := subscriptionsLeft(t, e, ids, 0); n > 0 {
					return fmt.Errorf("%d subscriptions still have a charge in flight", n)
				}
				return nil
			})

			upTo, amounts := map[string]int64{}, map[string]int64{}
			before, whole := 0, 0
			for i, id := range ids {
				s, err := e.store.FindSubscriptionByID(context.Background(), id)
				require.NoError(t, err)
				require.Equal(t, subscription.Paused, s.Status, "subscription %d", i)
				require.Nil(t, s.NextRunAt)
				got := len(periodCharges(t, e, []string{id}))
				require.Equal(t, atPause[id], got, "subscription %d: no charge after the pause", i)
				require.Equal(t, int64(got), s.Period, "subscription %d: each charge moved it one period", i)
				if got == periods {
					whole++
				}
				upTo[id], amounts[id] = int64(got), 3000+int64(i)
			}
			exactlyOnce(t, e, upTo, amounts)
			for _, c := range atPause {
				before += c
			}
			t.Logf("%s: %d subscriptions paused while charged (%d with a charge in flight), %d charges before the pauses, %d fully charged first",
				db.Name, n, inFlight, before, whole)
		})
	})
}
