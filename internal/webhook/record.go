package webhook

import (
	"context"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/clock"
)

// RecordTx is a transaction that records events: it stores them and fans
// them out (the store's transaction).
type RecordTx interface {
	// InsertEvent stores an event with its body (Event.Body).
	InsertEvent(ctx context.Context, e Event, body []byte) error
	FanOutTx
}

// Record stores an event in the transaction of the change it reports and
// fans it out to its key's endpoints (FanOut): the change, its event and
// its deliveries commit together (docs/design/decisions.md section 6).
// Resources record their status changes through internal/lifecycle.
func Record(ctx context.Context, tx RecordTx, e Event) error {
	body, err := e.Body()
	if err != nil {
		return err
	}
	if err := tx.InsertEvent(ctx, e, body); err != nil {
		return err
	}
	// The event is dated by its key's clock; its deliveries go by the
	// process's (docs/design/decisions.md section 14: webhook retries keep
	// real time), so a key whose sandbox clock runs ahead still gets its
	// webhooks at once.
	return FanOut(ctx, tx, &Recorded{ID: e.ID, AccessKeyID: e.AccessKeyID, Type: e.Type, Body: body},
		clock.Process(ctx, e.CreatedAt), func() string { return uuid.Must(uuid.NewV7()).String() })
}
