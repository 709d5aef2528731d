// Package webhook is Paygate's events and their delivery to merchants'
// endpoints (docs/design/decisions.md section 6): every status change of a
// resource becomes an Event, written in the transaction of the change
// (Record) with one delivery per matching endpoint (FanOut), and delivery
// jobs send each, signed per Standard Webhooks, at least once.
package webhook

import (
	"encoding/json"
	"time"
)

// Event is one status change of a resource, as merchants receive it.
type Event struct {
	ID           string    // evt id: a uuid; also the webhook-id header
	AccessKeyID  string    // the key that owns the resource: only its endpoints get it
	Type         string    // "<resource>.<status>", e.g. payment.succeeded (docs/design/decisions.md section 6)
	ResourceType string    // payment, payout, card_verification, subscription, mandate
	ResourceID   string    // the resource's id
	Object       []byte    // the resource as GET returns it at that moment (JSON)
	CreatedAt    time.Time // the moment of the change
}

// Body is the event as sent and as GET /events/{id} shows it:
// {"id", "type", "created_at", "data": {"object": …}}
// (docs/design/decisions.md section 6).
func (e Event) Body() ([]byte, error) {
	return json.Marshal(struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CreatedAt string `json:"created_at"`
		Data      struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}{ID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339),
		Data: struct {
			Object json.RawMessage `json:"object"`
		}{Object: e.Object}})
}
