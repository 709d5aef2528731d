package webhook

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/fault"
)

// StoredEvent is an event as the event log keeps it (docs/webhooks.md,
// "The event log"): its body exactly as sent.
type StoredEvent struct {
	ID, AccessKeyID, Type, ResourceType, ResourceID string
	Body                                            []byte
	CreatedAt                                       time.Time
}

// EventFilter selects a page of a key's events, newest first.
type EventFilter struct {
	Type, ResourceID string
	AfterCreated     *time.Time
	AfterID          string
	// Since lists events after this one in the other direction, oldest
	// first (for `paygate listen`): every event created after it.
	SinceCreated *time.Time
	SinceID      string
	Limit        int
}

// DeliveryReader is what an event's deliveries are read through: the
// store, or the request's transaction.
type DeliveryReader interface {
	ListDeliveries(ctx context.Context, eventID string) ([]*Delivery, error)
	ListAttempts(ctx context.Context, eventID string) ([]*Attempt, error)
	FindWebhookEndpoint(ctx context.Context, id string) (*Endpoint, error)
}

// DeliveryLog is one delivery of an event as the event's log shows it:
// the delivery, the endpoint it goes to and its attempts, in the order
// the store lists them.
type DeliveryLog struct {
	Delivery *Delivery
	Endpoint *Endpoint
	Attempts []*Attempt
}

// FindEvent is the key's event id: another key's, or none, is 404.
func (s *Service) FindEvent(ctx context.Context, keyID, id string) (*StoredEvent, error) {
	e, err := s.Store.FindEventForKey(ctx, keyID, id)
	return e, fault.Missing(err, s.ErrNotFound, "no event with this id")
}

// ListEvents are up to f.Limit of the key's events matching f.
func (s *Service) ListEvents(ctx context.Context, keyID string, f EventFilter) ([]*StoredEvent, error) {
	return s.Store.ListEvents(ctx, keyID, f)
}

// Deliveries are an event's deliveries, each with its endpoint and its
// attempts.
func (s *Service) Deliveries(ctx context.Context, eventID string) ([]DeliveryLog, error) {
	return deliveries(ctx, s.Store, eventID)
}

// DeliveriesIn is Deliveries read in the request's transaction: after a
// resend, with the round it queued.
func (s *Service) DeliveriesIn(ctx context.Context, tx DeliveryReader, eventID string) ([]DeliveryLog, error) {
	return deliveries(ctx, tx, eventID)
}

// deliveries reads the deliveries, then every attempt of the event, then
// each delivery's endpoint.
func deliveries(ctx context.Context, r DeliveryReader, eventID string) ([]DeliveryLog, error) {
	ds, err := r.ListDeliveries(ctx, eventID)
	if err != nil {
		return nil, err
	}
	attempts, err := r.ListAttempts(ctx, eventID)
	if err != nil {
		return nil, err
	}
	out := make([]DeliveryLog, 0, len(ds))
	for _, d := range ds {
		ep, err := r.FindWebhookEndpoint(ctx, d.EndpointID)
		if err != nil {
			return nil, err
		}
		l := DeliveryLog{Delivery: d, Endpoint: ep}
		for _, a := range attempts {
			if a.DeliveryID == d.ID {
				l.Attempts = append(l.Attempts, a)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// ResendEventTx is what resending an event reads and writes, in the
// request's transaction.
type ResendEventTx interface {
	FindEventForKey(ctx context.Context, keyID, id string) (*StoredEvent, error)
	ListWebhookEndpoints(ctx context.Context, keyID string) ([]*Endpoint, error)
	ResendTx
}

// ResendEvent queues a new round of delivery of the key's event id now
// (Resend), to ResendTargets: every enabled endpoint of the key that takes
// the event, or, when endpointID is not nil, that endpoint alone (a
// validation error on endpoint_id when it is none of the key's enabled
// endpoints). Another key's event, or none, is 404.
func (s *Service) ResendEvent(ctx context.Context, tx ResendEventTx, keyID, id string, endpointID *string) (*StoredEvent, error) {
	e, err := tx.FindEventForKey(ctx, keyID, id)
	if err != nil {
		return nil, fault.Missing(err, s.ErrNotFound, "no event with this id")
	}
	eps, err := tx.ListWebhookEndpoints(ctx, keyID)
	if err != nil {
		return nil, err
	}
	var only string
	if endpointID != nil {
		only = *endpointID
	}
	targets := ResendTargets(eps, e.Type, only)
	if endpointID != nil && (only == "" || len(targets) == 0) {
		return nil, fault.OnField(fault.ValidationError, "endpoint_id", "no enabled webhook endpoint of this key has this id")
	}
	if err := s.Resend(ctx, tx, e.ID, targets); err != nil {
		return nil, err
	}
	return e, nil
}
