// Package jobs wires River: one client type (*sql.Tx) for both databases,
// the workers of every domain package, and the periodic housekeeping.
package jobs

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
)

// Options tune the client.
type Options struct {
	// Work: run jobs here (role all or worker); false makes an insert-only
	// client (role api).
	Work       bool
	MaxWorkers int // default 20
	// Poll is the fetch poll interval. On PostgreSQL a worker listens for
	// River's notifications (dbconn.Listener) and polls only as a fallback:
	// default IdlePoll. SQLite has no notifications: default 100 ms.
	Poll time.Duration
	Log  *slog.Logger
	// Time stubs River's clock in tests; nil is the real clock.
	Time rivertype.TimeGenerator
	// RescueAfter is how long a job may stay running before River hands it
	// to another worker (its process is taken for dead); default 2 minutes.
	// It must exceed every job's timeout.
	RescueAfter time.Duration
	// JobTimeout bounds a job; default 1 minute.
	JobTimeout time.Duration
	// OnFinished is told of every finished job (for metrics).
	OnFinished func(kind, outcome string)
	// WebhookWorkers is how many webhook jobs run at once, on their own
	// queue so that slow endpoints never hold payment jobs up; default 20.
	WebhookWorkers int
	// Handoff, when set in a client that works, runs the jobs this
	// process's transactions queue here, as soon as they commit, with
	// a lease on the job's row instead of River's job (internal/handoff):
	// as many at once per queue as River's workers, leases RescueAfter
	// long, lapsed ones rescued every handoff.RescueEvery.
	Handoff *handoff.Workers
}

// IdlePoll is how often a PostgreSQL worker looks for jobs when no
// notification came (a fallback: a job is fetched on its notification, and
// a busy queue every busyPoll). Every fetch is a commit: an idle process
// commits about one a second for its two queues' polls, and less than 5 in
// all (docs/operations.md, "Background jobs").
const IdlePoll = 2 * time.Second

// busyPoll is how often a queue that had jobs queued in the last second is
// fetched at least (dbconn.Listener's pokes).
const busyPoll = 100 * time.Millisecond

// fetchCooldown is the shortest time between two fetches of a queue, and
// between two insert notifications of a queue (River's limiter). Longer
// would make fewer fetches (commits) under load, but River would notify
// fewer inserts at moderate rates (those jobs wait for a poke), and a
// queue could take at most MaxWorkers jobs per cooldown.
const fetchCooldown = 20 * time.Millisecond

// Driver returns River's driver for the store's database.
func Driver(s *store.Store) riverdriver.Driver[*sql.Tx] {
	if s.Dialect() == store.SQLite {
		return riversqlite.New(s.DB())
	}
	return riverdatabasesql.New(s.DB())
}

// listening is River's database/sql driver with Paygate's listener
// (dbconn.Listener): the driver notifies but does not listen
// (docs/design/dependencies.md).
type listening struct {
	*riverdatabasesql.Driver
	store *store.Store
}

// SupportsListener turns River's notifier on.
func (d *listening) SupportsListener() bool { return true }

// GetListener returns a listener on a connection of its own.
func (d *listening) GetListener(p *riverdriver.GetListenenerParams) riverdriver.Listener {
	l := d.store.NewListener(p.Schema)
	// A busy queue is fetched at least every 100 ms, as the fixed poll
	// did; an idle one only every IdlePoll.
	l.Poke, l.Linger = busyPoll, time.Second
	return l
}

// workerDriver is the driver of a client that works jobs: on PostgreSQL
// the listening one.
func workerDriver(s *store.Store) riverdriver.Driver[*sql.Tx] {
	if s.Dialect() == store.SQLite {
		return Driver(s)
	}
	return &listening{Driver: riverdatabasesql.New(s.DB()), store: s}
}

// NewClient builds the River client with the given workers and the
// housekeeping jobs, and tells the store to enqueue through it.
func NewClient(s *store.Store, workers *river.Workers, now func() time.Time, o Options) (*river.Client[*sql.Tx], error) {
	river.AddWorker(workers, &PurgeWorker{Store: s, Now: now})
	driver, poll := Driver(s), busyPoll
	if o.Work && s.Dialect() == store.Postgres {
		driver, poll = workerDriver(s), IdlePoll
	}
	cfg := &river.Config{
		Workers:              workers,
		Logger:               o.Log,
		FetchPollInterval:    or(o.Poll, poll),
		FetchCooldown:        fetchCooldown,
		JobTimeout:           or(o.JobTimeout, time.Minute),
		RescueStuckJobsAfter: or(o.RescueAfter, 2*time.Minute),
		Test:                 river.TestConfig{Time: o.Time},
	}
	if o.Work {
		cfg.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: orInt(o.MaxWorkers, 20)},
			webhook.Queue:      {MaxWorkers: orInt(o.WebhookWorkers, 20)},
		}
		cfg.PeriodicJobs = []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
				func() (river.JobArgs, *river.InsertOpts) { return PurgeArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(webhook.SweepEvery),
				func() (river.JobArgs, *river.InsertOpts) { return webhook.SweepArgs{}, nil }, nil),
			// Each account's last closed day, once (docs/reconciliation.md).
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return reconcile.DailyArgs{}, nil }, nil),
		}
	}
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, err
	}
	s.UseQueue(c)
	if o.Work && o.Handoff != nil {
		sizes := map[string]int{}
		for q, c := range cfg.Queues {
			sizes[q] = c.MaxWorkers
		}
		o.Handoff.Start(sizes, cfg.RescueStuckJobsAfter, now)
		o.Handoff.OnFinished, o.Handoff.Log = o.OnFinished, o.Log
		s.UseHandoff(o.Handoff)
	}
	if o.Work && o.OnFinished != nil {
		events, cancel := c.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed)
		go func() {
			defer cancel()
			for e := range events {
				o.OnFinished(e.Job.Kind, string(e.Kind))
			}
		}()
	}
	return c, nil
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// Retention of request records (docs/design/decisions.md sections 1 and 2).
const (
	NonceRetention       = 15 * time.Minute // at least the 600 s of docs/design/decisions.md section 1
	IdempotencyRetention = 24 * time.Hour
	// CardCheckRetention keeps a card verification's keyed hash for the
	// 24-hour window of the per-card limit, and no longer.
	CardCheckRetention = 24 * time.Hour
)

// PurgeArgs asks for expired nonces and idempotency records to be deleted.
type PurgeArgs struct{}

// Kind names the job.
func (PurgeArgs) Kind() string { return "maintenance.purge" }

// InsertOpts keeps one purge queued at a time.
func (PurgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: 5 * time.Minute}}
}

// PurgeStore deletes old request records.
type PurgeStore interface {
	PurgeNonces(ctx context.Context, cutoff time.Time) (int64, error)
	PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error)
	PurgeCardChecks(ctx context.Context, cutoff time.Time) (int64, error)
}

// PurgeWorker forgets card checks after CardCheckRetention, nonces after NonceRetention and idempotency keys
// after IdempotencyRetention.
type PurgeWorker struct {
	river.WorkerDefaults[PurgeArgs]
	Store PurgeStore
	Now   func() time.Time
}

// Work purges.
func (w *PurgeWorker) Work(ctx context.Context, _ *river.Job[PurgeArgs]) error {
	now := w.Now()
	if _, err := w.Store.PurgeNonces(ctx, now.Add(-NonceRetention)); err != nil {
		return err
	}
	if _, err := w.Store.PurgeIdempotencyKeys(ctx, now.Add(-IdempotencyRetention)); err != nil {
		return err
	}
	_, err := w.Store.PurgeCardChecks(ctx, now.Add(-CardCheckRetention))
	return err
}
