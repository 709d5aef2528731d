package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
)

// listEvents is the extension GET /api/v1/events: newest first a page at a
// time, or with since, oldest first after a point (paygate listen).
func (s *Server) listEvents() http.Handler {
	return s.readQuery(eventParams, func(ctx context.Context, c *call) (answer, error) {
		f, err := s.eventFilter(ctx, c.key.ID, c.query)
		if err != nil {
			return answer{}, err
		}
		limit := f.Limit
		f.Limit++ // one more tells whether another page exists
		evs, err := s.webhooks.ListEvents(ctx, c.key.ID, f)
		if err != nil {
			return answer{}, err
		}
		out := openapi.EventList{Items: []openapi.Event{}}
		if len(evs) > limit {
			evs = evs[:limit]
			if f.SinceCreated == nil {
				last := evs[limit-1]
				cur := encodeCursor(last.CreatedAt, last.ID)
				out.NextCursor = &cur
			}
		}
		for _, e := range evs {
			v, err := eventView(e)
			if err != nil {
				return answer{}, err
			}
			out.Items = append(out.Items, v)
		}
		return answer{http.StatusOK, out}, nil
	})
}

var eventParams = []string{"type", "resource_id", "since", "limit", "cursor"}

// eventFilter reads the query of GET /events, which queryParams has checked.
func (s *Server) eventFilter(ctx context.Context, keyID string, q url.Values) (webhook.EventFilter, error) {
	f := webhook.EventFilter{Limit: 20}
	bad := func(name, msg string) error { return fault.OnField(fault.ValidationError, name, msg) }
	if v := q.Get("type"); v != "" {
		if !webhook.ValidType(v) {
			return f, bad("type", "must be an event type such as payment.succeeded")
		}
		f.Type = v
	}
	if v := q.Get("resource_id"); utf8.RuneCountInString(v) > 64 {
		return f, bad("resource_id", "must be at most 64 characters")
	}
	f.ResourceID = q.Get("resource_id")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return f, bad("limit", "must be an integer from 1 to 100")
		}
		f.Limit = n
	}
	since, cursor := q.Get("since"), q.Get("cursor")
	if since != "" && cursor != "" {
		return f, bad("since", "cannot be combined with cursor")
	}
	if cursor != "" {
		t, id, ok := decodeCursor(cursor)
		if !ok {
			return f, bad("cursor", "is not a cursor this API gave")
		}
		f.AfterCreated, f.AfterID = &t, id
	}
	if since == "" {
		return f, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, since); err == nil {
		t = t.UTC()
		f.SinceCreated = &t
		return f, nil
	}
	if uuid.Validate(since) != nil {
		return f, bad("since", "must be an RFC 3339 date-time or the id of an event")
	}
	e, err := s.webhooks.FindEvent(ctx, keyID, since)
	if fault.CodeOf(err) == fault.NotFound { // an event the key does not have
		return f, bad("since", "no event of this key has this id")
	}
	if err != nil {
		return f, err
	}
	f.SinceCreated, f.SinceID = &e.CreatedAt, e.ID
	return f, nil
}

// getEvent is the extension GET /api/v1/events/{id}: the event and its
// deliveries with every attempt; another key's event is 404.
func (s *Server) getEvent() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		e, err := byID(ctx, c, s.webhooks.FindEvent)
		if err != nil {
			return answer{}, err
		}
		v, err := eventView(e)
		if err != nil {
			return answer{}, err
		}
		ds, err := s.webhooks.Deliveries(ctx, e.ID)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, eventDetails(v, ds)}, nil
	})
}

// resendEvent is the extension POST /api/v1/events/{id}/resend: a new
// round of delivery now, to every endpoint that takes the event or to one.
func (s *Server) resendEvent() http.Handler {
	return write(s, writeSpec{schema: "ResendEvent", optional: true},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.ResendEvent) (answer, error) {
			id, err := pathID(c.r)
			if err != nil {
				return answer{}, err
			}
			e, err := s.webhooks.ResendEvent(ctx, tx, c.key.ID, id, in.EndpointID)
			if err != nil {
				return answer{}, err
			}
			v, err := eventView(e)
			if err != nil {
				return answer{}, err
			}
			ds, err := s.webhooks.DeliveriesIn(ctx, tx, e.ID)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusOK, eventDetails(v, ds)}, nil
		})
}

// eventView is the event as sent: its stored body, decoded.
func eventView(e *webhook.StoredEvent) (openapi.Event, error) {
	var v openapi.Event
	if err := json.Unmarshal(e.Body, &v); err != nil {
		return v, fmt.Errorf("event %s: stored body: %w", e.ID, err)
	}
	return v, nil
}

// eventDetails is an event with its deliveries and their attempts.
func eventDetails(v openapi.Event, ds []webhook.DeliveryLog) openapi.EventDetails {
	out := openapi.EventDetails{Event: v, Deliveries: []openapi.WebhookDelivery{}}
	for _, l := range ds {
		d := l.Delivery
		w := openapi.WebhookDelivery{ID: d.ID, EndpointID: d.EndpointID, URL: l.Endpoint.URL, Status: d.Status,
			FailureReason: d.Reason, CreatedAt: openapi.Time(d.CreatedAt), Attempts: []openapi.WebhookAttempt{}}
		if d.NextAttemptAt != nil && d.Status == webhook.Pending {
			w.NextAttemptAt = openapi.Time(*d.NextAttemptAt)
		}
		for _, a := range l.Attempts {
			w.Attempts = append(w.Attempts, openapi.WebhookAttempt{AttemptedAt: openapi.Time(a.At), StatusCode: a.StatusCode,
				LatencyMS: a.Latency.Milliseconds(), Response: a.Response, Error: a.Error})
		}
		out.Deliveries = append(out.Deliveries, w)
	}
	return out
}
