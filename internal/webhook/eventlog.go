package webhook

import "time"

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
