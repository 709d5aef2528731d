// Package handoff runs a job in the process whose transaction queued it,
// as soon as that transaction commits and with what the transaction already
// held, instead of through River's fetch. A payment's provider call and its
// first webhook attempt then cost no fetch, no completion and no read of
// their own, and no River job at all (docs/operations.md, "Jobs run where
// they are queued (handoff)").
//
// A lease on the job's own row keeps the guarantee. The transaction that
// queues the job writes the row (an operation, a delivery) with a lease
// (rescue_at) one window later, the process's --rescue-after, instead of
// a River job. The row's final write clears the lease (the outcome
// recorded), and a run that ends without it hands the job back to River
// (HandBack: the lease cleared and River's job queued, in one
// transaction). A process that dies leaves its leases to lapse: the rescue
// that every process that runs jobs makes every RescueEvery (Workers.Rescue)
// clears a lapsed lease and queues River's job in one transaction, so
// exactly once whoever else rescues at the same time.
package handoff

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// RescueEvery is how often a process that runs jobs rescues the lapsed
// leases: a job a dead process had in hand runs at most its window and
// RescueEvery after it was queued. A rescue that finds nothing is one
// indexed read.
const RescueEvery = 10 * time.Second

// Forever is a time after every lease: a rescue before it takes them all
// (a SQLite start, where no other process can hold one).
var Forever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Job is a job handed off: its arguments, and what its run was handed by
// the transaction that queued it (Prepared: false when there was nothing,
// and the run reads for itself).
type Job[D any] struct {
	Args     river.JobArgs
	Data     D
	Prepared bool
	// Due is when the lease lapses (River's clock): the run's context
	// ends Margin before, so that a rescue never queues the job while the
	// run still may be going.
	Due time.Time
}

// Prepare reads, in the transaction tx that queues a job, what its run
// will need, so that the run reads nothing before its work: on PostgreSQL
// one transaction fewer. given is what the queuing code handed
// (Slot.Hand), which it need not read again. An error leaves the run to
// read for itself.
type Prepare[T Tx, G, D any] func(ctx context.Context, tx T, args river.JobArgs, given G) (D, error)

// Func runs a handed-off job of one kind. It must record the outcome with
// the write that clears the lease, or hand the job back (HandBack), or
// leave the lease to lapse; a nil error counts as done, an error as handed
// back (for the metrics).
type Func[D any] func(ctx context.Context, j Job[D]) error

// Rescuer clears the leases of one kind of row that lapsed before before,
// queues River's job for each row still unfinished, in one transaction,
// and returns how many it queued.
type Rescuer func(ctx context.Context, before time.Time) (int, error)

// Tx is a transaction that can hand jobs off (the store's).
type Tx interface {
	// AfterCommit runs fn once the transaction's fate is known: true once
	// its writes are durable, false once they are undone.
	AfterCommit(fn func(committed bool))
	// Handoff is the process's handoff workers; nil: none (an API-only
	// process, or a tool).
	Handoff() *Workers
}

// Enqueuer is a transaction that queues River jobs.
type Enqueuer interface {
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// kind is a registered job kind, its types erased: G is what the queuing
// code hands (Slot.Hand), D what the run gets.
type kind struct {
	given   reflect.Type
	prepare func(ctx context.Context, tx Tx, args river.JobArgs, given any) (data any, ok bool)
	run     func(ctx context.Context, args river.JobArgs, data any, prepared bool, due time.Time) error
}

// Add registers the run of a job kind whose queuing code hands its run the
// data itself (Slot.Hand), and the rescue of its rows' leases (nil: one
// registered with another kind covers it).
func Add[D any](w *Workers, name string, fn Func[D], rescue Rescuer) {
	AddPrepared(w, name, fn, func(_ context.Context, _ Tx, _ river.JobArgs, given D) (D, error) { return given, nil }, rescue)
}

// AddPrepared registers the run of a job kind, what the queuing
// transaction (of type T) reads for it from what the queuing code hands
// (G), and the rescue of its rows' leases (nil: one registered with
// another kind covers it).
func AddPrepared[T Tx, G, D any](w *Workers, name string, fn Func[D], prep Prepare[T, G, D], rescue Rescuer) {
	w.kinds[name] = kind{
		given: reflect.TypeFor[G](),
		prepare: func(ctx context.Context, tx Tx, args river.JobArgs, given any) (any, bool) {
			// The queuing transaction is the process's one type of
			// transaction (the store's), the kind registered with it: any
			// other is a programming error, which any test that queues
			// the kind finds, never a slower path taken in silence.
			t, ok := tx.(T)
			if !ok {
				panic(fmt.Sprintf("handoff: kind %s is prepared in a %s, not a %T", name, reflect.TypeFor[T](), tx))
			}
			d, err := prep(ctx, t, args, given.(G))
			return d, err == nil
		},
		run: func(ctx context.Context, args river.JobArgs, data any, prepared bool, due time.Time) error {
			j := Job[D]{Args: args, Prepared: prepared, Due: due}
			if prepared {
				j.Data = data.(D)
			}
			return fn(ctx, j)
		},
	}
	if rescue != nil {
		w.rescuers = append(w.rescuers, rescue)
	}
}

// Slot is a run of one job reserved in the process of the transaction that
// queues it; G is what the queuing code hands its run. The caller writes
// the job's row with Lease, then calls Hand; or Release when it does not.
type Slot[G any] struct {
	p    *pool
	tx   Tx
	args river.JobArgs
	k    kind
	due  time.Time
	done bool
}

// Reserve takes a slot for args' run in tx's process, or returns nil: its
// process runs no jobs or not this kind, has stopped, or every slot of the
// job's queue is busy. Then River runs the job, as the caller queues it.
// G must be what the kind was registered with (a programming error
// otherwise: Reserve panics).
func Reserve[G any](tx Tx, args river.JobArgs) *Slot[G] {
	w := tx.Handoff()
	if w == nil {
		return nil
	}
	k, ok := w.kinds[args.Kind()]
	if !ok {
		return nil
	}
	if k.given != reflect.TypeFor[G]() {
		panic(fmt.Sprintf("handoff: kind %s is handed %s, not %s", args.Kind(), k.given, reflect.TypeFor[G]()))
	}
	p := w.reserve(args)
	if p == nil {
		return nil
	}
	return &Slot[G]{p: p, tx: tx, args: args, k: k, due: p.now().Add(p.window)}
}

// Lease is when the run's lease lapses, to be written on the job's row;
// zero for no slot (nil).
func (s *Slot[G]) Lease() time.Time {
	if s == nil {
		return time.Time{}
	}
	return s.due
}

// Hand runs the job here once the transaction commits, with what the
// kind's preparation makes of given, in ctx and the transaction. The job's
// row must have been written with Lease in the same transaction. A
// rollback (of the transaction, or to a savepoint taken before) runs
// nothing and frees the slot.
func (s *Slot[G]) Hand(ctx context.Context, given G) {
	if s == nil || s.done {
		return
	}
	data, prepared := s.k.prepare(ctx, s.tx, s.args, given) // a panic leaves the slot to Release
	s.done = true
	p, k, args, due := s.p, s.k, s.args, s.due
	s.tx.AfterCommit(func(committed bool) {
		if !committed {
			p.release()
			return
		}
		p.run(args.Kind(), func(ctx context.Context) error { return k.run(ctx, args, data, prepared, due) }, due)
	})
}

// Release frees the slot unless Hand took it; safe to defer, and on nil.
func (s *Slot[G]) Release() {
	if s == nil || s.done {
		return
	}
	s.done = true
	s.p.release()
}

// HandBack hands a run that ended with err (not nil) back to River, as
// River would take the job's first attempt ending so: due at retryAt, or
// after the snooze err asks for (from now). In one transaction of the
// run's own kind (transact), unlease clears the run's lease, and when it
// still held it (a rescue did not take it meanwhile) River's job is
// queued. It gets ReturnTimeout even when ctx has ended (a shutdown, the
// run's deadline). It returns what handing back failed with: the job then
// runs when its lease lapses.
func HandBack[T Enqueuer](ctx context.Context, transact func(ctx context.Context, fn func(tx T) error) error,
	unlease func(ctx context.Context, tx T) (held bool, err error),
	args river.JobArgs, err error, retryAt, now time.Time) error {
	at := retryAt
	var snooze *rivertype.JobSnoozeError
	if errors.As(err, &snooze) {
		at = now.Add(snooze.Duration)
	}
	back, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReturnTimeout)
	defer cancel()
	return transact(back, func(tx T) error {
		held, err := unlease(back, tx)
		if err != nil || !held {
			return err
		}
		return tx.Enqueue(back, args, &river.InsertOpts{ScheduledAt: at})
	})
}

// Workers run handed-off jobs: a pool per River queue, each as large as
// the queue's River workers, so that a slow webhook endpoint never takes a
// payment's slot.
type Workers struct {
	kinds    map[string]kind
	rescuers []Rescuer
	pools    map[string]*pool
	// OnFinished is told of every run (for the metrics): "completed",
	// "handed_back" or "panicked".
	OnFinished func(kind, outcome string)
	// Log records a run that panicked (its lease lapses, and the rescue
	// queues it) and what the rescue found.
	Log *slog.Logger

	stopRescue context.CancelFunc
	rescuing   sync.WaitGroup
}

// NewWorkers returns workers with no kinds.
func NewWorkers() *Workers { return &Workers{kinds: map[string]kind{}} }

// Start makes a pool per queue, of the given size, and starts rescuing
// lapsed leases every RescueEvery; window is how far the leases run
// (River's rescue window); now is River's clock.
func (w *Workers) Start(sizes map[string]int, window time.Duration, now func() time.Time) {
	w.pools = map[string]*pool{}
	for q, n := range sizes {
		ctx, cancel := context.WithCancel(context.Background())
		w.pools[q] = &pool{w: w, slots: make(chan struct{}, n), window: window, now: now, ctx: ctx, cancel: cancel}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.stopRescue = cancel
	w.rescuing.Add(1)
	go func() {
		defer w.rescuing.Done()
		t := time.NewTicker(RescueEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := w.Rescue(ctx, now()); err != nil && ctx.Err() == nil && w.Log != nil {
					w.Log.Warn("rescuing lapsed handoff leases failed: the next rescue tries again", "error", err)
				}
			}
		}
	}()
}

// Rescue runs every kind's rescue of the leases lapsed before before and
// returns how many jobs they queued for River; one kind failing does not
// keep the others from theirs.
func (w *Workers) Rescue(ctx context.Context, before time.Time) (int, error) {
	n := 0
	var errs []error
	for _, r := range w.rescuers {
		m, err := r(ctx, before)
		n += m
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return n, err
	}
	if n > 0 && w.Log != nil {
		w.Log.Warn("queued the jobs of handed-off runs whose process stopped before their outcome", "jobs", n)
	}
	return n, nil
}

// Stop takes no more jobs and waits for the runs under way until ctx ends,
// then cancels them (their leases lapse, and another process's rescue, or
// this one's next start, queues them) and waits for them to
// return.
func (w *Workers) Stop(ctx context.Context) error {
	if w == nil {
		return nil
	}
	if w.stopRescue != nil {
		w.stopRescue()
		w.rescuing.Wait()
	}
	for _, p := range w.pools {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
	}
	done := make(chan struct{})
	go func() {
		for _, p := range w.pools {
			p.wg.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, p := range w.pools {
		p.cancel()
	}
	// Cancelled runs return at once; do not wait forever for one that
	// does not.
	select {
	case <-done:
	case <-time.After(stopGrace):
	}
	return ctx.Err()
}

// stopGrace is how long Stop waits for cancelled runs.
const stopGrace = 5 * time.Second

// reserve takes a slot of the pool of args' queue, or returns nil: no
// workers, no run for the kind, stopped, or full.
func (w *Workers) reserve(args river.JobArgs) *pool {
	if w == nil {
		return nil
	}
	queue := river.QueueDefault
	if o, ok := args.(river.JobArgsWithInsertOpts); ok && o.InsertOpts().Queue != "" {
		queue = o.InsertOpts().Queue
	}
	p := w.pools[queue]
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	select {
	case p.slots <- struct{}{}:
		p.wg.Add(1)
		return p
	default:
		return nil
	}
}

type pool struct {
	w      *Workers
	slots  chan struct{}
	window time.Duration
	now    func() time.Time
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup // the slots taken
}

func (p *pool) release() {
	<-p.slots
	p.wg.Done()
}

func (p *pool) run(kind string, fn func(ctx context.Context) error, due time.Time) {
	go func() {
		outcome := "completed"
		defer func() {
			if v := recover(); v != nil {
				// River recovers a worker's panic; so does a run here,
				// leaving the job to its lease's rescue.
				outcome = "panicked"
				if p.w.Log != nil {
					p.w.Log.Error("a handed-off job panicked: River runs it once its lease lapses",
						"kind", kind, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				}
			}
			p.release() // before the report: a slot is free once its run is told finished
			if p.w.OnFinished != nil {
				p.w.OnFinished(kind, outcome)
			}
		}()
		ctx, cancel := context.WithTimeout(p.ctx, due.Sub(p.now())-Margin(p.window))
		defer cancel()
		if err := fn(ctx); err != nil {
			outcome = "handed_back"
		}
	}()
}

// Margin is how long before its lease lapses a run's context ends: a
// tenth of the window, at least a second. The lease is written by the
// queuing process's clock and judged by the rescuing process's, so the
// processes' clocks must agree within it (NTP does: docs/operations.md,
// "Jobs run where they are queued (handoff)").
func Margin(window time.Duration) time.Duration {
	return max(time.Second, window/10)
}

// ReturnTimeout bounds handing a run back (Return's transaction), which
// may come after the run's own context has ended (a shutdown).
const ReturnTimeout = 3 * time.Second
