package data

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
)

// webhookPages is what the webhook endpoints and event log pages read and
// change (pages.WebhooksData; docs/cabinet.md, "Webhook endpoints and
// events").
type webhookPages struct{ *source }

var _ pages.WebhooksData = webhookPages{}

func (c webhookPages) Endpoints(ctx context.Context, keyID string) ([]pages.WebhookEndpoint, error) {
	eps, err := c.store.ListWebhookEndpoints(ctx, keyID)
	if err != nil {
		return nil, err
	}
	out := make([]pages.WebhookEndpoint, 0, len(eps))
	for _, e := range eps {
		h, err := c.store.FindEndpointHealth(ctx, e.ID)
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

func (c webhookPages) Events(ctx context.Context, q pages.EventQuery) ([]pages.EventRow, error) {
	evs, err := c.store.ListEvents(ctx, q.KeyID, webhook.EventFilter{Type: q.Type, ResourceID: q.ResourceID,
		AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	counts, err := c.store.DeliveryCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]pages.EventRow, len(evs))
	for i, e := range evs {
		out[i] = pages.EventRow{LoggedEvent: loggedEvent(e), Deliveries: counts[e.ID]}
	}
	return out, nil
}

func loggedEvent(e *webhook.StoredEvent) pages.LoggedEvent {
	return pages.LoggedEvent{ID: e.ID, KeyID: e.AccessKeyID, Type: e.Type, ResourceType: e.ResourceType,
		ResourceID: e.ResourceID, CreatedAt: e.CreatedAt, Body: e.Body}
}

func (c webhookPages) FindEvent(ctx context.Context, id string) (*pages.LoggedEvent, error) {
	e, err := c.store.FindEvent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := loggedEvent(e)
	return &v, nil
}

// Deliveries are the event's deliveries as getEvent (GET
// /api/v1/events/{id}) shows them: one per endpoint, with the endpoint's
// URL, the next attempt's time while pending, and every attempt of the
// delivery, in the store's order.
func (c webhookPages) Deliveries(ctx context.Context, e *pages.LoggedEvent) ([]pages.Delivery, error) {
	ds, err := c.store.ListDeliveries(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	attempts, err := c.store.ListAttempts(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	out := make([]pages.Delivery, len(ds))
	for i, d := range ds {
		ep, err := c.store.FindWebhookEndpoint(ctx, d.EndpointID)
		if err != nil {
			return nil, err
		}
		out[i] = pages.Delivery{ID: d.ID, EndpointID: d.EndpointID, URL: ep.URL, Status: d.Status, Reason: d.Reason}
		if d.NextAttemptAt != nil && d.Status == webhook.Pending {
			t := *d.NextAttemptAt
			out[i].NextAttemptAt = &t
		}
		for _, a := range attempts {
			if a.DeliveryID == d.ID {
				out[i].Attempts = append(out[i].Attempts, pages.Attempt{EndpointID: d.EndpointID, At: a.At,
					StatusCode: a.StatusCode, Error: a.Error})
			}
		}
	}
	return out, nil
}

// Resend does what resendEvent (POST /api/v1/events/{id}/resend) does, in
// one transaction with the key's clock in the context, as a request signed
// with the key would have (the delivery itself keeps real time,
// docs/design/decisions.md section 14); unlike the API, a resend that
// would reach no endpoint is refused (pages.ErrNoEndpoint).
func (c webhookPages) Resend(ctx context.Context, keyID, eventID, endpointID string) (int, error) {
	key, err := c.store.FindKeyByID(ctx, keyID)
	if err != nil {
		return 0, err
	}
	ctx = keyClock(ctx, key)
	n := 0
	err = c.store.InTx(ctx, func(tx *store.Tx) error {
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
		targets := webhook.ResendTargets(eps, e.Type, endpointID)
		if len(targets) == 0 {
			return pages.ErrNoEndpoint
		}
		n = len(targets)
		return c.webhooks.Resend(ctx, tx, e.ID, targets)
	})
	return n, err
}
