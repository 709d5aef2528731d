package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// TestHandoffLeases: a handed-off run's lease (rescue_at) is taken by
// a rescue only once it lapsed, once, however many rescue at the same
// time; the write that finishes the row (an operation done, an attempt
// recorded) clears it, and so does handing the run back (docs/operations.md,
// "Jobs run where they are queued (handoff)").
func TestHandoffLeases(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			ctx := context.Background()
			lease := t0.Add(2 * time.Minute)
			newOp := func(rescueAt time.Time) *operation.Operation {
				op := &operation.Operation{ID: uuid.NewString(), Resource: "thing", ResourceID: uuid.NewString(), Kind: "poke",
					State: operation.Pending, CreatedAt: t0, UpdatedAt: t0, RescueAt: rescueAt}
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.CreateOperation(ctx, op, nil) }))
				return op
			}
			lapsed := func(before time.Time) (ids []string) {
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
					ops, err := tx.LapsedOperations(ctx, before, 100)
					for _, op := range ops {
						ids = append(ids, op.ID)
					}
					return err
				}))
				return ids
			}

			held, done, back := newOp(lease), newOp(lease), newOp(lease)
			newOp(time.Time{}) // River's to run: no lease
			require.Empty(t, lapsed(lease), "not before it lapses")

			done.State, done.UpdatedAt = operation.Done, t0
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateOperation(ctx, done) }))
			inquiring := *held
			inquiring.State = operation.Inquiring
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateOperation(ctx, &inquiring) }))
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				ok, err := tx.ClearOperationLease(ctx, back.ID)
				require.True(t, ok, "handed back: the lease was held")
				return err
			}))

			require.Equal(t, []string{held.ID}, lapsed(lease.Add(time.Microsecond)),
				"an inquiring run keeps its lease; done and handed back have none; an operation River runs never had one")
			require.Empty(t, lapsed(handoff.Forever), "taken once")
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				ok, err := tx.ClearOperationLease(ctx, held.ID)
				require.False(t, ok, "the rescue took it: handing back must not queue a second job")
				return err
			}))

			// Deliveries: the attempt's record clears the lease.
			k := newKey(t, s, "lease")
			ev := webhook.Event{ID: uuid.NewString(), AccessKeyID: k.ID, Type: "payment.succeeded", ResourceType: "payment",
				ResourceID: uuid.NewString(), Object: []byte(`{}`), CreatedAt: t0}
			// Recorded before the endpoint exists: no delivery is made for it here.
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return webhook.Record(ctx, tx, ev) }))
			ep := newEndpoint(t, s, k.ID, t0)
			del := &webhook.Delivery{ID: uuid.NewString(), EventID: ev.ID, EndpointID: ep.ID, Status: webhook.Pending,
				NextAttemptAt: &t0, CreatedAt: t0, UpdatedAt: t0, RescueAt: lease}
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.CreateDelivery(ctx, del)
				return err
			}))
			// The lost-delivery sweep leaves a leased first attempt to
			// its lease's rescue (a run may still be under way), and takes
			// it up once the lease is gone.
			ep2 := newEndpoint(t, s, k.ID, t0)
			del2 := &webhook.Delivery{ID: uuid.NewString(), EventID: ev.ID, EndpointID: ep2.ID, Status: webhook.Pending,
				NextAttemptAt: &t0, CreatedAt: t0, UpdatedAt: t0, RescueAt: lease}
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.CreateDelivery(ctx, del2)
				return err
			}))
			overdue := func() (ids []string) {
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
					ds, err := tx.OverdueDeliveries(ctx, handoff.Forever, 100)
					for _, d := range ds {
						ids = append(ids, d.ID)
					}
					return err
				}))
				return ids
			}
			require.Empty(t, overdue(), "both leased")
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				ok, err := tx.ClearDeliveryLease(ctx, del2.ID)
				require.True(t, ok)
				return err
			}))
			require.Equal(t, []string{del2.ID}, overdue(), "its lease gone, the sweep takes it")
			lapsedDeliveries := func() (n int) {
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
					ds, err := tx.LapsedDeliveries(ctx, handoff.Forever, 100)
					n = len(ds)
					return err
				}))
				return n
			}
			del.Status, del.Attempts = webhook.Succeeded, 1
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				ok, err := tx.UpdateDelivery(ctx, del, 0)
				require.True(t, ok)
				return err
			}))
			require.Zero(t, lapsedDeliveries(), "the attempt's record cleared the lease")
		})
	}
}

// TestHandoffRescueOnce: two rescues at once (two processes on
// PostgreSQL) take each lapsed lease once between them. The first holds
// its leases, its transaction open, until the second has either answered
// or is seen waiting for the first's row locks; with a rescue that waited
// and then took the same rows again, the second would return them too.
// Then several rescue at once until none is left.
func TestHandoffRescueOnce(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			ctx := context.Background()
			const leases = 60
			for i := 0; i < leases; i++ {
				op := &operation.Operation{ID: uuid.NewString(), Resource: "thing", ResourceID: uuid.NewString(), Kind: "poke",
					State: operation.Pending, CreatedAt: t0, UpdatedAt: t0, RescueAt: t0.Add(time.Duration(i) * time.Millisecond)}
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.CreateOperation(ctx, op, nil) }))
			}
			var (
				mu    sync.Mutex
				taken = map[string]int{}
			)
			take := func(tx *store.Tx, limit int) int {
				ops, err := tx.LapsedOperations(ctx, handoff.Forever, limit)
				if !assertNoError(t, err) {
					return 0
				}
				mu.Lock()
				defer mu.Unlock()
				for _, op := range ops {
					taken[op.ID]++
				}
				return len(ops)
			}

			holding, release, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
			go func() {
				firstDone <- s.InTx(ctx, func(tx *store.Tx) error {
					take(tx, 20)
					close(holding)
					<-release
					return nil
				})
			}()
			<-holding
			pid, second := make(chan int, 1), make(chan error, 1)
			go func() {
				second <- s.InTx(ctx, func(tx *store.Tx) error {
					if db.Name == "postgres" {
						var p int
						if err := tx.SQL().QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&p); err != nil {
							return err
						}
						pid <- p
					}
					take(tx, 20)
					return nil
				})
			}()
			if db.Name == "postgres" {
				p := <-pid
				var answered error
				require.Eventually(t, func() bool {
					select {
					case answered = <-second:
						second <- answered
						return true
					default:
					}
					var waiting bool
					require.NoError(t, s.DB().QueryRowContext(ctx,
						`SELECT COALESCE(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`, p).Scan(&waiting))
					return waiting
				}, 10*time.Second, time.Millisecond)
			} // on SQLite the second waits for the first's write lock
			close(release)
			require.NoError(t, <-firstDone)
			require.NoError(t, <-second)

			var wg sync.WaitGroup
			for i := 0; i < 6; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n := 0
						if err := s.InTx(ctx, func(tx *store.Tx) error { n = take(tx, 7); return nil }); !assertNoError(t, err) || n == 0 {
							return
						}
					}
				}()
			}
			wg.Wait()
			require.Len(t, taken, leases)
			for id, n := range taken {
				require.Equal(t, 1, n, "lease of %s taken %d times", id, n)
			}
		})
	}
}

// assertNoError fails t without stopping it (for goroutines).
func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
