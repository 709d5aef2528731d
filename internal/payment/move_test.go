package payment

import (
	"context"
	"testing"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/recurring"
	"github.com/paygate/paygate/internal/webhook"
)

// writes counts what save asked of its transaction. Its payments carry no
// terms: the subscription's statements (recurring.Tx) are never called.
type writes struct {
	settles
	recurring.Tx
	updates, events int
}

func (w *writes) UpdatePayment(context.Context, *Payment) error { w.updates++; return nil }

func (w *writes) InsertEvent(context.Context, webhook.Event, []byte) error { w.events++; return nil }

// The key has no webhook endpoints: the fan-out reads and writes nothing
// more.
func (w *writes) ListWebhookEndpoints(context.Context, string) ([]*webhook.Endpoint, error) {
	return nil, nil
}
func (w *writes) CreateDelivery(context.Context, *webhook.Delivery) (bool, error) { return false, nil }
func (w *writes) Enqueue(context.Context, river.JobArgs, *river.InsertOpts) error { return nil }
func (w *writes) AfterCommit(func(bool))                                          {}
func (w *writes) Handoff() *handoff.Workers                                       { return nil }

// TestSaveFollowsTheLifeCycle: every write goes through save, which refuses
// a status change the table does not allow before writing anything, records
// one event per change and none for a write that keeps the status.
func TestSaveFollowsTheLifeCycle(t *testing.T) {
	s := &Service{NewID: func() string { return "ev" }, Render: func(*Payment) ([]byte, error) { return []byte(`{}`), nil }}
	ctx := context.Background()
	for _, tc := range []struct {
		from, to        Status
		err             bool
		updates, events int
	}{
		{Processing, Succeeded, false, 1, 1},
		{Succeeded, Succeeded, false, 1, 0},
		{Succeeded, Processing, true, 0, 0},
		{Declined, Succeeded, true, 0, 0},
		{Created, RequiresAction, false, 1, 1},
	} {
		w := &writes{}
		p := &Payment{ID: "p", Status: tc.to, StoredStatus: tc.from}
		err := s.save(ctx, w, p)
		if (err != nil) != tc.err || w.updates != tc.updates || w.events != tc.events {
			t.Errorf("%s → %s: err %v, %d updates, %d events", tc.from, tc.to, err, w.updates, w.events)
		}
		if err == nil && p.StoredStatus != tc.to {
			t.Errorf("%s → %s: the stored status is %s after the write", tc.from, tc.to, p.StoredStatus)
		}
	}
}
