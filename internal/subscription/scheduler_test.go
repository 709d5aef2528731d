package subscription_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
)

// TestScheduleDueDates: the scheduler charges period n when it falls due
// by the schedule (subscription.Due: months keep the anchor's day, clamped
// to the month's end, never drifting; docs/design/decisions.md section 11),
// not a second before, each period once, and moves to the next.
func TestScheduleDueDates(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.Key(true)
		now := r.Clock.Now()
		first := time.Date(now.Year()+1, time.January, 31, 9, 30, 0, 0, time.UTC)
		sub := r.subscribe(k, "4242424242424242", first)
		require.Equal(t, first, *sub.NextRunAt)
		require.Zero(t, sub.Period)

		feb := time.Date(first.Year(), time.February, 28, 9, 30, 0, 0, time.UTC)
		if first.Year()%4 == 0 {
			feb = feb.AddDate(0, 0, 1)
		}
		due := []time.Time{first, feb, time.Date(first.Year(), time.March, 31, 9, 30, 0, 0, time.UTC),
			time.Date(first.Year(), time.April, 30, 9, 30, 0, 0, time.UTC)}
		for n, at := range due {
			r.at(at.Add(-time.Second))
			require.Empty(t, r.tick(k), "period %d: not due yet", n)
			r.at(at)
			started := r.tick(k)
			require.Len(t, started, 1, "period %d", n)
			require.Equal(t, int64(n), *started[0].SubscriptionPeriod)
			require.Equal(t, payment.Succeeded, started[0].Status)
			require.Equal(t, payment.KindRecurring, started[0].Kind)
			require.Equal(t, int64(1000), started[0].AmountMinor)
			require.Empty(t, r.tick(k), "period %d is charged once", n)
			got := r.subscription(sub.ID)
			require.Equal(t, subscription.Active, got.Status)
			require.Equal(t, int64(n+1), got.Period)
			require.Equal(t, subscription.Due(first, sub.Interval, int64(n+1)), *got.NextRunAt)
		}
		require.Equal(t, [][2]int64{{0, 0}, {1, 0}, {2, 0}, {3, 0}}, periods(r.charges(k, sub.ID)))
	})
}

// TestDunning: a soft decline makes the subscription past_due and retries
// the period 1, 3 and 5 days after the first failure, the last failure
// canceling it; a hard decline cancels it at once, never retried
// (docs/design/decisions.md section 11; the sandbox's cards whose later
// charges decline, docs/sandbox.md).
func TestDunning(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.Key(true)
		first := r.Clock.Now().Add(time.Hour)
		day := 24 * time.Hour

		t.Run("soft", func(t *testing.T) {
			sub := r.subscribe(k, "4000000000005001", first)
			r.at(first)
			require.Len(t, r.tick(k), 1)
			got := r.subscription(sub.ID)
			require.Equal(t, subscription.PastDue, got.Status)
			require.Equal(t, "insufficient_funds", got.LastDeclineCode)
			require.Equal(t, 1, got.Attempt)
			require.Equal(t, first.Add(day), *got.NextRunAt)

			for i, retry := range []time.Duration{day, 3 * day, 5 * day} {
				r.at(first.Add(retry - time.Minute))
				require.Empty(t, r.tick(k), "retry %d is not due yet", i+1)
				r.at(first.Add(retry))
				require.Len(t, r.tick(k), 1, "retry %d", i+1)
			}
			got = r.subscription(sub.ID)
			require.Equal(t, subscription.Canceled, got.Status)
			require.Nil(t, got.NextRunAt)
			charges := r.charges(k, sub.ID)
			require.Equal(t, [][2]int64{{0, 0}, {0, 1}, {0, 2}, {0, 3}}, periods(charges))
			for i, c := range charges {
				require.Equal(t, payment.Declined, c.Status)
				require.Equal(t, "insufficient_funds", c.DeclineCode)
				require.Equal(t, first.Add([]time.Duration{0, day, 3 * day, 5 * day}[i]), c.CreatedAt.UTC(), "attempt %d", i)
			}
			r.at(first.AddDate(0, 3, 0))
			require.Empty(t, r.tick(k), "canceled: never charged again")
		})

		t.Run("hard", func(t *testing.T) {
			second := r.Clock.Now().Add(time.Hour)
			sub := r.subscribe(k, "4000000000001232", second)
			r.at(second)
			require.Len(t, r.tick(k), 1)
			got := r.subscription(sub.ID)
			require.Equal(t, subscription.Canceled, got.Status)
			require.Equal(t, "account_closed", got.LastDeclineCode)
			r.at(second.AddDate(0, 2, 0))
			require.Empty(t, r.tick(k))
			require.Len(t, r.charges(k, sub.ID), 1, "never retried")
		})
	})
}

// TestPauseResumeCancel: paused for two periods, then resumed: the paused
// periods are never charged and charging goes on from the next boundary in
// the future (docs/design/decisions.md section 5); a canceled subscription
// takes no action and is never charged again. An action its status does
// not allow is 409 invalid_subscription_state (docs/subscriptions.md,
// "Statuses").
func TestPauseResumeCancel(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.Key(true)
		first := r.Clock.Now().Add(time.Hour)
		sub := r.subscribe(k, "4242424242424242", first)
		r.at(first)
		require.Len(t, r.tick(k), 1, "period 0")

		paused, err := r.act(k, sub.ID, subscription.Pause)
		require.NoError(t, err)
		require.Equal(t, subscription.Paused, paused.Status)
		require.Nil(t, paused.NextRunAt)
		_, err = r.act(k, sub.ID, subscription.Pause)
		require.Equal(t, fault.InvalidSubscriptionState, faultOf(t, err).Code)

		r.at(first.AddDate(0, 2, 1)) // periods 1 and 2 pass while paused
		require.Empty(t, r.tick(k))
		resumed, err := r.act(k, sub.ID, subscription.Resume)
		require.NoError(t, err)
		require.Equal(t, subscription.Active, resumed.Status)
		require.Equal(t, int64(3), resumed.Period)
		require.Equal(t, first.AddDate(0, 3, 0), *resumed.NextRunAt)
		for _, n := range []int{3, 4} {
			r.at(first.AddDate(0, n, 0))
			require.Len(t, r.tick(k), 1, "period %d", n)
		}
		require.Equal(t, [][2]int64{{0, 0}, {3, 0}, {4, 0}}, periods(r.charges(k, sub.ID)))

		canceled, err := r.act(k, sub.ID, subscription.Cancel)
		require.NoError(t, err)
		require.Equal(t, subscription.Canceled, canceled.Status)
		require.Nil(t, canceled.NextRunAt)
		for _, a := range []subscription.Action{subscription.Pause, subscription.Resume, subscription.Cancel} {
			_, err := r.act(k, sub.ID, a)
			require.Equal(t, fault.InvalidSubscriptionState, faultOf(t, err).Code, "%s after cancel", a)
		}
		r.at(first.AddDate(0, 8, 0))
		require.Empty(t, r.tick(k))

		_, err = r.act(r.Key(true), sub.ID, subscription.Cancel)
		require.Equal(t, fault.NotFound, faultOf(t, err).Code, "another key's")
	})
}

// TestResumeWhileACharges: paused and resumed while a period's charge is
// still in flight, the subscription moves on to the first period due after
// the resume; the old charge's soft failure then settles only its own
// period: no dunning on the new one (whose retry would charge it weeks
// early), and the new period is still charged when due.
func TestResumeWhileACharges(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.Key(true)
		first := r.Clock.Now().Add(time.Hour)
		sub := r.subscribe(k, "4000000000005001", first) // its later charges decline softly
		r.at(first)
		_, err := r.svc.Tick(r.Ctx, 10) // the charge starts; its provider call waits
		require.NoError(t, err)
		charges := r.charges(k, sub.ID)
		require.Len(t, charges, 1)
		require.Equal(t, payment.Processing, charges[0].Status)

		_, err = r.act(k, sub.ID, subscription.Pause)
		require.NoError(t, err)
		r.Clock.Add(time.Minute)
		got, err := r.act(k, sub.ID, subscription.Resume)
		require.NoError(t, err)
		require.Equal(t, int64(1), got.Period)

		r.Run(charges[0].ID)
		require.Equal(t, payment.Declined, r.payment(charges[0].ID).Status)
		got = r.subscription(sub.ID)
		require.Equal(t, subscription.Active, got.Status)
		require.Equal(t, int64(1), got.Period)
		require.Zero(t, got.Attempt)
		require.Empty(t, got.ChargingPaymentID)
		require.Equal(t, first.AddDate(0, 1, 0), *got.NextRunAt,
			"period 1 stays due at its own time, not a day after the old charge's failure")
	})
}

// TestPeriodChargedOnce fires schedulers at once at subscriptions that are
// due, as every worker process runs one (half of them in another process on
// its own pool): each period is charged exactly once
// (docs/design/decisions.md section 11). The subscription's lock and
// its charge in flight make "due?" and "charge" one step, and the
// database holds one payment per (subscription, period, attempt).
func TestPeriodChargedOnce(t *testing.T) {
	const subs, schedulers = 5, 8
	each(t, func(t *testing.T, r *rig) {
		k := r.Key(true)
		first := r.subscribe(k, "4242424242424242", r.Clock.Now().Add(time.Hour))
		ids := []string{first.ID}
		for i := 1; i < subs; i++ {
			var sub *subscription.Subscription
			require.NoError(t, r.InTx(func(tx *store.Tx) error {
				var err error
				sub, err = r.svc.Create(r.Ctx, tx, k, subscription.New{MandateID: first.MandateID, AmountMinor: 500 + int64(i),
					Currency: "USD", Interval: subscription.Interval{Unit: subscription.Day, Count: 1}})
				return err
			}))
			ids = append(ids, sub.ID)
		}
		r.at(first.NextRunAt.Add(time.Minute))
		procs := []*subscription.Service{r.svc, r.Peer().Subscriptions}

		// Round 0: every one is due; round 1, a day later: the daily ones
		// only.
		for round, due := range [][]string{ids, ids[1:]} {
			errs := make([]error, schedulers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range schedulers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = procs[i%2].Tick(r.Ctx, 100)
				}()
			}
			close(start)
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			for _, id := range due {
				charges := r.charges(k, id)
				require.Len(t, charges, round+1, "subscription %s, round %d", id, round)
				require.Equal(t, int64(round), *charges[round].SubscriptionPeriod)
				require.Equal(t, charges[round].ID, r.subscription(id).ChargingPaymentID, "the charge in flight")
				r.Run(charges[round].ID)
				got := r.subscription(id)
				require.Equal(t, int64(round+1), got.Period)
				require.Empty(t, got.ChargingPaymentID)
			}
			require.Len(t, r.charges(k, ids[0]), 1, "the monthly one is due once in this test")
			r.Clock.Add(24 * time.Hour)
		}
	})
}

// faultOf is err's fault, failing the test when err is none.
func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	f, ok := fault.As(err)
	require.True(t, ok, "want a fault, got %v", err)
	return f
}

// TestEdges: a charge the collection allowance refuses is a soft failure,
// retried a day later (docs/subscriptions.md, "Dunning"); the mandate's
// card expiring before a period completes the subscription, with no charge
// due; a deleted saved card cancels it at its next charge, charging
// nothing (docs/subscriptions.md, "Mandates").
func TestEdges(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		t.Run("the allowance", func(t *testing.T) {
			k := r.Key(true)
			first := r.Clock.Now().Add(time.Hour)
			sub := r.subscribe(k, "4242424242424242", first)
			limit := func(perTx int64) {
				require.NoError(t, r.Store.PutAllowance(r.Ctx, allowance.Setting{KeyID: k.ID, Allowance: allowance.Collection,
					Currency: "USD", PerTransactionMinor: &perTx, UpdatedAt: r.Clock.Now()}))
			}
			limit(500)
			r.at(first)
			started := r.tick(k)
			require.Len(t, started, 1)
			require.Equal(t, payment.Failed, started[0].Status)
			require.Equal(t, "limit_exceeded", started[0].DeclineCode)
			got := r.subscription(sub.ID)
			require.Equal(t, subscription.PastDue, got.Status)
			require.Equal(t, "limit_exceeded", got.LastDeclineCode)
			require.Equal(t, first.Add(24*time.Hour), *got.NextRunAt)

			limit(1_000_000)
			r.at(first.Add(24 * time.Hour))
			started = r.tick(k)
			require.Len(t, started, 1)
			require.Equal(t, payment.Succeeded, started[0].Status)
			got = r.subscription(sub.ID)
			require.Equal(t, subscription.Active, got.Status)
			require.Equal(t, int64(1), got.Period)
			require.Empty(t, got.LastDeclineCode)
		})

		t.Run("the card expires", func(t *testing.T) {
			k := r.Key(true)
			start := r.Clock.Now().Add(48 * time.Hour)
			sub := r.subscribeEvery(k, "4242424242424242", start, subscription.Year)
			expiry := subscription.CardExpiryEnd(12, r.Clock.Now().Year()+2)
			n := int64(0)
			for ; subscription.Due(start, sub.Interval, n).Before(expiry); n++ {
				r.at(subscription.Due(start, sub.Interval, n))
				require.Len(t, r.tick(k), 1, "period %d", n)
			}
			require.Positive(t, n)
			got := r.subscription(sub.ID)
			require.Equal(t, expiry, *got.NextRunAt, "the next period falls after the card's expiry")
			r.at(expiry)
			require.Empty(t, r.tick(k))
			got = r.subscription(sub.ID)
			require.Equal(t, subscription.Completed, got.Status)
			require.Nil(t, got.NextRunAt)
			require.Len(t, r.charges(k, sub.ID), int(n))
		})

		t.Run("the saved card is deleted", func(t *testing.T) {
			k := r.Key(true)
			first := r.Clock.Now().Add(time.Hour)
			sub := r.subscribe(k, "5555555555554444", first)
			m, err := r.Store.FindMandateForKey(r.Ctx, k.ID, sub.MandateID)
			require.NoError(t, err)
			require.NotEmpty(t, m.SavedCardID)
			require.NoError(t, r.App.SavedCards.Delete(r.Ctx, k.ID, m.SavedCardID))
			r.at(first)
			require.Empty(t, r.tick(k))
			got := r.subscription(sub.ID)
			require.Equal(t, subscription.Canceled, got.Status)
			require.Equal(t, "saved_card_deleted", got.LastDeclineCode)
			require.Empty(t, r.charges(k, sub.ID))
		})
	})
}
