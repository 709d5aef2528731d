package operation_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// handoffRig is an engine that runs what its transactions queue itself
// (internal/handoff), slots at once, and whose River client never works:
// a job River would have to run stays in the table for the test to see.
type handoffRig struct {
	*rig
	river *river.Client[*sql.Tx]
}

func newHandoffRig(t *testing.T, db storetest.Database, slots int) *handoffRig {
	r, workers := newEngine(t, db)
	handedOff := handoff.NewWorkers()
	operation.AddHandoff(handedOff, r.engine)
	q, err := jobs.NewClient(r.store, workers, time.Now, jobs.Options{Work: true, MaxWorkers: slots, Log: r.engine.Log, Handoff: handedOff})
	require.NoError(t, err)
	t.Cleanup(func() { _ = handedOff.Stop(context.Background()) })
	return &handoffRig{rig: r, river: q}
}

// jobs lists River's jobs of operations.
func (r *handoffRig) jobs() []*rivertype.JobRow {
	r.t.Helper()
	res, err := r.river.JobList(context.Background(), river.NewJobListParams().Kinds(operation.RunArgs{}.Kind()).First(100))
	require.NoError(r.t, err)
	return res.Jobs
}

// leased reports whether op's row holds a handed-off run's lease.
func (r *handoffRig) leased(op *operation.Operation) bool {
	r.t.Helper()
	var held bool
	require.NoError(r.t, r.store.DB().QueryRowContext(context.Background(),
		`SELECT rescue_at IS NOT NULL FROM operations WHERE id = $1`, op.ID).Scan(&held))
	return held
}

func (r *handoffRig) done(op *operation.Operation) bool {
	cur, _ := r.reload(op)
	return cur.State == operation.Done
}

func (r *handoffRig) calls() []string {
	r.thing.mu.Lock()
	defer r.thing.mu.Unlock()
	return slices.Clone(r.thing.calls)
}

// TestHandoff: an operation queued in a process that runs jobs is run
// there as its transaction commits, with a lease on its row and no River
// job, and the outcome clears the lease; undone writes run nothing and free
// their slot; a full pool leaves the job to River at once; a run without
// an outcome hands the job back at River's time; a lease whose process
// stopped is rescued into River's job, once (docs/operations.md, "Jobs run
// where they are queued (handoff)").
func TestHandoff(t *testing.T) {
	ctx := context.Background()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Run("run at the commit, the lease cleared with the outcome", func(t *testing.T) {
				r := newHandoffRig(t, db, 2)
				r.thing.answers = []answer{{status: "succeeded"}}
				op := r.queue(operation.Pending)
				require.Eventually(t, func() bool { return r.done(op) }, 10*time.Second, 5*time.Millisecond)
				require.Equal(t, []string{secret}, r.calls())
				_, kept := r.reload(op)
				require.False(t, kept, "the secret is deleted with the outcome")
				require.False(t, r.leased(op), "the lease is cleared with the outcome")
				require.Empty(t, r.jobs(), "River never had a job for it")
			})

			t.Run("undone writes run nothing and free their slot", func(t *testing.T) {
				r := newHandoffRig(t, db, 1)
				r.thing.answers = []answer{{status: "succeeded"}}
				undone := errors.New("refused")
				queue := func(tx *store.Tx) error {
					now := time.Now().UTC()
					return operation.Queue[struct{}](ctx, tx, r.engine.Sealer, &operation.Operation{ID: uuid.NewString(), Resource: "thing",
						ResourceID: uuid.NewString(), Kind: "poke", CreatedAt: now, UpdatedAt: now}, nil)
				}
				require.ErrorIs(t, r.store.InTx(ctx, func(tx *store.Tx) error {
					require.NoError(t, queue(tx))
					return undone
				}), undone)
				require.ErrorIs(t, r.store.Batch(ctx, func(_ context.Context, tx *store.Tx) error {
					require.NoError(t, queue(tx))
					return undone
				}), undone)
				require.NoError(t, r.store.InTx(ctx, func(tx *store.Tx) error {
					require.NoError(t, tx.Savepoint(ctx, "request"))
					require.NoError(t, queue(tx))
					return tx.RollbackTo(ctx, "request")
				}))
				// Had a slot stayed taken, this one would be left to River
				// (which does not run here) and never be done.
				op := r.queue(operation.Pending)
				require.Eventually(t, func() bool { return r.done(op) }, 10*time.Second, 5*time.Millisecond)
				require.Equal(t, []string{secret}, r.calls(), "only the committed operation was sent")
				require.Empty(t, r.jobs())
			})

			t.Run("a full pool leaves the job to River at once", func(t *testing.T) {
				r := newHandoffRig(t, db, 1)
				r.thing.answers = []answer{{status: "succeeded"}}
				r.thing.gate = make(chan struct{})
				first := r.queue(operation.Pending)
				second := r.queue(operation.Pending)
				js := r.jobs()
				require.Len(t, js, 1, "the first one is run here, with no job")
				require.Equal(t, rivertype.JobStateAvailable, js[0].State, "the second one is River's, at once")
				require.True(t, r.leased(first))
				require.False(t, r.leased(second))
				close(r.thing.gate)
				require.Eventually(t, func() bool { return r.done(first) }, 10*time.Second, 5*time.Millisecond)
				require.False(t, r.done(second))
				require.False(t, r.leased(first))
				js = r.jobs()
				require.Len(t, js, 1)
			})

			t.Run("a stopped process's lease is rescued once", func(t *testing.T) {
				r := newHandoffRig(t, db, 1)
				r.thing.answers = []answer{{status: "succeeded"}}
				r.thing.gate = make(chan struct{})
				op := r.queue(operation.Pending)
				// The run is held at its call, as a process that died there
				// would be: its lease is all that is left of it.
				n, err := r.engine.Rescue(ctx, time.Now().Add(time.Minute))
				require.NoError(t, err)
				require.Zero(t, n, "not before the lease lapses (River's rescue window, 2 minutes here)")
				require.Empty(t, r.jobs())
				n, err = r.engine.Rescue(ctx, handoff.Forever)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				js := r.jobs()
				require.Len(t, js, 1)
				require.Equal(t, rivertype.JobStateAvailable, js[0].State, "due at once")
				require.JSONEq(t, `{"operation_id": "`+op.ID+`", "again": true}`, string(js[0].EncodedArgs),
					"a later run: the held one may have sent the call, so this one never moves the payment")
				require.False(t, r.leased(op))
				n, err = r.engine.Rescue(ctx, handoff.Forever)
				require.NoError(t, err)
				require.Zero(t, n, "rescued once")
				close(r.thing.gate)
				require.Eventually(t, func() bool { return r.done(op) }, 10*time.Second, 5*time.Millisecond)
			})

			t.Run("no outcome: handed back at River's time", func(t *testing.T) {
				r := newHandoffRig(t, db, 1)
				r.thing.answers = []answer{{err: provider.Errorf(provider.Transient, "503")}}
				op := r.queue(operation.Pending)
				var js []*rivertype.JobRow
				require.Eventually(t, func() bool {
					js = r.jobs()
					return len(js) == 1
				}, 10*time.Second, 5*time.Millisecond)
				require.False(t, r.leased(op), "the lease is cleared with the job queued")
				require.JSONEq(t, `{"operation_id": "`+op.ID+`", "again": true}`, string(js[0].EncodedArgs), "a later run")
				require.Equal(t, []string{secret}, r.calls())
				require.Less(t, time.Until(js[0].ScheduledAt), 2*time.Second, "River retries after its first backoff, 1 s")
				cur, kept := r.reload(op)
				require.Equal(t, operation.Pending, cur.State)
				require.True(t, kept, "the secret stays for the retry")
			})
		})
	}
}
