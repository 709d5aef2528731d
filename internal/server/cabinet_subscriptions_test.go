package server_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/webhook"
)

var (
	subscriptionRowRE = regexp.MustCompile(`<tr data-subscription="([^"]+)">`)
	chargeRowRE       = regexp.MustCompile(`<tr data-charge="([^"]+)">`)
	subActionRE       = regexp.MustCompile(`data-action="([a-z]+)"`)
)

func subMatches(re *regexp.Regexp, body string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// cabinetSubscription starts a monthly subscription of USD 3.00 on an active
// mandate of the key through the signed API (createSubscription).
func (e *env) cabinetSubscription(c *client.Client, mandateID string) openapi.Subscription {
	e.t.Helper()
	var sub openapi.Subscription
	require.NoError(e.t, c.JSON(context.Background(), "POST", "/api/v1/subscriptions", map[string]any{
		"mandate_id": mandateID, "amount_minor": 300, "currency": "USD", "interval_unit": "month",
		"interval_count": 1}, &sub))
	require.Equal(e.t, "active", sub.Status)
	return sub
}

// subscriptionEvents are the key's events of a type about one subscription.
func (e *env) subscriptionEvents(keyID, typ, id string) int {
	e.t.Helper()
	evs, err := e.store.ListEvents(context.Background(), keyID, webhook.EventFilter{Type: typ, ResourceID: id, Limit: 100})
	require.NoError(e.t, err)
	return len(evs)
}

// TestCabinetSubscriptionsList: the list (docs/cabinet.md,
// "Subscriptions") shows the shown key's subscriptions newest first, 50 a
// page, by status, never another key's; a subscription's page shows its
// mandate masked; another key's subscription is a 404 page; a viewer sees
// no button.
func TestCabinetSubscriptionsList(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		mA, mB := activeMandate(t, e, e.aKey.ID), activeMandate(t, e, e.bKey.ID)
		subA := e.cabinetSubscription(e.a, mA.ID)
		subB := e.cabinetSubscription(e.b, mB.ID)

		// 54 older subscriptions of A in three statuses, two of them at the
		// same instant (the id breaks the tie).
		base := e.clock.Now().UTC().Add(-30 * 24 * time.Hour)
		statuses := []subscription.Status{subscription.Active, subscription.Paused, subscription.Canceled}
		paused := 0
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			for i := range 54 {
				at := base.Add(time.Duration(i/2*2) * time.Hour)
				s := &subscription.Subscription{ID: uuid.NewString(), AccessKeyID: e.aKey.ID, MandateID: mA.ID,
					Status: statuses[i%3], AmountMinor: 500 + int64(i), Currency: "USD",
					Interval: subscription.Interval{Unit: "week", Count: 2}, Anchor: at, CreatedAt: at, UpdatedAt: at}
				if s.Status == subscription.Active {
					next := at.Add(14 * 24 * time.Hour)
					s.NextRunAt = &next
				}
				if s.Status == subscription.Paused {
					paused++
				}
				if err := tx.CreateSubscription(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}))

		ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
		var all []string
		next, pages := "/cabinet/subscriptions", 0
		for next != "" {
			status, body, _ := ann.get(e.url + next)
			require.Equal(t, http.StatusOK, status, body)
			require.NotContains(t, body, subB.ID)
			ids := subMatches(subscriptionRowRE, body)
			require.LessOrEqual(t, len(ids), 50)
			all = append(all, ids...)
			next = ""
			if m := nextLinkRE.FindStringSubmatch(body); m != nil {
				next = html.UnescapeString(m[1])
			}
			pages++
		}
		require.Equal(t, 2, pages)
		require.Len(t, all, 55)
		require.Equal(t, subA.ID, all[0], "newest first")
		seen := map[string]bool{}
		var last *subscription.Subscription
		for _, id := range all {
			require.False(t, seen[id], "listed twice: %s", id)
			seen[id] = true
			s, err := e.store.FindSubscriptionForKey(ctx, e.aKey.ID, id)
			require.NoError(t, err)
			if last != nil {
				require.True(t, s.CreatedAt.Before(last.CreatedAt) || (s.CreatedAt.Equal(last.CreatedAt) && s.ID < last.ID),
					"newest first, then by id")
			}
			last = s
		}

		// The row of A's new subscription: amount, interval, next run.
		status, body, _ := ann.get(e.url + "/cabinet/subscriptions")
		require.Equal(t, http.StatusOK, status)
		row := body[strings.Index(body, `<tr data-subscription="`+subA.ID):]
		row = row[:strings.Index(row, "</tr>")]
		require.Contains(t, row, "USD 3.00")
		require.Contains(t, row, "1 month")
		require.Contains(t, row, subA.NextRunAt.Std().UTC().Format("2006-01-02 15:04"))
		require.Contains(t, row, "(due)", "no first_run_at: due at once")
		require.Contains(t, row, `<td><span class="badge ok">active</span></td>`)

		// The status filter.
		status, body, _ = ann.get(e.url + "/cabinet/subscriptions?status=paused")
		require.Equal(t, http.StatusOK, status)
		ids := subMatches(subscriptionRowRE, body)
		require.Len(t, ids, paused)
		for _, id := range ids {
			s, err := e.store.FindSubscriptionByID(ctx, id)
			require.NoError(t, err)
			require.Equal(t, subscription.Paused, s.Status)
		}

		// Another key: neither listed by ?key= nor shown.
		status, _, _ = ann.get(e.url + "/cabinet/subscriptions?key=" + e.bKey.ID)
		require.Equal(t, http.StatusNotFound, status)
		for _, id := range []string{subB.ID, uuid.NewString(), "not-an-id"} {
			status, body, _ = ann.get(e.url + "/cabinet/subscriptions/" + id)
			require.Equal(t, http.StatusNotFound, status, id)
			require.Contains(t, body, "No such subscription among your keys.")
		}

		// A's subscription: its figures and its mandate, the card masked;
		// a viewer gets no button.
		status, body, _ = ann.get(e.url + "/cabinet/subscriptions/" + subA.ID)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `data-status="active"`)
		require.Contains(t, body, "USD 3.00 every 1 month")
		require.Contains(t, body, `data-mandate="`+mA.ID+`"`)
		require.Contains(t, body, "424242******4242")
		require.Contains(t, body, fmt.Sprintf("expires 12/%d", e.clock.Now().Year()+2))
		require.Contains(t, body, mA.CustomerReference)
		require.Contains(t, body, mA.ConsentAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		require.NotContains(t, body, "4242424242424242")
		require.NotContains(t, body, "tok_", "never the provider's token")
		require.Empty(t, subMatches(subActionRE, body), "no button for a viewer")

		// Its payments, 50 a page, newest first: 52 charges stored as the
		// scheduler stores them (one period each).
		tmpl, err := e.store.FindPaymentByID(ctx, e.direct(e.a, orderBody("charge-template", "")).PaymentID)
		require.NoError(t, err)
		var want []string
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			for n := range 52 {
				c := *tmpl
				period := int64(n)
				c.ID, c.OrderID = uuid.NewString(), fmt.Sprintf("subscription_%s_%d_0", subA.ID, n)
				c.SubscriptionID, c.SubscriptionPeriod, c.SubscriptionAttempt = subA.ID, &period, 0
				c.CreatedAt = base.Add(time.Duration(n/2*2) * time.Hour) // pairs at one instant
				c.UpdatedAt = c.CreatedAt
				if err := tx.CreatePayment(ctx, &c); err != nil {
					return err
				}
				want = append(want, c.ID)
			}
			return nil
		}))
		var charges []string
		next, pages = "/cabinet/subscriptions/"+subA.ID, 0
		for next != "" {
			status, body, _ := ann.get(e.url + next)
			require.Equal(t, http.StatusOK, status, body)
			ids := subMatches(chargeRowRE, body)
			require.LessOrEqual(t, len(ids), 50)
			charges = append(charges, ids...)
			next = ""
			if m := nextLinkRE.FindStringSubmatch(body); m != nil {
				next = html.UnescapeString(m[1])
			}
			pages++
		}
		require.Equal(t, 2, pages)
		slices.SortFunc(want, func(x, y string) int { // newest first, then by id descending
			px, _ := e.store.FindPaymentByID(ctx, x)
			py, _ := e.store.FindPaymentByID(ctx, y)
			if c := py.CreatedAt.Compare(px.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(y, x)
		})
		require.Equal(t, want, charges)
		status, _, _ = ann.get(e.url + "/cabinet/subscriptions/" + subA.ID + "?after=nonsense")
		require.Equal(t, http.StatusBadRequest, status)

		bob := e.signedInAdmin(t, "bob@example.com", e.aKey.ID, e.bKey.ID)
		status, body, _ = bob.get(e.url + "/cabinet/subscriptions/" + subA.ID)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, []string{"pause", "cancel"}, subMatches(subActionRE, body), "what active allows")
		status, body, _ = bob.get(e.url + "/cabinet/subscriptions/" + subB.ID)
		require.Equal(t, http.StatusOK, status, "a user of both keys sees B's")
		require.Contains(t, body, "<strong>merchant-b</strong>", "shown as B's key")
		status, body, _ = bob.get(e.url + "/cabinet/subscriptions?key=" + e.bKey.ID)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, []string{subB.ID}, subMatches(subscriptionRowRE, body))
	})
}

// TestCabinetSubscriptionsActions: pause, resume and cancel through the
// page do what the signed API does, at the key's clock, with the same
// events; a viewer, a missing or a wrong anti-forgery token and another
// key's subscription change nothing; a status that does not allow the
// action answers the 409 page.
func TestCabinetSubscriptionsActions(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		mA, mB := activeMandate(t, e, e.aKey.ID), activeMandate(t, e, e.bKey.ID)
		first := e.clock.Now().Add(time.Hour)
		var sub openapi.Subscription
		require.NoError(t, e.a.JSON(context.Background(), "POST", "/api/v1/subscriptions", map[string]any{
			"mandate_id": mA.ID, "amount_minor": 300, "currency": "USD", "interval_unit": "month",
			"interval_count": 1, "first_run_at": first.UTC().Format(time.RFC3339)}, &sub))
		subB := e.cabinetSubscription(e.b, mB.ID)
		page := e.url + "/cabinet/subscriptions/" + sub.ID
		statusOf := func(id string, c *client.Client) string { return e.subscription(c, id).Status }

		viewer := e.signedInStaff(t, "vic@example.com", e.aKey.ID)
		_, _, vcsrf := viewer.get(page)
		require.NotEmpty(t, vcsrf)
		status, body, _ := viewer.post(page+"/pause", url.Values{"csrf_token": {vcsrf}})
		require.Equal(t, http.StatusForbidden, status)
		require.Contains(t, body, "viewer")
		require.Equal(t, "active", statusOf(sub.ID, e.a))

		ann := e.signedInAdmin(t, "ann@example.com", e.aKey.ID)
		_, _, csrf := ann.get(page)
		for _, form := range []url.Values{{}, {"csrf_token": {"forged"}}, {"csrf_token": {vcsrf}}} {
			status, _, _ = ann.post(page+"/pause", form)
			require.Equal(t, http.StatusForbidden, status, "token %q", form.Get("csrf_token"))
		}
		require.Equal(t, "active", statusOf(sub.ID, e.a))
		require.Zero(t, e.subscriptionEvents(e.aKey.ID, "subscription.paused", sub.ID))

		// Another key's subscription: 404, unchanged.
		status, _, _ = ann.post(e.url+"/cabinet/subscriptions/"+subB.ID+"/pause", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusNotFound, status)
		require.Equal(t, "active", statusOf(subB.ID, e.b))

		// Pause.
		status, _, loc := ann.post(page+"/pause", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "/cabinet/subscriptions/"+sub.ID+"?done=pause", loc)
		got := e.subscription(e.a, sub.ID)
		require.Equal(t, "paused", got.Status)
		require.True(t, got.NextRunAt.IsZero())
		require.Equal(t, 1, e.subscriptionEvents(e.aKey.ID, "subscription.paused", sub.ID))
		status, body, _ = ann.get(e.url + loc)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "Paused: nothing is charged until it is resumed.")
		require.Equal(t, []string{"resume", "cancel"}, subMatches(subActionRE, body))

		// Pausing again: the 409 page, nothing changed.
		status, body, _ = ann.post(page+"/pause", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusConflict, status)
		require.Contains(t, body, "This subscription is paused: it cannot be paused. Nothing was changed.")
		require.Contains(t, body, `data-status="paused"`)
		require.Equal(t, 1, e.subscriptionEvents(e.aKey.ID, "subscription.paused", sub.ID))

		// 40 days pass by the key's clock; resume goes to the first period
		// due after the key's now (period 2), not after the real time.
		e.advance(e.a, first.Add(40*24*time.Hour))
		keyNow := e.keyNow(e.a)
		status, _, loc = ann.post(page+"/resume", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "/cabinet/subscriptions/"+sub.ID+"?done=resume", loc)
		got = e.subscription(e.a, sub.ID)
		require.Equal(t, "active", got.Status)
		require.Equal(t, int64(2), got.NextPeriod)
		require.Equal(t, first.AddDate(0, 2, 0).UTC(), got.NextRunAt.Std().UTC())
		require.WithinDuration(t, keyNow, got.UpdatedAt.Std(), 5*time.Second, "changed at the key's time")
		evs, err := e.store.ListEvents(context.Background(), e.aKey.ID, webhook.EventFilter{Type: "subscription.active",
			ResourceID: sub.ID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, evs, 2, "created, then resumed")
		require.WithinDuration(t, keyNow, evs[0].CreatedAt, 5*time.Second, "the event at the key's time")
		_, body, _ = ann.get(e.url + loc)
		require.Contains(t, body, "This key's sandbox clock")
		require.Contains(t, body, first.AddDate(0, 2, 0).UTC().Format("2006-01-02 15:04"))

		// Cancel: final, no button left, every action 409.
		status, _, _ = ann.post(page+"/cancel", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "canceled", statusOf(sub.ID, e.a))
		require.Equal(t, 1, e.subscriptionEvents(e.aKey.ID, "subscription.canceled", sub.ID))
		status, body, _ = ann.get(page)
		require.Equal(t, http.StatusOK, status)
		require.Empty(t, subMatches(subActionRE, body))
		for _, a := range []string{"pause", "resume", "cancel"} {
			status, body, _ = ann.post(page+"/"+a, url.Values{"csrf_token": {csrf}})
			require.Equal(t, http.StatusConflict, status, a)
			require.Contains(t, body, "This subscription is canceled")
		}
		require.Equal(t, 1, e.subscriptionEvents(e.aKey.ID, "subscription.canceled", sub.ID))
		require.Equal(t, 1, e.subscriptionEvents(e.aKey.ID, "subscription.paused", sub.ID))
		require.Equal(t, "active", statusOf(subB.ID, e.b))
	})
}

// TestCabinetSubscriptionsConcurrentPause: ten pauses posted at once from
// one admin session pause the subscription once (one subscription.paused
// event); the nine others answer the 409 page, as the API's would
// (docs/cabinet.md, "Subscriptions").
func TestCabinetSubscriptionsConcurrentPause(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		sub := e.cabinetSubscription(e.a, activeMandate(t, e, e.aKey.ID).ID)
		ann := e.signedInAdmin(t, "ann@example.com", e.aKey.ID)
		page := e.url + "/cabinet/subscriptions/" + sub.ID
		_, _, csrf := ann.get(page)

		const n = 10
		statuses := make([]int, n)
		bodies := make([]string, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resp, err := ann.c.PostForm(page+"/pause", url.Values{"csrf_token": {csrf}})
				if err != nil {
					errs[i] = err
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				statuses[i], bodies[i], errs[i] = resp.StatusCode, string(body), err
			}()
		}
		close(start)
		wg.Wait()
		count := map[int]int{}
		for i := range n {
			require.NoError(t, errs[i])
			count[statuses[i]]++
			if statuses[i] == http.StatusConflict {
				require.Contains(t, bodies[i], "This subscription is paused: it cannot be paused.")
			}
		}
		require.Equal(t, map[int]int{http.StatusSeeOther: 1, http.StatusConflict: n - 1}, count)
		require.Equal(t, 1, e.subscriptionEvents(e.aKey.ID, "subscription.paused", sub.ID))
		require.Equal(t, "paused", e.subscription(e.a, sub.ID).Status)
	})
}

// TestCabinetSubscriptionsCharges: a subscription's charges, made by the
// sandbox clock, are listed on the payments page and on the
// subscription's page with the payment that carried the terms; a soft
// decline shows as past_due with its failed attempt and decline code.
func TestCabinetSubscriptionsCharges(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		first := e.clock.Now().Add(time.Hour)
		p, sub := e.subscribe(e.a, "4242424242424242", first)
		_, soft := e.subscribe(e.a, "4000000000005001", first)
		out := e.advance(e.a, first.Add(time.Minute))
		require.Equal(t, 2, out.Ran["subscription_charges"])
		charges := e.charges(e.aKey.ID, sub.ID)
		require.Len(t, charges, 1)
		charge := charges[0]
		require.Equal(t, "succeeded", string(charge.Status))

		ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
		status, body, _ := ann.get(e.url + "/cabinet/payments")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, paymentIDs(body), charge.ID, "the charge is a payment of the list")

		status, body, _ = ann.get(e.url + "/cabinet/subscriptions/" + sub.ID)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, []string{charge.ID, p.PaymentID}, subMatches(chargeRowRE, body), "the charge, then the payment with terms")
		require.Contains(t, body, `href="/cabinet/payments/`+charge.ID+`"`)
		row := body[strings.Index(body, `<tr data-charge="`+charge.ID):]
		row = row[:strings.Index(row, "</tr>")]
		require.Contains(t, row, `<td>0</td><td>0</td><td><span class="badge ok">succeeded</span></td>`, "period 0, attempt 0")
		require.Contains(t, body, first.AddDate(0, 1, 0).UTC().Format("2006-01-02 15:04"), "next run: period 1")
		require.NotContains(t, body, "4242424242424242")
		// The charge's page links back to its subscription, and so does an
		// event of the subscription (docs/cabinet.md).
		status, body, _ = ann.get(e.url + "/cabinet/payments/" + charge.ID)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<a href="/cabinet/subscriptions/`+sub.ID+`"><code>`+sub.ID+`</code></a>`)
		status, body, _ = ann.get(e.url + "/cabinet/events?resource_id=" + sub.ID)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<a href="/cabinet/subscriptions/`+sub.ID+`"><code>`+sub.ID+`</code></a>`)
		evID := subMatches(eventRowRE, body)
		require.NotEmpty(t, evID, "the subscription's events")
		status, body, _ = ann.get(e.url + "/cabinet/events/" + evID[0])
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `subscription <a href="/cabinet/subscriptions/`+sub.ID+`"><code>`+sub.ID+`</code></a>`)

		// The soft decline: past_due, one failed attempt, its code.
		status, body, _ = ann.get(e.url + "/cabinet/subscriptions?status=past_due")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, []string{soft.ID}, subMatches(subscriptionRowRE, body))
		require.Contains(t, body, `<td class="num">1</td><td>insufficient_funds</td>`)
		require.NotContains(t, body, "4000000000005001")
		status, body, _ = ann.get(e.url + "/cabinet/subscriptions/" + soft.ID)
		require.Equal(t, http.StatusOK, status)
		require.Len(t, subMatches(chargeRowRE, body), 2)
		require.Contains(t, body, "insufficient_funds")
	})
}
