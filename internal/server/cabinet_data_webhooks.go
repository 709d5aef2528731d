package server

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/store"
)

// cabinetWebhooks adapts the store and the webhook service to what the
// cabinet's webhook endpoints and event log pages read and change
// (pages.WebhooksData; docs/cabinet.md, "Webhook endpoints and events").
type cabinetWebhooks struct{ s *Server }

func (c cabinetWebhooks) Endpoints(ctx context.Context, keyID string) ([]pages.WebhookEndpoint, error) {
	eps, err := c.s.store.ListWebhookEndpoints(ctx, keyID)
	if err != nil {
		return nil, err
	}
	out := make([]pages.WebhookEndpoint, 0, len(eps))
	for _, e := range eps {
		h, err := c.s.store.FindEndpointHealth(ctx, e.ID)
		if err != nil {
			return nil, err
		}
		ep := pages.WebhookEndpoint{ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, CreatedAt: e.CreatedAt,
			DisabledAt: e.DisabledAt, DisabledReason: e.DisabledReason, Pending: h.Pending, Failed: h.Failed}
		if a := h.LastPending; a != nil {
			ep.LastPending = &pages.Attempt{EndpointID: e.ID, At: a.At, StatusCode: a.StatusCode, Error: a.Error}
		}
		out = append(out, ep)
	}
	return out, nil
}

func (c cabinetWebhooks) Events(ctx context.Context, q pages.EventQuery) ([]pages.EventRow, error) {
	evs, err := c.s.store.ListEvents(ctx, q.KeyID, store.EventFilter{Type: q.Type, ResourceID: q.ResourceID,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	counts, err := c.s.store.DeliveryCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]pages.EventRow, len(evs))
	for i, e := range evs {
		out[i] = pages.EventRow{LoggedEvent: loggedEvent(e), Deliveries: counts[e.ID]}
	}
	return out, nil
}

func loggedEvent(e *store.StoredEvent) pages.LoggedEvent {
	return pages.LoggedEvent{ID: e.ID, KeyID: e.AccessKeyID, Type: e.Type, ResourceType: e.ResourceType,
		ResourceID: e.ResourceID, CreatedAt: e.CreatedAt, Body: e.Body}
}

func (c cabinetWebhooks) FindEvent(ctx context.Context, id string) (*pages.LoggedEvent, error) {
	e, err := c.s.store.FindEvent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := loggedEvent(e)
	return &v, nil
}

// Deliveries are the event's deliveries exactly as getEvent (GET
// /api/v1/events/{id}) shows them.
func (c cabinetWebhooks) Deliveries(ctx context.Context, e *pages.LoggedEvent) ([]pages.Delivery, error) {
	d, err := eventDetails(ctx, c.s.store, &store.StoredEvent{ID: e.ID, AccessKeyID: e.KeyID, Type: e.Type,
		ResourceType: e.ResourceType, ResourceID: e.ResourceID, Body: e.Body, CreatedAt: e.CreatedAt})
	if err != nil {
		return nil, err
	}
	out := make([]pages.Delivery, len(d.Deliveries))
	for i, w := range d.Deliveries {
		out[i] = pages.Delivery{ID: w.ID, EndpointID: w.EndpointID, URL: w.URL, Status: w.Status, Reason: w.FailureReason}
		if !w.NextAttemptAt.IsZero() {
			t := w.NextAttemptAt.Std()
			out[i].NextAttemptAt = &t
		}
		for _, a := range w.Attempts {
			out[i].Attempts = append(out[i].Attempts, pages.Attempt{EndpointID: w.EndpointID, At: a.AttemptedAt.Std(),
				StatusCode: a.StatusCode, Error: a.Error})
		}
	}
	return out, nil
}

// Resend does what resendEvent (POST /api/v1/events/{id}/resend) does, in
// one transaction with the key's clock in the context, as a request signed
// with the key would have (the delivery itself keeps real time,
// docs/design/decisions.md section 14); unlike the API, a resend that
// would reach no endpoint is refused (pages.ErrNoEndpoint).
func (c cabinetWebhooks) Resend(ctx context.Context, keyID, eventID, endpointID string) (int, error) {
	key, err := c.s.store.FindKeyByID(ctx, keyID)
	if err != nil {
		return 0, err
	}
	ctx = keyClock(ctx, key)
	var only *string
	if endpointID != "" {
		only = &endpointID
	}
	n := 0
	err = c.s.store.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.FindEventForKey(ctx, key.ID, eventID)
		if errors.Is(err, store.ErrNotFound) {
			return pages.ErrNoEvent
		}
		if err != nil {
			return err
		}
		eps, err := tx.ListWebhookEndpoints(ctx, key.ID)
		if err != nil {
			return err
		}
		targets := resendTargets(eps, e.Type, only)
		if len(targets) == 0 {
			return pages.ErrNoEndpoint
		}
		n = len(targets)
		return c.s.webhooks.Resend(ctx, tx, e.ID, targets)
	})
	return n, err
}
