package webhook

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/fault"
)

// Sealer encrypts secrets at rest (the vault).
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// Service manages endpoints and re-sends events, for the API and the
// command line alike, and reads a key's endpoints and event log for the
// API.
type Service struct {
	Sealer Sealer
	Now    func() time.Time
	NewID  func() string
	// Production refuses plain http and private destinations (CheckURL).
	Production bool
	Resolver   Resolver
	// Store is what the service reads and changes outside a transaction;
	// ErrNotFound is its "no such row", which the service answers with
	// 404.
	Store       Store
	ErrNotFound error
}

// NewService builds the webhook service; every dependency is an argument
// (docs/architecture.md, "The composition root"). production refuses
// plain http and private destinations, resolving hosts with resolver
// (nil: none is looked up); errNotFound is the store's "no such row".
func NewService(sealer Sealer, now func() time.Time, newID func() string, production bool, resolver Resolver,
	st Store, errNotFound error) *Service {
	return &Service{Sealer: sealer, Now: now, NewID: newID, Production: production, Resolver: resolver, Store: st,
		ErrNotFound: errNotFound}
}

// Store is what the service reads and changes outside a transaction, for
// the API: a key's endpoints and its event log (the store's Store is one).
type Store interface {
	ListWebhookEndpoints(ctx context.Context, keyID string) ([]*Endpoint, error)
	RemoveWebhookEndpoint(ctx context.Context, keyID, id string, at time.Time) error
	FindEventForKey(ctx context.Context, keyID, id string) (*StoredEvent, error)
	ListEvents(ctx context.Context, keyID string, f EventFilter) ([]*StoredEvent, error)
	DeliveryReader
}

// ListEndpoints are the key's endpoints.
func (s *Service) ListEndpoints(ctx context.Context, keyID string) ([]*Endpoint, error) {
	return s.Store.ListWebhookEndpoints(ctx, keyID)
}

// RemoveEndpoint removes the key's endpoint id: nothing is sent to it any
// more. Another key's, or one already removed, is 404.
func (s *Service) RemoveEndpoint(ctx context.Context, keyID, id string) error {
	err := s.Store.RemoveWebhookEndpoint(ctx, keyID, id, s.Now())
	return fault.Missing(err, s.ErrNotFound, "no webhook endpoint with this id")
}

// NewEndpoint describes an endpoint to add.
type NewEndpoint struct {
	URL        string
	EventTypes []string // empty: every type
}

// EndpointStore is what managing endpoints writes, in the store or a
// transaction.
type EndpointStore interface {
	CreateWebhookEndpoint(ctx context.Context, e *Endpoint) error
	RotateWebhookSecret(ctx context.Context, id string, sealed, previous []byte, until *time.Time) error
}

// Limits of an endpoint (also in the OpenAPI document).
const (
	MaxURLLength  = 2048
	MaxEventTypes = 50
)

// Create adds an endpoint to a key and returns it with its secret, which
// is shown this once and kept only sealed (docs/design/decisions.md section 6).
func (s *Service) Create(ctx context.Context, st EndpointStore, keyID string, in NewEndpoint) (*Endpoint, string, error) {
	if len(in.URL) > MaxURLLength {
		return nil, "", fault.OnField(fault.ValidationError, "url", fmt.Sprintf("must be at most %d characters", MaxURLLength))
	}
	types, err := checkTypes(in.EventTypes)
	if err != nil {
		return nil, "", err
	}
	if err := CheckURL(ctx, in.URL, s.Production, s.Resolver); err != nil {
		return nil, "", err
	}
	e := &Endpoint{ID: s.NewID(), AccessKeyID: keyID, URL: in.URL, EventTypes: types, CreatedAt: s.Now().UTC()}
	secret := NewSecret()
	if e.SecretSealed, err = s.Sealer.Seal([]byte(secret), SecretAAD(e.ID)); err != nil {
		return nil, "", fmt.Errorf("seal webhook secret: %w", err)
	}
	if err := st.CreateWebhookEndpoint(ctx, e); err != nil {
		return nil, "", err
	}
	return e, secret, nil
}

// checkTypes validates an event type filter and drops repeats.
func checkTypes(types []string) ([]string, error) {
	if len(types) > MaxEventTypes {
		return nil, fault.OnField(fault.ValidationError, "event_types", fmt.Sprintf("must have at most %d items", MaxEventTypes))
	}
	out := []string{}
	for i, t := range types {
		if !ValidType(t) {
			return nil, fault.OnField(fault.ValidationError, fmt.Sprintf("event_types.%d", i),
				"must be an event type such as payment.succeeded")
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// RotateSecret gives an endpoint a new secret and returns it (shown once).
// For overlap after now the old secret keeps signing beside the new one,
// so receivers can switch without losing a message; a zero overlap drops
// it at once. Rotating again during an overlap drops the oldest secret.
func (s *Service) RotateSecret(ctx context.Context, st EndpointStore, e *Endpoint, overlap time.Duration) (string, error) {
	secret := NewSecret()
	sealed, err := s.Sealer.Seal([]byte(secret), SecretAAD(e.ID))
	if err != nil {
		return "", fmt.Errorf("seal webhook secret: %w", err)
	}
	var previous []byte
	var until *time.Time
	if overlap > 0 {
		t := s.Now().UTC().Add(overlap)
		previous, until = e.SecretSealed, &t
	}
	if err := st.RotateWebhookSecret(ctx, e.ID, sealed, previous, until); err != nil {
		return "", err
	}
	e.SecretSealed, e.PreviousSecretSealed, e.PreviousSecretUntil = sealed, previous, until
	return secret, nil
}

// ResendTx is what a resend writes, in the request's transaction.
type ResendTx interface {
	// RequeueDelivery creates the delivery of d's event to d's endpoint, or
	// restarts the existing one (pending, a new round, the next
	// generation), and returns it as stored.
	RequeueDelivery(ctx context.Context, d *Delivery) (*Delivery, error)
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Resend queues a new round of delivery of an event to each endpoint, now,
// whatever became of earlier rounds. The webhook-id stays the event id, so
// a receiver that already handled the event recognises it.
func (s *Service) Resend(ctx context.Context, tx ResendTx, eventID string, endpoints []*Endpoint) error {
	now := s.Now().UTC()
	for _, ep := range endpoints {
		d, err := tx.RequeueDelivery(ctx, &Delivery{ID: s.NewID(), EventID: eventID, EndpointID: ep.ID,
			Status: Pending, NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now})
		if err != nil {
			return err
		}
		if err := tx.Enqueue(ctx, DeliverArgs{DeliveryID: d.ID, Generation: d.Generation}, nil); err != nil {
			return err
		}
	}
	return nil
}

// ResendTargets are the endpoints a resend of an event of eventType goes
// to (docs/webhooks.md, "The event log"): every enabled endpoint of eps
// whose filter takes the type, or, with endpointID (not empty), that
// endpoint alone whatever its filter, if it is enabled. The API's resend
// and the cabinet's apply it alike.
func ResendTargets(eps []*Endpoint, eventType, endpointID string) []*Endpoint {
	var targets []*Endpoint
	for _, ep := range eps {
		if !ep.Enabled() {
			continue
		}
		if endpointID == "" && ep.Wants(eventType) || endpointID != "" && endpointID == ep.ID {
			targets = append(targets, ep)
		}
	}
	return targets
}
