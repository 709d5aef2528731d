package openapi

import "encoding/json"

// CreateWebhookEndpoint is the body of the extension POST
// /api/v1/webhook-endpoints (schema CreateWebhookEndpoint).
type CreateWebhookEndpoint struct {
	URL        string   `json:"url"`
	EventTypes []string `json:"event_types,omitempty"` // absent or empty: every type
}

// WebhookEndpoint is an endpoint in an answer, without its secret (schema
// WebhookEndpoint).
type WebhookEndpoint struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	EventTypes     []string `json:"event_types"`
	CreatedAt      Time     `json:"created_at"`
	DisabledAt     Time     `json:"disabled_at,omitzero"`
	DisabledReason string   `json:"disabled_reason,omitempty"`
}

// CreatedWebhookEndpoint is the answer to the endpoint's creation: the one
// time its secret is shown (schema CreatedWebhookEndpoint).
type CreatedWebhookEndpoint struct {
	WebhookEndpoint
	Secret string `json:"secret"` // whsec_…
}

// WebhookEndpointList is the answer of GET /api/v1/webhook-endpoints
// (schema WebhookEndpointList). Items is never null.
type WebhookEndpointList struct {
	Items []WebhookEndpoint `json:"items"`
}

// Event is an event as delivered to endpoints and listed (schema Event):
// its JSON is byte for byte the body that was signed and sent.
type Event struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt Time      `json:"created_at"`
	Data      EventData `json:"data"`
}

// EventData holds the resource as GET returned it at the change (schema
// EventData).
type EventData struct {
	Object json.RawMessage `json:"object"`
}

// EventList is a page of events (schema EventList).
type EventList struct {
	Items      []Event `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// EventDetails is an event with its deliveries (schema EventDetails), the
// answer of GET /api/v1/events/{id} and of a resend.
type EventDetails struct {
	Event
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// ResendEvent is the optional body of POST /api/v1/events/{id}/resend
// (schema ResendEvent).
type ResendEvent struct {
	EndpointID *string `json:"endpoint_id,omitempty"` // absent: every endpoint that takes the event
}

// WebhookDelivery is an event's delivery to one endpoint (schema
// WebhookDelivery).
type WebhookDelivery struct {
	ID            string           `json:"id"`
	EndpointID    string           `json:"endpoint_id"`
	URL           string           `json:"url"`
	Status        string           `json:"status"` // pending, succeeded, failed
	FailureReason string           `json:"failure_reason,omitempty"`
	NextAttemptAt Time             `json:"next_attempt_at,omitzero"`
	CreatedAt     Time             `json:"created_at"`
	Attempts      []WebhookAttempt `json:"attempts"`
}

// WebhookAttempt is one HTTP request of a delivery (schema WebhookAttempt).
type WebhookAttempt struct {
	AttemptedAt Time   `json:"attempted_at"`
	StatusCode  int    `json:"status_code,omitempty"` // absent when no answer came
	LatencyMS   int64  `json:"latency_ms"`
	Response    string `json:"response,omitempty"` // the answer's first bytes (at most 500)
	Error       string `json:"error,omitempty"`    // why no answer came
}
