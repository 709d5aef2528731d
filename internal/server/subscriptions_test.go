package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// termsBody is a direct card payment with monthly subscription terms
// first due at first.
func termsBody(number string, first time.Time, unit string) string {
	return cardBody(number, fmt.Sprintf(`,"customer_reference":"payer-%s","subscription":{"interval_unit":%q,
		"interval_count":1,"first_charge_at":%q,"disclosure_version":"terms-2026-11"}`,
		number[len(number)-4:], unit, first.Format(time.RFC3339)))
}

// subscribe makes a direct payment with terms, waits for it to succeed and
// answers it with its (now active) subscription.
func (e *env) subscribe(c *client.Client, number string, first time.Time) (openapi.Payment, openapi.Subscription) {
	e.t.Helper()
	p := e.direct(c, termsBody(number, first, "month"))
	require.NotEmpty(e.t, p.MandateID)
	require.NotEmpty(e.t, p.SubscriptionID)
	p = e.settle(c, p.PaymentID)
	require.Equal(e.t, "succeeded", p.Status)
	sub := e.subscription(c, p.SubscriptionID)
	require.Equal(e.t, "active", sub.Status)
	return p, sub
}

func (e *env) subscription(c *client.Client, id string) openapi.Subscription {
	e.t.Helper()
	var sub openapi.Subscription
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/subscriptions/"+id, nil, &sub))
	return sub
}

// keyNow is the calling key's time (its sandbox clock).
func (e *env) keyNow(c *client.Client) time.Time {
	e.t.Helper()
	var ck openapi.SandboxClock
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/sandbox/clock", nil, &ck))
	return ck.Now.Std()
}

// advance moves the calling key's clock to `to`.
func (e *env) advance(c *client.Client, to time.Time) openapi.SandboxClockAdvanced {
	e.t.Helper()
	var out openapi.SandboxClockAdvanced
	require.NoError(e.t, c.JSON(context.Background(), "POST", "/api/v1/sandbox/clock/advance",
		map[string]any{"to": to.UTC().Format(time.RFC3339Nano)}, &out))
	return out
}

// charges are a subscription's charges, oldest first.
func (e *env) charges(keyID, subID string) []*payment.Payment {
	e.t.Helper()
	all, err := e.store.ListPayments(context.Background(), keyID, payment.Filter{Limit: 500})
	require.NoError(e.t, err)
	var out []*payment.Payment
	for _, p := range all {
		if p.SubscriptionID == subID && p.SubscriptionPeriod != nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *payment.Payment) int {
		if d := *a.SubscriptionPeriod - *b.SubscriptionPeriod; d != 0 {
			return int(d)
		}
		return a.SubscriptionAttempt - b.SubscriptionAttempt
	})
	return out
}

// eventsOf counts the key's events of a type about the given resources.
func (e *env) eventsOf(keyID, typ string, ids map[string]bool) int {
	e.t.Helper()
	evs, err := e.store.ListEvents(context.Background(), keyID, webhook.EventFilter{Type: typ, Limit: 500})
	require.NoError(e.t, err)
	n := 0
	for _, ev := range evs {
		if ids[ev.ResourceID] {
			n++
		}
	}
	return n
}

// TestSubscriptionYearWithTheClock: consent on a direct payment, then a
// year of monthly charges by advancing the key's clock once: 12 charges,
// each its own payment with its period, 12 payment.succeeded events, the
// subscription still active with period 12 next (docs/design/decisions.md
// sections 11 and 14).
func TestSubscriptionYearWithTheClock(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		rc := newReceiver(t, ok)
		e.addEndpoint(e.a, rc.URL)
		first := e.clock.Now().Add(time.Hour)
		p, sub := e.subscribe(e.a, "4242424242424242", first)

		var m openapi.Mandate
		require.NoError(t, e.a.JSON(context.Background(), "GET", "/api/v1/mandates/"+p.MandateID, nil, &m))
		require.Equal(t, "active", m.Status)
		require.Equal(t, p.PaymentID, m.PaymentID)
		require.Equal(t, "terms-2026-11", m.DisclosureVersion)
		require.Equal(t, "424242******4242", m.CardMask)
		require.NotNil(t, m.Consent)
		require.Equal(t, "direct", m.Consent.Channel)
		require.Equal(t, first.UTC(), sub.NextRunAt.Std().UTC())

		// Another key sees neither.
		resp, err := e.b.Do(context.Background(), client.Request{Method: "GET", Target: "/api/v1/mandates/" + p.MandateID})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, resp.Status)
		resp, err = e.b.Do(context.Background(), client.Request{Method: "GET", Target: "/api/v1/subscriptions/" + sub.ID})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, resp.Status)

		out := e.advance(e.a, first.AddDate(0, 11, 0).Add(time.Minute))
		require.Equal(t, map[string]int{"subscription_charges": 12, "retries": 0, "expirations": 0}, out.Ran)

		charges := e.charges(e.aKey.ID, sub.ID)
		require.Len(t, charges, 12)
		ids := map[string]bool{}
		for n, c := range charges {
			require.Equal(t, int64(n), *c.SubscriptionPeriod)
			require.Equal(t, payment.Succeeded, c.Status, "period %d", n)
			require.Equal(t, first.AddDate(0, n, 0).UTC(), c.CreatedAt.UTC(), "period %d charged at its own time", n)
			require.Equal(t, int64(1000), c.AmountMinor)
			require.Equal(t, p.MandateID, c.MandateID)
			ids[c.ID] = true
			var got openapi.Payment
			require.NoError(t, e.a.JSON(context.Background(), "GET", "/api/v1/payments/"+c.ID, nil, &got))
			require.Equal(t, int64(n), *got.SubscriptionPeriod)
			require.Equal(t, sub.ID, got.SubscriptionID)
		}
		require.Equal(t, 12, e.eventsOf(e.aKey.ID, "payment.succeeded", ids))
		require.Equal(t, 12, e.eventsOf(e.aKey.ID, "payment.processing", ids))
		subIDs, mandateIDs := map[string]bool{sub.ID: true}, map[string]bool{p.MandateID: true}
		require.Equal(t, 1, e.eventsOf(e.aKey.ID, "subscription.incomplete", subIDs))
		require.Equal(t, 1, e.eventsOf(e.aKey.ID, "subscription.active", subIDs))
		require.Equal(t, 1, e.eventsOf(e.aKey.ID, "mandate.pending", mandateIDs))
		require.Equal(t, 1, e.eventsOf(e.aKey.ID, "mandate.active", mandateIDs))
		// The other way: the same 12 successes reach the webhook endpoint.
		delivered := func() int {
			n := 0
			rc.mu.Lock()
			defer rc.mu.Unlock()
			seen := map[string]bool{}
			for _, g := range rc.got {
				var ev struct {
					Type string
					Data struct{ Object openapi.Payment }
				}
				require.NoError(t, json.Unmarshal(g.body, &ev))
				if ev.Type == "payment.succeeded" && ids[ev.Data.Object.PaymentID] && !seen[ev.Data.Object.PaymentID] {
					seen[ev.Data.Object.PaymentID] = true
					n++
				}
			}
			return n
		}
		e.await(time.Millisecond, func() error {
			if n := delivered(); n != 12 {
				return fmt.Errorf("the endpoint got %d of the 12 charges' payment.succeeded", n)
			}
			return nil
		})

		sub = e.subscription(e.a, sub.ID)
		require.Equal(t, "active", sub.Status)
		require.Equal(t, int64(12), sub.NextPeriod)
		require.Equal(t, first.AddDate(0, 12, 0).UTC(), sub.NextRunAt.Std().UTC())

		// The clock: the key's time moved, the other key's did not.
		var ca, cb openapi.SandboxClock
		require.NoError(t, e.a.JSON(context.Background(), "GET", "/api/v1/sandbox/clock", nil, &ca))
		require.NoError(t, e.b.JSON(context.Background(), "GET", "/api/v1/sandbox/clock", nil, &cb))
		require.Greater(t, ca.OffsetSeconds, int64(300*24*3600))
		require.Zero(t, cb.OffsetSeconds)

		// Nothing more is due: advancing to the same time runs nothing.
		out = e.advance(e.a, first.AddDate(0, 11, 0).Add(2*time.Minute))
		require.Equal(t, map[string]int{"subscription_charges": 0, "retries": 0, "expirations": 0}, out.Ran)
	})
}

// TestSubscriptionTermsAnswer: the terms are no longer dropped: a session
// with terms answers its mandate and incomplete subscription, which a
// declined direct payment cancels; bad terms are refused.
func TestSubscriptionTermsAnswer(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		first := e.clock.Now().Add(time.Hour)
		var s openapi.Payment
		require.NoError(t, e.a.JSON(context.Background(), "POST", "/api/v1/payment-sessions", json.RawMessage(fmt.Sprintf(
			`{"order_id":"sess-terms","amount_minor":500,"currency":"USD","subscription":{"interval_unit":"week",
			"interval_count":2,"first_charge_at":%q,"disclosure_version":"v7","consent":true}}`, first.Format(time.RFC3339))), &s))
		require.NotEmpty(t, s.MandateID)
		require.NotEmpty(t, s.SubscriptionID)
		sub := e.subscription(e.a, s.SubscriptionID)
		require.Equal(t, "incomplete", sub.Status)
		require.Equal(t, "week", sub.IntervalUnit)
		require.Equal(t, 2, sub.IntervalCount)
		require.Equal(t, int64(500), sub.AmountMinor)

		// A declined payment with terms: mandate failed, subscription canceled.
		p := e.direct(e.a, termsBody("4000000000000002", first, "month"))
		p = e.settle(e.a, p.PaymentID)
		require.Equal(t, "declined", p.Status)
		require.Equal(t, "canceled", e.subscription(e.a, p.SubscriptionID).Status)
		var m openapi.Mandate
		require.NoError(t, e.a.JSON(context.Background(), "GET", "/api/v1/mandates/"+p.MandateID, nil, &m))
		require.Equal(t, "failed", m.Status)

		// Terms on a payment that cannot save a card, or backdated.
		resp := e.post(e.a, "/api/v1/payments/direct", fmt.Sprintf(`{"order_id":"terms-mobile","amount_minor":100,
			"currency":"UAH","payment_method":{"type":"mobile","mobile":{"phone":"+12025550100"}},
			"subscription":{"interval_unit":"month","interval_count":1,"first_charge_at":%q,"disclosure_version":"v1"}}`,
			first.Format(time.RFC3339)))
		require.Equal(t, http.StatusBadRequest, resp.Status, "%s", resp.Body)
		resp = e.post(e.a, "/api/v1/payments/direct", termsBody("4242424242424242", first.AddDate(0, 0, -3), "month"))
		require.Equal(t, http.StatusBadRequest, resp.Status, "%s", resp.Body)
		require.Contains(t, string(resp.Body), "subscription.first_charge_at")

		// POST /subscriptions: another schedule on the active mandate; an
		// unknown, foreign or failed mandate is 422 mandate_not_found.
		active, _ := e.subscribe(e.a, "4242424242424242", first)
		var more openapi.Subscription
		require.NoError(t, e.a.JSON(context.Background(), "POST", "/api/v1/subscriptions", map[string]any{
			"mandate_id": active.MandateID, "amount_minor": 250, "currency": "USD", "interval_unit": "day",
			"interval_count": 3}, &more))
		require.Equal(t, "active", more.Status)
		require.Equal(t, active.MandateID, more.MandateID)
		for _, c := range []struct {
			who  *client.Client
			id   string
			code int
		}{{e.a, "7b0c2b8e-0d5e-4c43-9d55-7d1c1c1c1c1c", 422}, {e.b, active.MandateID, 422}, {e.a, p.MandateID, 422}} {
			resp := e.post(c.who, "/api/v1/subscriptions", fmt.Sprintf(`{"mandate_id":%q,"amount_minor":1,
				"currency":"USD","interval_unit":"day","interval_count":1}`, c.id))
			require.Equal(t, c.code, resp.Status, "%s", resp.Body)
			require.Contains(t, string(resp.Body), "mandate_not_found")
		}
		// Due at once without first_run_at: the next advance charges it.
		out := e.advance(e.a, e.clock.Now().Add(time.Minute))
		require.Equal(t, 1, out.Ran["subscription_charges"])
	})
}

// TestConcurrentPauses: of concurrent pauses of one subscription through
// two API processes exactly one is accepted; the others answer 409
// invalid_subscription_state (the domain's rules of dunning, expiry and a
// deleted card are internal/subscription's tests).
func TestConcurrentPauses(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		// Concurrent pauses, through two API processes.
		cs := e.clients("racer", "", e.url, e.apiProcess())
		_, s2 := e.subscribe(cs[0], "4242424242424242", e.clock.Now().Add(time.Hour))
		rs := race(t, cs, posts(20, "/api/v1/subscriptions/"+s2.ID+"/pause", ""))
		require.Equal(t, map[string]int{"200": 1, "409 invalid_subscription_state": 19}, tally(t, rs))
		require.Equal(t, "paused", e.subscription(cs[0], s2.ID).Status)
	})
}
