package server

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
)

// The store must satisfy what the webhook domain asks of it.
var (
	_ webhook.EndpointStore = (*store.Tx)(nil)
	_ webhook.ResendTx      = (*store.Tx)(nil)
)

// createWebhookEndpoint is the extension POST /api/v1/webhook-endpoints
// (docs/design/decisions.md section 6): the secret is in this answer only,
// and the stored answer kept for replay is sealed.
func (s *Server) createWebhookEndpoint() http.Handler {
	return write(s, writeSpec{schema: "CreateWebhookEndpoint", sealAnswer: true},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.CreateWebhookEndpoint) (answer, error) {
			e, secret, err := s.webhooks.Create(ctx, tx, c.key.ID, webhook.NewEndpoint{URL: in.URL, EventTypes: in.EventTypes})
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusCreated, openapi.CreatedWebhookEndpoint{WebhookEndpoint: endpointView(e), Secret: secret}}, nil
		})
}

// listWebhookEndpoints is the extension GET /api/v1/webhook-endpoints: the
// calling key's endpoints, never a secret.
func (s *Server) listWebhookEndpoints() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		eps, err := s.webhooks.ListEndpoints(ctx, c.key.ID)
		if err != nil {
			return answer{}, err
		}
		out := openapi.WebhookEndpointList{Items: []openapi.WebhookEndpoint{}}
		for _, e := range eps {
			out.Items = append(out.Items, endpointView(e))
		}
		return answer{http.StatusOK, out}, nil
	})
}

// deleteWebhookEndpoint is the extension DELETE
// /api/v1/webhook-endpoints/{id}; another key's endpoint is 404.
func (s *Server) deleteWebhookEndpoint() http.Handler {
	return s.remove(func(ctx context.Context, c *call) error {
		id, err := pathID(c.r)
		if err != nil {
			return err
		}
		return s.webhooks.RemoveEndpoint(ctx, c.key.ID, id)
	})
}

// endpointView is an endpoint as the API shows it.
func endpointView(e *webhook.Endpoint) openapi.WebhookEndpoint {
	v := openapi.WebhookEndpoint{ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, CreatedAt: openapi.Time(e.CreatedAt),
		DisabledReason: e.DisabledReason}
	if v.EventTypes == nil {
		v.EventTypes = []string{}
	}
	if e.DisabledAt != nil {
		v.DisabledAt = openapi.Time(*e.DisabledAt)
	}
	return v
}
