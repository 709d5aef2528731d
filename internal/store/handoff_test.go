package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// TestRequeueHandedOffJobs: on SQLite, where one process owns the data, a
// start makes the safety nets a killed process left due at once, with the
// jobs it left running, and leaves River's own scheduled jobs alone; on
// PostgreSQL, where other processes may be running them, it touches
// nothing (docs/operations.md, "Jobs run where they are queued (handoff)").
func TestRequeueHandedOffJobs(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			s := storetest.Open(t, db)
			ctx := context.Background()
			workers := river.NewWorkers()
			river.AddWorker(workers, noopDeliver{})
			q, err := jobs.NewClient(s, workers, time.Now, jobs.Options{})
			require.NoError(t, err)
			later := time.Now().Add(time.Hour)
			var net, retry int64
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				if net, _, err = tx.EnqueueJob(ctx, webhook.DeliverArgs{DeliveryID: "net"},
					&river.InsertOpts{ScheduledAt: later, Tags: []string{handoff.Tag}}); err != nil {
					return err
				}
				retry, _, err = tx.EnqueueJob(ctx, webhook.DeliverArgs{DeliveryID: "retry", Generation: 1},
					&river.InsertOpts{ScheduledAt: later})
				return err
			}))
			n, err := s.RequeueInterruptedJobs(ctx)
			require.NoError(t, err)
			state := func(id int64) (rivertype.JobState, time.Time) {
				j, err := q.JobGet(ctx, id)
				require.NoError(t, err)
				return j.State, j.ScheduledAt
			}
			st, at := state(retry)
			require.Equal(t, rivertype.JobStateScheduled, st, "a retry keeps its time")
			require.WithinDuration(t, later, at, time.Second)
			st, at = state(net)
			if db.Name == "sqlite" {
				require.EqualValues(t, 1, n)
				require.Equal(t, rivertype.JobStateAvailable, st)
				require.False(t, at.After(time.Now()), "due at once")
				return
			}
			require.Zero(t, n)
			require.Equal(t, rivertype.JobStateScheduled, st)
		})
	}
}
