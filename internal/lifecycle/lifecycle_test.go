package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/webhook"
)

type status string

// thing is a resource with a life cycle: new → open → done.
type thing struct {
	id             string
	status, stored status
}

var kind = Kind[*thing, status]{
	Name:  "thing",
	Table: Table[status]{"new": {"open"}, "open": {"done"}},
	State: func(t *thing) State[status] {
		return State[status]{ID: t.id, KeyID: "key", Status: t.status, Stored: &t.stored, At: time.Unix(0, 0)}
	},
	Render: func(t *thing) ([]byte, error) { return []byte(`{"status":"` + string(t.status) + `"}`), nil },
	NewID:  func() string { return "evt" },
}

// tx records the events a Save or a Record stores; its key has no webhook
// endpoints.
type tx struct{ events []webhook.Event }

func (t *tx) InsertEvent(_ context.Context, e webhook.Event, _ []byte) error {
	t.events = append(t.events, e)
	return nil
}
func (t *tx) ListWebhookEndpoints(context.Context, string) ([]*webhook.Endpoint, error) {
	return nil, nil
}
func (t *tx) CreateDelivery(context.Context, *webhook.Delivery) (bool, error) { return false, nil }
func (t *tx) Enqueue(context.Context, river.JobArgs, *river.InsertOpts) error { return nil }
func (t *tx) AfterCommit(func(bool))                                          {}
func (t *tx) Handoff() *handoff.Workers                                       { return nil }

// TestSave: a change the table lacks is refused before anything is
// written; an allowed change is written, then its one event recorded
// (<name>.<status>, the resource as rendered) and the stored status moved;
// a write that keeps the status records none; a failed write records none.
func TestSave(t *testing.T) {
	ctx := context.Background()
	conflict := errors.New("changed concurrently")
	for _, tc := range []struct {
		name        string
		from, to    status
		writeErr    error
		wantErr     bool
		writes      int
		wantEvent   string
		wantObject  string
		storedAfter status
	}{
		{"allowed", "new", "open", nil, false, 1, "thing.open", `{"status":"open"}`, "open"},
		{"unchanged", "open", "open", nil, false, 1, "", "", "open"},
		{"not in the table", "new", "done", nil, true, 0, "", "", "new"},
		{"backwards", "done", "open", nil, true, 0, "", "", "done"},
		{"the write lost its compare-and-set", "new", "open", conflict, true, 1, "", "", "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, tx, writes := &thing{id: "t1", status: tc.to, stored: tc.from}, &tx{}, 0
			err := kind.Save(ctx, tx, th, func() error { writes++; return tc.writeErr })
			if (err != nil) != tc.wantErr || writes != tc.writes {
				t.Fatalf("err %v, %d writes", err, writes)
			}
			if tc.writeErr != nil && !errors.Is(err, tc.writeErr) {
				t.Errorf("the write's error is lost: %v", err)
			}
			if tc.wantEvent == "" {
				if len(tx.events) != 0 {
					t.Errorf("events %v, want none", tx.events)
				}
			} else if len(tx.events) != 1 || tx.events[0].Type != tc.wantEvent || string(tx.events[0].Object) != tc.wantObject ||
				tx.events[0].ResourceType != "thing" || tx.events[0].ResourceID != "t1" || tx.events[0].AccessKeyID != "key" {
				t.Errorf("events %+v, want one %s", tx.events, tc.wantEvent)
			}
			if th.stored != tc.storedAfter {
				t.Errorf("stored %q, want %q", th.stored, tc.storedAfter)
			}
		})
	}
}

// TestRecordOnce: a new resource's first status is a change, recorded
// once however often Record runs; without a renderer nothing is recorded
// and the stored status still moves.
func TestRecordOnce(t *testing.T) {
	ctx := context.Background()
	th, tx := &thing{id: "t2", status: "new"}, &tx{}
	for range 2 {
		if err := kind.Record(ctx, tx, th); err != nil {
			t.Fatal(err)
		}
	}
	if len(tx.events) != 1 || tx.events[0].Type != "thing.new" {
		t.Errorf("events %+v, want one thing.new", tx.events)
	}
	silent := kind
	silent.Render = nil
	th = &thing{id: "t3", status: "open", stored: "new"}
	if err := silent.Record(ctx, tx, th); err != nil || len(tx.events) != 1 || th.stored != "open" {
		t.Errorf("err %v, %d events, stored %q", err, len(tx.events), th.stored)
	}
}
