// Package lifecycle is the one way a resource's status moves: the change
// must be in the resource's table of transitions, the resource is written
// by compare-and-set, and the change's event, carrying the resource as GET
// shows it, is recorded in the same transaction
// (docs/design/decisions.md section 6). Payments, payouts, card
// verifications, subscriptions and mandates move through it.
package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/webhook"
)

// Table is a life cycle: from each status, the statuses it may move to.
type Table[S ~string] map[S][]S

// Allows reports whether the life cycle allows from → to.
func (t Table[S]) Allows(from, to S) bool {
	for _, s := range t[from] {
		if s == to {
			return true
		}
	}
	return false
}

// State is what the kit reads of a resource being moved: its id and key,
// its status now, the status as last read or written (Stored, set once the
// change is recorded), and the time of the change.
type State[S ~string] struct {
	ID, KeyID string
	Status    S
	Stored    *S
	At        time.Time
}

// Kind is a kind of resource as it moves: its name (the resource type of
// its events, and their type's prefix: <name>.<status>), its life cycle,
// how its state is read, and its view (the object of its events).
type Kind[R any, S ~string] struct {
	Name  string
	Table Table[S]
	State func(R) State[S]
	// Render is the resource as GET shows it; nil records no events (a
	// domain's own tests).
	Render func(R) ([]byte, error)
	NewID  func() string
}

// Save writes r after its creation: a change of status must be in the
// life cycle; write is the resource's compare-and-set (its conflict error
// when the row changed since it was read) with what goes with it; then
// the change's event is recorded, in the same transaction.
func (k Kind[R, S]) Save(ctx context.Context, tx webhook.RecordTx, r R, write func() error) error {
	st := k.State(r)
	if st.Status != *st.Stored && !k.Table.Allows(*st.Stored, st.Status) {
		return fmt.Errorf("%s %s: %s → %s is not in the life cycle", k.Name, st.ID, *st.Stored, st.Status)
	}
	if err := write(); err != nil {
		return err
	}
	return k.Record(ctx, tx, r)
}

// Record records the event of r's status change, once: none when the
// status is the stored one; a new resource's stored status is empty, so
// its first status is a change.
func (k Kind[R, S]) Record(ctx context.Context, tx webhook.RecordTx, r R) error {
	st := k.State(r)
	if k.Render == nil || st.Status == *st.Stored {
		*st.Stored = st.Status
		return nil
	}
	obj, err := k.Render(r)
	if err != nil {
		return err
	}
	if err := webhook.Record(ctx, tx, webhook.Event{ID: k.NewID(), AccessKeyID: st.KeyID,
		Type: k.Name + "." + string(st.Status), ResourceType: k.Name, ResourceID: st.ID, Object: obj,
		CreatedAt: st.At}); err != nil {
		return err
	}
	*st.Stored = st.Status
	return nil
}
