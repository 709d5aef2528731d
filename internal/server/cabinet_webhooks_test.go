package server_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

var (
	eventRowRE   = regexp.MustCompile(`<tr data-event="([^"]+)">`)
	attemptRowRE = regexp.MustCompile(`<tr data-attempt>`)
)

func eventIDs(body string) []string {
	var out []string
	for _, m := range eventRowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// generations are the generations of an event's deliveries, by endpoint: a
// resend moves them on, so equal generations mean no resend happened.
func (e *env) generations(t *testing.T, eventID string) map[string]int {
	t.Helper()
	ds, err := e.store.ListDeliveries(context.Background(), eventID)
	require.NoError(t, err)
	out := map[string]int{}
	for _, d := range ds {
		out[d.EndpointID] = d.Generation
	}
	return out
}

// TestCabinetWebhooks drives the endpoints page and the event log with
// plain HTTP on both databases (docs/cabinet.md, "Webhook endpoints and
// events"): a key's endpoints without their secrets and with their health,
// its events page by page with filters, one event's payload and
// deliveries, nothing of another key, and no resend by a viewer.
func TestCabinetWebhooks(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		picky := e.addEndpoint(e.a, "http://127.0.0.1:9/picky", "payment.succeeded")
		every := e.addEndpoint(e.a, "http://127.0.0.1:9/every")
		gone := e.addEndpoint(e.a, "http://127.0.0.1:9/gone")
		removed := e.addEndpoint(e.a, "http://127.0.0.1:9/removed")
		other := e.addEndpoint(e.b, "http://127.0.0.1:9/bee")
		require.NoError(t, e.a.JSON(ctx, "DELETE", "/api/v1/webhook-endpoints/"+removed.ID, nil, nil))
		require.NoError(t, e.store.DisableWebhookEndpoint(ctx, gone.ID, e.clock.Now(), webhook.ReasonEndpointGone))

		// A real payment (its payment.processing event carries the masked
		// card), then 120 more events of A, and B's.
		p := e.direct(e.a, orderBody("order-hooks", "cust-hooks"))
		var succeeded []webhook.Event
		for i := range 120 {
			typ := "payment.processing"
			if i%3 == 0 {
				typ = "payment.succeeded"
			}
			ev := e.recordEvent(e.aKey, typ)
			if typ == "payment.succeeded" {
				succeeded = append(succeeded, ev)
			}
			if i%7 == 0 {
				e.clock.Add(time.Millisecond) // ties and distinct times both
			}
		}
		evB := e.recordEvent(e.bKey, "payment.succeeded")
		all, err := e.store.ListEvents(ctx, e.aKey.ID, webhook.EventFilter{Limit: 500})
		require.NoError(t, err)
		require.Len(t, all, 121)

		// One failed attempt of a pending delivery to "every".
		ds, err := e.store.ListDeliveries(ctx, succeeded[0].ID)
		require.NoError(t, err)
		for _, d := range ds {
			if d.EndpointID == every.ID {
				require.NoError(t, e.store.RecordAttempt(ctx, &webhook.Attempt{ID: "att-1", DeliveryID: d.ID,
					At: e.clock.Now(), StatusCode: 503, Error: ""}))
			}
		}

		ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
		t.Run("endpoints", func(t *testing.T) {
			status, body, _ := ann.get(e.url + "/cabinet/webhooks")
			require.Equal(t, http.StatusOK, status, body)
			for _, ep := range []openapi.CreatedWebhookEndpoint{picky, every, gone, removed, other} {
				require.NotContains(t, body, ep.Secret)
			}
			require.NotContains(t, body, "whsec_")
			require.NotContains(t, body, removed.URL, "a removed endpoint is gone")
			require.NotContains(t, body, other.URL, "another key's endpoint")
			require.Contains(t, body, `<tr data-endpoint="`+picky.ID+`">`)
			require.Contains(t, body, "payment.succeeded</td>")
			require.Contains(t, body, "every type")
			require.Regexp(t, `data-endpoint="`+gone.ID+`">[^\n]*\n[^\n]*\n<td data-state="disabled"><span class="badge bad">disabled</span> [^<]*\(endpoint_disabled\)`, body)
			require.Contains(t, body, `data-state="enabled"`)
			// picky took the 40 succeeded events, every all 121 (the
			// disabled one was disabled before any event): all pending.
			require.Contains(t, body, `data-pending="40" data-failed="0"`)
			require.Contains(t, body, `data-pending="121" data-failed="0"`)
			require.Contains(t, body, "HTTP 503")
		})

		t.Run("the list, page by page", func(t *testing.T) {
			var got []string
			next, pages := "/cabinet/events", 0
			for next != "" {
				status, body, _ := ann.get(e.url + next)
				require.Equal(t, http.StatusOK, status, body)
				require.NotContains(t, body, evB.ID)
				require.NotContains(t, body, "4242424242424242")
				got = append(got, eventIDs(body)...)
				pages++
				next = ""
				if m := nextLinkRE.FindStringSubmatch(body); m != nil {
					next = strings.ReplaceAll(m[1], "&amp;", "&")
				}
			}
			require.Equal(t, 3, pages)
			want := make([]string, len(all))
			for i, ev := range all {
				want[i] = ev.ID
			}
			require.Equal(t, want, got, "newest first, each once")

			status, body, _ := ann.get(e.url + "/cabinet/events?type=payment.succeeded")
			require.Equal(t, http.StatusOK, status)
			require.Len(t, eventIDs(body), 40)
			require.Equal(t, 40, strings.Count(body, "<td>2 pending</td>"), "to picky and every")
			require.Contains(t, body, `value="payment.succeeded"`)

			status, body, _ = ann.get(e.url + "/cabinet/events?resource_id=" + p.PaymentID)
			require.Equal(t, http.StatusOK, status)
			require.Len(t, eventIDs(body), 1)
			require.Contains(t, body, `<a href="/cabinet/payments/`+p.PaymentID+`">`)
			require.Contains(t, body, "<td>1 pending</td>")

			status, body, _ = ann.get(e.url + "/cabinet/events?type=nonsense")
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, "was left out")
			require.Len(t, eventIDs(body), 50)

			status, _, _ = ann.get(e.url + "/cabinet/events?after=bogus")
			require.Equal(t, http.StatusBadRequest, status)
			status, _, _ = ann.get(e.url + "/cabinet/events?key=" + e.bKey.ID)
			require.Equal(t, http.StatusNotFound, status, "a key not granted")
		})

		t.Run("one event", func(t *testing.T) {
			evs := e.events(e.a, "?resource_id="+p.PaymentID)
			require.Len(t, evs.Items, 1)
			pe := evs.Items[0]
			status, body, _ := ann.get(e.url + "/cabinet/events/" + pe.ID)
			require.Equal(t, http.StatusOK, status, body)
			require.Contains(t, body, `<pre id="payload">{`)
			require.Contains(t, body, "&#34;payment_id&#34;: &#34;"+p.PaymentID+"&#34;", "indented JSON")
			require.Contains(t, body, p.MaskedCard)
			require.NotContains(t, body, "4242424242424242", "no card number in an event")
			require.Contains(t, body, `data-endpoint="`+every.ID+`" data-status="pending"`)
			require.NotContains(t, body, `data-endpoint="`+picky.ID+`"`, "the filter left it out")
			require.Contains(t, body, "next attempt")
			require.NotContains(t, body, "/resend", "a viewer has no resend button")

			// The payload is the bytes as sent (JSON escapes <&>), never markup.
			status, body, _ = ann.get(e.url + "/cabinet/events/" + succeeded[0].ID)
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, `&#34;note&#34;: &#34;\u003c\u0026\u003e&#34;`)
			require.NotContains(t, body, "<&>")
			require.Len(t, attemptRowRE.FindAllString(body, -1), 1)
			require.Contains(t, body, "HTTP 503")

			status, _, _ = ann.get(e.url + "/cabinet/events/" + evB.ID)
			require.Equal(t, http.StatusNotFound, status, "another key's event")
			status, _, _ = ann.get(e.url + "/cabinet/events/no-such-event")
			require.Equal(t, http.StatusNotFound, status)
		})

		t.Run("a user of both keys", func(t *testing.T) {
			dora := e.signedInStaff(t, "dora@example.com", e.aKey.ID, e.bKey.ID)
			status, body, _ := dora.get(e.url + "/cabinet/events?key=" + e.bKey.ID)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, []string{evB.ID}, eventIDs(body))
			status, body, _ = dora.get(e.url + "/cabinet/webhooks?key=" + e.bKey.ID)
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, other.URL)
			require.NotContains(t, body, every.URL)
			status, body, _ = dora.get(e.url + "/cabinet/events/" + evB.ID)
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, `href="/cabinet/webhooks?key=`+e.bKey.ID+`"`, "the navigation keeps the event's key")
		})

		t.Run("a viewer cannot resend", func(t *testing.T) {
			_, _, csrf := ann.get(e.url + "/cabinet/events/" + succeeded[0].ID)
			require.NotEmpty(t, csrf)
			before := e.generations(t, succeeded[0].ID)
			status, body, _ := ann.post(e.url+"/cabinet/events/"+succeeded[0].ID+"/resend", url.Values{"csrf_token": {csrf}})
			require.Equal(t, http.StatusForbidden, status, body)
			require.Equal(t, before, e.generations(t, succeeded[0].ID))
		})

		t.Run("no session", func(t *testing.T) {
			stranger := newStaffBrowser(t)
			for _, path := range []string{"/cabinet/webhooks", "/cabinet/events", "/cabinet/events/" + succeeded[0].ID} {
				status, _, _ := stranger.get(e.url + path)
				require.Equal(t, http.StatusSeeOther, status, path)
			}
			status, _, _ := stranger.post(e.url+"/cabinet/events/"+succeeded[0].ID+"/resend", url.Values{})
			require.Equal(t, http.StatusForbidden, status)
		})
	})
}

// TestCabinetEventResend resends an event from its page to a real
// receiver on both databases (docs/cabinet.md, "Webhook endpoints and
// events"): the receiver gets the event again with the same webhook-id and
// the new attempt appears on the page; a viewer, a forged form and a user
// of another key change nothing; no endpoint to send to is a 422 page.
func TestCabinetEventResend(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		rc := newReceiver(t, ok)
		ep := e.addEndpoint(e.a, rc.URL)
		epB := e.addEndpoint(e.b, rc.URL+"/bee")
		ev := e.recordEvent(e.aKey, "payment.succeeded")
		e.await(time.Second, e.deliveryIs(ev.ID, webhook.Succeeded))
		require.Len(t, rc.requests(ev.ID), 1)
		page := "/cabinet/events/" + ev.ID
		resend := page + "/resend"

		bob := e.signedInAdmin(t, "bob@example.com", e.aKey.ID)
		status, body, csrf := bob.get(e.url + page)
		require.Equal(t, http.StatusOK, status, body)
		require.Len(t, attemptRowRE.FindAllString(body, -1), 1)
		require.Contains(t, body, "HTTP 200")
		require.Contains(t, body, `data-resend="`+ev.ID+`"`)
		require.Contains(t, body, `<option value="`+ep.ID+`">`)
		require.NotContains(t, body, epB.ID, "another key's endpoint is not offered")
		before := e.generations(t, ev.ID)

		t.Run("forged or missing anti-forgery token", func(t *testing.T) {
			for _, form := range []url.Values{{}, {"csrf_token": {csrf + "x"}}, {"csrf_token": {"forged"}}} {
				status, _, _ := bob.post(e.url+resend, form)
				require.Equal(t, http.StatusForbidden, status)
			}
			require.Equal(t, before, e.generations(t, ev.ID))
		})
		t.Run("a viewer", func(t *testing.T) {
			ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
			_, body, csrf := ann.get(e.url + page)
			require.NotContains(t, body, "data-resend")
			status, _, _ := ann.post(e.url+resend, url.Values{"csrf_token": {csrf}})
			require.Equal(t, http.StatusForbidden, status)
			require.Equal(t, before, e.generations(t, ev.ID))
		})
		t.Run("a user of another key", func(t *testing.T) {
			carl := e.signedInAdmin(t, "carl@example.com", e.bKey.ID)
			status, _, csrf := carl.get(e.url + page)
			require.Equal(t, http.StatusNotFound, status)
			_, _, csrf = carl.get(e.url + "/cabinet/events")
			require.NotEmpty(t, csrf)
			status, _, _ = carl.post(e.url+resend, url.Values{"csrf_token": {csrf}})
			require.Equal(t, http.StatusNotFound, status)
			status, body, _ := carl.get(e.url + "/cabinet/events")
			require.Equal(t, http.StatusOK, status)
			require.NotContains(t, body, ev.ID)
			require.Equal(t, before, e.generations(t, ev.ID))
		})
		t.Run("another key's endpoint", func(t *testing.T) {
			status, body, _ := bob.post(e.url+resend, url.Values{"csrf_token": {csrf}, "endpoint_id": {epB.ID}})
			require.Equal(t, http.StatusUnprocessableEntity, status)
			require.Contains(t, body, "not an enabled webhook endpoint of this key")
			require.Equal(t, before, e.generations(t, ev.ID))
		})

		t.Run("an admin", func(t *testing.T) {
			status, _, loc := bob.post(e.url+resend, url.Values{"csrf_token": {csrf}})
			require.Equal(t, http.StatusSeeOther, status)
			require.Equal(t, page+"?done=resent", loc)
			require.Equal(t, before[ep.ID]+1, e.generations(t, ev.ID)[ep.ID])
			e.await(time.Second, rc.has(ev.ID, 2))
			require.Equal(t, ev.ID, rc.requests(ev.ID)[1].header.Get("webhook-id"), "the same event id")
			verify(t, ep.Secret, rc.requests(ev.ID)[1])
			e.await(time.Second, e.deliveryIs(ev.ID, webhook.Succeeded))
			status, body, _ := bob.get(e.url + loc)
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, "Queued for delivery again")
			require.Len(t, attemptRowRE.FindAllString(body, -1), 2, "the new attempt is on the page")
			require.Len(t, e.event(e.a, ev.ID).Deliveries[0].Attempts, 2, "as the API shows it")

			// To one endpoint, chosen.
			status, _, _ = bob.post(e.url+resend, url.Values{"csrf_token": {csrf}, "endpoint_id": {ep.ID}})
			require.Equal(t, http.StatusSeeOther, status)
			e.await(time.Second, rc.has(ev.ID, 3))
		})

		t.Run("no enabled endpoint", func(t *testing.T) {
			require.NoError(t, e.a.JSON(context.Background(), "DELETE", "/api/v1/webhook-endpoints/"+ep.ID, nil, nil))
			now := e.generations(t, ev.ID)
			status, body, _ := bob.post(e.url+resend, url.Values{"csrf_token": {csrf}})
			require.Equal(t, http.StatusUnprocessableEntity, status)
			require.Contains(t, body, "No enabled webhook endpoint of this key takes payment.succeeded")
			require.Equal(t, now, e.generations(t, ev.ID))
			status, body, _ = bob.get(e.url + page)
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, "no enabled webhook endpoint to resend to")
		})
	})
}
