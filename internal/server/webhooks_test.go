package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
	"github.com/paygate/paygate/internal/webhook/outbound"
)

// addWebhookWorkers registers the webhook jobs on the test clock (no
// jitter, so retry times are exact) and returns the service the API uses.
// h, when not nil, makes the first attempts too, as serve does.
func addWebhookWorkers(w *river.Workers, h *handoff.Workers, s *store.Store, sealer webhook.Sealer, clk *clock, newID func() string, log *slog.Logger, o options) *webhook.Service {
	sandbox := o.environment != merchant.Production
	d := &webhook.Dispatcher{Store: s, Sealer: sealer, Now: clk.Now, NewID: newID, Log: log,
		Sender: outbound.New(outbound.Config{Timeout: o.webhookTimeout, AllowPrivate: sandbox}),
		Jitter: func(d time.Duration) time.Duration { return d },
		Transact: func(ctx context.Context, fn func(webhook.DispatchTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		}}
	webhook.AddWorkers(w, d)
	if h != nil {
		webhook.AddHandoff(h, d)
	}
	return &webhook.Service{Sealer: sealer, Now: clk.Now, NewID: newID, Production: !sandbox}
}

// receiver is a merchant's endpoint that records every request and answers
// with the status answer gives for the nth request of an event (from 1).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(eventID string, n int) int
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answer func(eventID string, n int) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), body})
		n := len(rc.of(r.Header.Get("webhook-id")))
		rc.mu.Unlock()
		w.WriteHeader(rc.answer(r.Header.Get("webhook-id"), n))
		_, _ = io.WriteString(w, "seen "+strconv.Itoa(n))
	}))
	t.Cleanup(rc.Close)
	return rc
}

// of lists the requests of one event; the caller holds mu.
func (rc *receiver) of(eventID string) []received {
	var out []received
	for _, g := range rc.got {
		if g.header.Get("webhook-id") == eventID {
			out = append(out, g)
		}
	}
	return out
}

func (rc *receiver) requests(eventID string) []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.of(eventID)
}

// has is the condition that the receiver got exactly n requests of the event.
func (rc *receiver) has(eventID string, n int) func() error {
	return func() error {
		if got := len(rc.requests(eventID)); got != n {
			return fmt.Errorf("the receiver got %d requests of event %s, not %d", got, eventID, n)
		}
		return nil
	}
}

func ok(string, int) int { return http.StatusOK }

// addEndpoint registers an endpoint through the API.
func (e *env) addEndpoint(c *client.Client, url string, types ...string) openapi.CreatedWebhookEndpoint {
	e.t.Helper()
	var ep openapi.CreatedWebhookEndpoint
	require.NoError(e.t, c.JSON(context.Background(), "POST", "/api/v1/webhook-endpoints",
		openapi.CreateWebhookEndpoint{URL: url, EventTypes: types}, &ep))
	return ep
}

// recordEvent records a payment event of key as the payment domain does.
func (e *env) recordEvent(key merchant.Key, typ string) webhook.Event {
	e.t.Helper()
	id := uuid.NewString()
	ev := webhook.Event{ID: uuid.Must(uuid.NewV7()).String(), AccessKeyID: key.ID, Type: typ, ResourceType: "payment",
		ResourceID: id, Object: []byte(`{"payment_id":"` + id + `","note":"<&>"}`), CreatedAt: e.clock.Now()}
	require.NoError(e.t, e.store.InTx(context.Background(), func(tx *store.Tx) error { return webhook.Record(context.Background(), tx, ev) }))
	return ev
}

func (e *env) event(c *client.Client, id string) openapi.EventDetails {
	e.t.Helper()
	var d openapi.EventDetails
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/events/"+id, nil, &d))
	return d
}

// deliveryStatus is the status of the first delivery of a's event, or "".
func (e *env) deliveryStatus(eventID string) string {
	if ds := e.event(e.a, eventID).Deliveries; len(ds) > 0 {
		return ds[0].Status
	}
	return ""
}

// deliveryIs is the condition that the first delivery of a's event is in
// status.
func (e *env) deliveryIs(eventID, status string) func() error {
	return func() error {
		if got := e.deliveryStatus(eventID); got != status {
			return fmt.Errorf("the delivery of event %s is %q, not %s", eventID, got, status)
		}
		return nil
	}
}

func verify(t *testing.T, secret string, r received) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	// The test clock runs ahead of real time: the timestamp is compared
	// with the attempt's time instead of the library's 5 minutes.
	require.NoError(t, wh.VerifyIgnoringTimestamp(r.body, r.header))
}

func TestWebhookEndpointsAPI(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		ep := e.addEndpoint(e.a, "http://127.0.0.1:3000/hooks", "payment.succeeded")
		require.True(t, webhook.ValidSecret(ep.Secret))
		require.Equal(t, []string{"payment.succeeded"}, ep.EventTypes)
		all := e.addEndpoint(e.a, "https://shop.example/all")
		require.Equal(t, []string{}, all.EventTypes)

		resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/webhook-endpoints"})
		require.NoError(t, err)
		require.NotContains(t, string(resp.Body), "secret", "the secret is shown once")
		var list openapi.WebhookEndpointList
		require.NoError(t, json.Unmarshal(resp.Body, &list))
		require.Equal(t, []openapi.WebhookEndpoint{ep.WebhookEndpoint, all.WebhookEndpoint}, list.Items)

		t.Run("the answer kept for replay is sealed", func(t *testing.T) {
			body := []byte(`{"url":"https://shop.example/replay"}`)
			req := client.Request{Method: "POST", Target: "/api/v1/webhook-endpoints", Body: body, IdempotencyKey: "replay-0001"}
			first, err := e.a.Do(ctx, req)
			require.NoError(t, err)
			again, err := e.a.Do(ctx, req)
			require.NoError(t, err)
			require.True(t, again.Replayed())
			require.Equal(t, first.Body, again.Body)
			var created openapi.CreatedWebhookEndpoint
			require.NoError(t, json.Unmarshal(first.Body, &created))
			var n int
			require.NoError(t, e.store.DB().QueryRow(`SELECT COUNT(*) FROM idempotency_keys WHERE idempotency_key = 'replay-0001'
				AND response_body LIKE '%whsec_%'`).Scan(&n))
			require.Zero(t, n, "no secret in the clear")
		})
		t.Run("bad input", func(t *testing.T) {
			for body, field := range map[string]string{
				`{"url":"ftp://x.example/"}`:                              "url",
				`{"url":"https://u:p@x.example/"}`:                        "url",
				`{"url":"https://x.example/","event_types":["charge.x"]}`: "event_types.0",
				`{}`: "url",
			} {
				resp := e.post(e.a, "/api/v1/webhook-endpoints", body)
				require.Equal(t, http.StatusBadRequest, resp.Status, body)
				require.Equal(t, field, *resp.Err().(*client.Error).Field, body)
			}
		})
		t.Run("removal", func(t *testing.T) {
			err := e.b.JSON(ctx, "DELETE", "/api/v1/webhook-endpoints/"+ep.ID, nil, nil)
			require.True(t, client.IsCode(err, "not_found"), "another key's endpoint: %v", err)
			resp, err := e.a.Do(ctx, client.Request{Method: "DELETE", Target: "/api/v1/webhook-endpoints/" + ep.ID})
			require.NoError(t, err)
			require.Equal(t, http.StatusNoContent, resp.Status)
			require.Empty(t, resp.Body)
			err = e.a.JSON(ctx, "DELETE", "/api/v1/webhook-endpoints/"+ep.ID, nil, nil)
			require.True(t, client.IsCode(err, "not_found"), "removed once: %v", err)
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/webhook-endpoints", nil, &list))
			require.Len(t, list.Items, 2)
		})
	})
}

func TestWebhookDestinationsInProduction(t *testing.T) {
	e := newEnv(t, storetest.Databases(t)[0], options{environment: merchant.Production})
	for _, u := range []string{"http://93.184.216.34/hooks", "https://127.0.0.1/hooks", "https://localhost:8443/hooks",
		"https://10.1.2.3/hooks", "https://[::1]/hooks", "https://169.254.169.254/latest", "https://[fd00::5]/hooks"} {
		resp := e.post(e.a, "/api/v1/webhook-endpoints", `{"url":"`+u+`"}`)
		require.Equal(t, http.StatusBadRequest, resp.Status, u)
		require.True(t, client.IsCode(resp.Err(), "validation_error"), u)
	}
	e.addEndpoint(e.a, "https://93.184.216.34/hooks")
}

// TestKeysAreIsolated: a key never sees another key's events or
// endpoints, and its endpoints never receive another key's events.
func TestKeysAreIsolated(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		rcA, rcB := newReceiver(t, ok), newReceiver(t, ok)
		epA, epB := e.addEndpoint(e.a, rcA.URL), e.addEndpoint(e.b, rcB.URL)
		evA, evB := e.recordEvent(e.aKey, "payment.succeeded"), e.recordEvent(e.bKey, "payment.failed")
		e.await(time.Second, func() error { return errors.Join(rcA.has(evA.ID, 1)(), rcB.has(evB.ID, 1)()) })
		require.Empty(t, rcA.requests(evB.ID))
		require.Empty(t, rcB.requests(evA.ID))

		var page openapi.EventList
		require.NoError(t, e.b.JSON(ctx, "GET", "/api/v1/events", nil, &page))
		require.Len(t, page.Items, 1)
		require.Equal(t, evB.ID, page.Items[0].ID)
		for _, req := range []client.Request{
			{Method: "GET", Target: "/api/v1/events/" + evA.ID},
			{Method: "POST", Target: "/api/v1/events/" + evA.ID + "/resend"},
			{Method: "DELETE", Target: "/api/v1/webhook-endpoints/" + epA.ID},
		} {
			resp, err := e.b.Do(ctx, req)
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, resp.Status, req.Target)
		}
		resp := e.post(e.b, "/api/v1/events/"+evB.ID+"/resend", `{"endpoint_id":"`+epA.ID+`"}`)
		require.Equal(t, http.StatusBadRequest, resp.Status, "another key's endpoint")
		var list openapi.WebhookEndpointList
		require.NoError(t, e.b.JSON(ctx, "GET", "/api/v1/webhook-endpoints", nil, &list))
		require.Len(t, list.Items, 1)
		require.Equal(t, epB.ID, list.Items[0].ID)
	})
}

// TestDeliveryRecovers: a receiver that fails for a while gets every
// event, each signature verifies with the Standard Webhooks library, and
// the webhook-id stays the event's id across retries.
func TestDeliveryRecovers(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		rc := newReceiver(t, func(_ string, n int) int {
			if n <= 2 {
				return http.StatusInternalServerError
			}
			return http.StatusAccepted
		})
		ep := e.addEndpoint(e.a, rc.URL, "payment.succeeded", "payment.declined")
		evs := []webhook.Event{e.recordEvent(e.aKey, "payment.succeeded"), e.recordEvent(e.aKey, "payment.declined"),
			e.recordEvent(e.aKey, "payment.succeeded")}
		filtered := e.recordEvent(e.aKey, "payment.processing")
		e.await(20*time.Second, func() error {
			for _, ev := range evs {
				if n := len(rc.requests(ev.ID)); n < 3 {
					return fmt.Errorf("the receiver got %d requests of event %s, not yet 3", n, ev.ID)
				}
			}
			return nil
		})
		for _, ev := range evs {
			body, err := ev.Body()
			require.NoError(t, err)
			reqs := rc.requests(ev.ID)
			require.Len(t, reqs, 3, "two failures, then success, then nothing")
			d := e.event(e.a, ev.ID)
			require.Len(t, d.Deliveries, 1)
			require.Equal(t, webhook.Succeeded, d.Deliveries[0].Status)
			require.Equal(t, ep.ID, d.Deliveries[0].EndpointID)
			var codes []int
			for i, a := range d.Deliveries[0].Attempts {
				codes = append(codes, a.StatusCode)
				require.Equal(t, "seen "+strconv.Itoa(i+1), a.Response)
				require.Equal(t, strconv.FormatInt(a.AttemptedAt.Std().Unix(), 10), reqs[i].header.Get("webhook-timestamp"))
			}
			require.Equal(t, []int{500, 500, 202}, codes)
			gaps := []time.Duration{d.Deliveries[0].Attempts[1].AttemptedAt.Std().Sub(d.Deliveries[0].Attempts[0].AttemptedAt.Std()),
				d.Deliveries[0].Attempts[2].AttemptedAt.Std().Sub(d.Deliveries[0].Attempts[1].AttemptedAt.Std())}
			require.GreaterOrEqual(t, gaps[0], 5*time.Second, "the schedule: 5 s, then 5 min")
			require.GreaterOrEqual(t, gaps[1], 5*time.Minute)
			for _, r := range reqs {
				require.Equal(t, ev.ID, r.header.Get("webhook-id"), "stable across retries")
				require.Equal(t, body, r.body, "exactly the stored body")
				require.Equal(t, "application/json", r.header.Get("Content-Type"))
				require.Equal(t, "Paygate-Webhooks/1", r.header.Get("User-Agent"))
				verify(t, ep.Secret, r)
			}
		}
		require.Empty(t, rc.requests(filtered.ID), "the endpoint's filter leaves the type out")
		require.Empty(t, e.event(e.a, filtered.ID).Deliveries)

		t.Run("resend", func(t *testing.T) {
			var d openapi.EventDetails
			require.NoError(t, e.a.JSON(context.Background(), "POST", "/api/v1/events/"+evs[0].ID+"/resend", nil, &d))
			require.Equal(t, webhook.Pending, d.Deliveries[0].Status)
			e.await(time.Second, rc.has(evs[0].ID, 4))
			require.Equal(t, evs[0].ID, rc.requests(evs[0].ID)[3].header.Get("webhook-id"))
			e.await(time.Second, e.deliveryIs(evs[0].ID, webhook.Succeeded))
		})
	})
}

// TestLostDeliveryJobIsSwept: a delivery whose job vanished (River discards
// a job after 25 errors) is queued again by the sweep and delivered.
func TestLostDeliveryJobIsSwept(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		rc := newReceiver(t, ok)
		e.addEndpoint(e.a, rc.URL)
		ev := webhook.Event{ID: uuid.Must(uuid.NewV7()).String(), AccessKeyID: e.aKey.ID, Type: "payment.succeeded",
			ResourceType: "payment", ResourceID: "p", Object: []byte(`{"payment_id":"p"}`), CreatedAt: e.clock.Now()}
		// Recorded by a process that runs no jobs (the env's own would make
		// the first attempt itself as the transaction commits).
		require.NoError(t, e.pool().InTx(ctx, func(tx *store.Tx) error {
			if err := webhook.Record(ctx, tx, ev); err != nil {
				return err
			}
			_, err := tx.SQL().ExecContext(ctx, `DELETE FROM river_job WHERE kind = 'webhook.deliver'`)
			return err
		}))
		require.Equal(t, webhook.Pending, e.deliveryStatus(ev.ID))
		e.clock.Add(webhook.SweepGrace + time.Minute)
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.Enqueue(ctx, webhook.SweepArgs{}, nil) }))
		e.await(time.Second, e.deliveryIs(ev.ID, webhook.Succeeded))
		require.Len(t, rc.requests(ev.ID), 1)
	})
}

func TestDeliveryFailures(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true, webhookTimeout: 200 * time.Millisecond})
		ctx := context.Background()

		t.Run("410 disables the endpoint", func(t *testing.T) {
			rc := newReceiver(t, func(string, int) int { return http.StatusGone })
			ep := e.addEndpoint(e.a, rc.URL)
			ev := e.recordEvent(e.aKey, "payment.succeeded")
			e.await(time.Second, e.deliveryIs(ev.ID, webhook.Failed))
			d := e.event(e.a, ev.ID).Deliveries[0]
			require.Equal(t, "endpoint_disabled", d.FailureReason)
			require.Len(t, d.Attempts, 1)
			var list openapi.WebhookEndpointList
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/webhook-endpoints", nil, &list))
			require.False(t, list.Items[0].DisabledAt.IsZero())
			require.Equal(t, ep.ID, list.Items[0].ID)
			later := e.recordEvent(e.aKey, "payment.failed")
			require.Empty(t, e.event(e.a, later.ID).Deliveries, "a disabled endpoint gets nothing (fanned out as recorded)")
			require.NoError(t, e.a.JSON(ctx, "DELETE", "/api/v1/webhook-endpoints/"+ep.ID, nil, nil))
		})
		t.Run("a slow receiver counts as failed", func(t *testing.T) {
			release := make(chan struct{})
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer slow.Close()
			defer close(release)
			e.addEndpoint(e.a, slow.URL)
			ev := e.recordEvent(e.aKey, "payment.succeeded")
			e.await(time.Second, func() error {
				if ds := e.event(e.a, ev.ID).Deliveries; len(ds) != 1 || len(ds[0].Attempts) == 0 {
					return fmt.Errorf("event %s: no attempt of its one delivery yet (%d deliveries)", ev.ID, len(ds))
				}
				return nil
			})
			d := e.event(e.a, ev.ID).Deliveries[0]
			require.Equal(t, webhook.Pending, d.Status, "retried later")
			require.Equal(t, webhook.ErrTimeout, d.Attempts[0].Error)
			require.Zero(t, d.Attempts[0].StatusCode)
			require.False(t, d.NextAttemptAt.IsZero())
		})
	})
}

// TestSecretRotation: during the overlap both secrets sign; after it, the
// new one only.
func TestSecretRotation(t *testing.T) {
	e := newEnv(t, storetest.Databases(t)[0], options{work: true})
	ctx := context.Background()
	rc := newReceiver(t, ok)
	ep := e.addEndpoint(e.a, rc.URL)
	stored, err := e.store.FindWebhookEndpoint(ctx, ep.ID)
	require.NoError(t, err)
	svc := &webhook.Service{Sealer: e.merchants.Sealer, Now: e.clock.Now, NewID: uuid.NewString}
	newSecret, err := svc.RotateSecret(ctx, e.store, stored, time.Hour)
	require.NoError(t, err)

	during := e.recordEvent(e.aKey, "payment.succeeded")
	e.await(time.Second, rc.has(during.ID, 1))
	r := rc.requests(during.ID)[0]
	require.Len(t, splitSignatures(r), 2)
	verify(t, ep.Secret, r)
	verify(t, newSecret, r)

	e.clock.Add(time.Hour)
	after := e.recordEvent(e.aKey, "payment.succeeded")
	e.await(time.Second, rc.has(after.ID, 1))
	r = rc.requests(after.ID)[0]
	require.Len(t, splitSignatures(r), 1)
	verify(t, newSecret, r)
	wh, _ := standardwebhooks.NewWebhook(ep.Secret)
	require.Error(t, wh.VerifyIgnoringTimestamp(r.body, r.header), "the old secret no longer signs")
}

func splitSignatures(r received) []string { return strings.Fields(r.header.Get("webhook-signature")) }
