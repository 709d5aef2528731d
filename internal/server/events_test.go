package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

func (e *env) events(c *client.Client, query string) openapi.EventList {
	e.t.Helper()
	var page openapi.EventList
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/events"+query, nil, &page))
	return page
}

func ids(page openapi.EventList) []string {
	var out []string
	for _, it := range page.Items {
		out = append(out, it.ID)
	}
	return out
}

func TestEventsAPI(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		var evs []webhook.Event
		for _, typ := range []string{"payment.processing", "payment.succeeded", "payment.processing", "payment.declined", "payment.failed"} {
			evs = append(evs, e.recordEvent(e.aKey, typ))
			e.clock.Add(time.Second)
		}
		e.recordEvent(e.bKey, "payment.succeeded")

		t.Run("pages, newest first", func(t *testing.T) {
			var got []string
			query := "?limit=2"
			for range 5 {
				page := e.events(e.a, query)
				got = append(got, ids(page)...)
				if page.NextCursor == nil {
					break
				}
				query = "?limit=2&cursor=" + *page.NextCursor
			}
			require.Equal(t, []string{evs[4].ID, evs[3].ID, evs[2].ID, evs[1].ID, evs[0].ID}, got)
		})
		t.Run("filters", func(t *testing.T) {
			require.Equal(t, []string{evs[2].ID, evs[0].ID}, ids(e.events(e.a, "?type=payment.processing")))
			require.Equal(t, []string{evs[3].ID}, ids(e.events(e.a, "?resource_id="+evs[3].ResourceID)))
			require.Empty(t, ids(e.events(e.b, "?resource_id="+evs[3].ResourceID)))
		})
		t.Run("since, oldest first", func(t *testing.T) {
			require.Equal(t, []string{evs[2].ID, evs[3].ID, evs[4].ID}, ids(e.events(e.a, "?since="+evs[1].ID)))
			page := e.events(e.a, "?limit=2&since="+url.QueryEscape(evs[1].CreatedAt.Format(time.RFC3339Nano)))
			require.Equal(t, []string{evs[1].ID, evs[2].ID}, ids(page), "a time includes events at that time")
			require.Nil(t, page.NextCursor)
			require.Empty(t, ids(e.events(e.a, "?since="+evs[4].ID)))
		})
		t.Run("bad queries", func(t *testing.T) {
			for query, code := range map[string]string{
				"?since=yesterday": "validation_error", "?since=" + evs[0].ID + "&cursor=abc": "validation_error",
				"?limit=0": "validation_error", "?cursor=zzz": "validation_error", "?type=charge.x": "validation_error",
				"?status=succeeded": "unknown_field", "?since=" + evs[0].ID + "&since=" + evs[1].ID: "validation_error",
			} {
				resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/events" + query})
				require.NoError(t, err)
				require.Equal(t, http.StatusBadRequest, resp.Status, query)
				require.True(t, client.IsCode(resp.Err(), code), "%s: %s", query, resp.Body)
			}
			bEvent := e.events(e.b, "").Items[0]
			resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/events?since=" + bEvent.ID})
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, resp.Status, "another key's event is no point of reference")
		})
		t.Run("items are the bodies sent, byte for byte", func(t *testing.T) {
			resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/events?limit=1"})
			require.NoError(t, err)
			var page struct {
				Items []json.RawMessage `json:"items"`
			}
			require.NoError(t, json.Unmarshal(resp.Body, &page))
			body, err := evs[4].Body()
			require.NoError(t, err)
			require.Equal(t, string(body), string(page.Items[0]))
			d := e.event(e.a, evs[4].ID)
			require.Equal(t, evs[4].ID, d.ID)
			require.Empty(t, d.Deliveries)
		})
	})
}

// TestPaymentEventsDelivered: a sandbox payment's status changes reach the
// merchant's endpoint, each carrying the payment as GET shows it.
func TestPaymentEventsDelivered(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		rc := newReceiver(t, ok)
		ep := e.addEndpoint(e.a, rc.URL, "payment.succeeded")
		p := e.direct(e.a, cardBody("4242424242424242", ""))
		require.Equal(t, "succeeded", e.settle(e.a, p.PaymentID).Status)
		page := e.events(e.a, "?type=payment.succeeded&resource_id="+p.PaymentID)
		require.Len(t, page.Items, 1)
		ev := page.Items[0]
		e.await(time.Second, rc.has(ev.ID, 1))
		r := rc.requests(ev.ID)[0]
		verify(t, ep.Secret, r)
		var sent openapi.Event
		require.NoError(t, json.Unmarshal(r.body, &sent))
		var obj openapi.Payment
		require.NoError(t, json.Unmarshal(sent.Data.Object, &obj))
		require.Equal(t, p.PaymentID, obj.PaymentID)
		require.Equal(t, "succeeded", obj.Status)
		require.NotContains(t, string(r.body), "4242424242424242", "no card number in an event")
		// The receiver has the request before the worker records its
		// answer: the delivery is succeeded once that commits.
		e.await(time.Second, e.deliveryIs(ev.ID, webhook.Succeeded))
		// This process ran the operation and the first attempt as their
		// transactions committed (internal/handoff): their River jobs,
		// safety nets, went with the outcome and the attempt's record.
		var left int
		require.NoError(t, e.store.DB().QueryRow(`SELECT count(*) FROM river_job
			WHERE kind IN ('operation.run', 'webhook.deliver')`).Scan(&left))
		require.Zero(t, left)
	})
}
