// Package handoff runs a job in the process whose transaction queued it,
// as soon as that transaction commits and with what the transaction already
// held, instead of through River's fetch. A payment's provider call and its
// first webhook attempt then cost no fetch, no completion and no read of
// their own: on PostgreSQL, two commits fewer per payment
// (docs/operations.md, "Background jobs").
//
// River keeps the guarantee. The job is queued in the same transaction as
// ever, as a safety net scheduled one window later (the process's
// --rescue-after: the time after which River takes a running job for
// lost); the run here deletes the net in the transaction that records its
// outcome (Finish). A process that dies before that leaves the job to
// River, as it leaves a dead worker's running job, and a run that ends
// without its outcome hands the job back to River at once (Return).
package handoff

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Tag marks a safety net among River's jobs: on SQLite, where one process
// owns the data, the next start runs the nets a killed process left at
// once (store.RequeueInterruptedJobs).
const Tag = "handoff"

// Job is a job handed off: its safety net's River id, its arguments, and
// what the queuing transaction held for the run (nil: nothing).
type Job struct {
	ID   int64
	Args river.JobArgs
	Data any
	// Due is when the safety net falls due (River's clock): the run's
	// context ends a second before, so that River never runs the job
	// while the run still may.
	Due time.Time
}

// Prepare reads, in the transaction that queues a job, what its run will
// need (through tx), so that the run reads nothing before its work: on
// PostgreSQL one transaction fewer. An error leaves the job to River.
type Prepare func(ctx context.Context, tx any, args river.JobArgs) (data any, err error)

// Func runs a handed-off job of one kind. It must record the outcome in a
// transaction that calls Finish, or call Return, or leave the net to River;
// a nil error counts as done, an error as handed back (for the metrics).
type Func func(ctx context.Context, j Job) error

// Tx is a transaction that can hand jobs off (the store's).
type Tx interface {
	// EnqueueJob queues a River job and returns its id; fresh is false
	// when a unique job already stood for it (no new job).
	EnqueueJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (id int64, fresh bool, err error)
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

// Enqueue queues args in tx. When tx's process runs jobs and has a slot
// free on the job's queue, the job is queued as a safety net one window
// later and run here as soon as tx commits, given data; otherwise it is
// queued for River to run at once.
func Enqueue(ctx context.Context, tx Enqueuer, args river.JobArgs, data any) error {
	ht, ok := tx.(Tx)
	if !ok {
		return tx.Enqueue(ctx, args, nil)
	}
	p := ht.Handoff().reserve(args)
	if p == nil {
		return tx.Enqueue(ctx, args, nil)
	}
	// The slot is the transaction's once its fate will be told; until
	// then (an error, a panic) it is given back here.
	owned := false
	defer func() {
		if !owned {
			p.release()
		}
	}()
	if prep := p.w.prepare[args.Kind()]; prep != nil && data == nil {
		var err error
		if data, err = prep(ctx, tx, args); err != nil {
			return tx.Enqueue(ctx, args, nil)
		}
	}
	due := p.now().Add(p.window)
	id, fresh, err := ht.EnqueueJob(ctx, args, &river.InsertOpts{ScheduledAt: due, Tags: []string{Tag}})
	if err != nil || !fresh {
		return err // !fresh: a job already stood for it, and that one runs
	}
	owned = true
	ht.AfterCommit(func(committed bool) {
		if !committed {
			p.release()
			return
		}
		p.run(Job{ID: id, Args: args, Data: data, Due: due})
	})
	return nil
}

type runKey struct{}

type run struct {
	id  int64
	key string
}

// Running returns ctx for the run of job j on behalf of key (the record the
// job completes: an operation's id, a delivery's): Finish and Return act
// on its net only for that key.
func Running(ctx context.Context, j Job, key string) context.Context {
	return context.WithValue(ctx, runKey{}, run{id: j.ID, key: key})
}

// Deleter deletes a River job in a transaction; a job gone or running is
// not an error.
type Deleter interface {
	DeleteJob(ctx context.Context, id int64) error
}

// Finish deletes, in tx, the safety net of the run of key that ctx belongs
// to: tx records its outcome, so the job must not run again. Outside such
// a run it does nothing.
func Finish(ctx context.Context, tx any, key string) error {
	r, ok := ctx.Value(runKey{}).(run)
	d, can := tx.(Deleter)
	if !ok || r.key != key || !can {
		return nil
	}
	return d.DeleteJob(ctx, r.id)
}

// HandBack hands a run that ended with err (not nil) back to River, as
// River would take the job's first attempt ending so: due at retryAt, or
// after the snooze err asks for (from now). transact runs Return in a
// transaction of the run's own kind; it gets ReturnTimeout even when ctx
// has ended (a shutdown, the run's deadline). It returns what handing back
// failed with: the job then runs when its net falls due.
func HandBack(ctx context.Context, transact func(ctx context.Context, fn func(tx any) error) error,
	key string, args river.JobArgs, err error, retryAt, now time.Time) error {
	at := retryAt
	var snooze *rivertype.JobSnoozeError
	if errors.As(err, &snooze) {
		at = now.Add(snooze.Duration)
	}
	back, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReturnTimeout)
	defer cancel()
	return transact(back, func(tx any) error { return Return(back, tx, key, args, at) })
}

// Return hands the run of key that ctx belongs to back to River: in tx, its
// safety net is replaced by the job River runs at at. Outside such a run it
// does nothing.
func Return(ctx context.Context, tx any, key string, args river.JobArgs, at time.Time) error {
	r, ok := ctx.Value(runKey{}).(run)
	if !ok || r.key != key {
		return nil
	}
	t, can := tx.(interface {
		Deleter
		Enqueuer
	})
	if !can {
		return errors.New("handoff: the transaction cannot requeue a job")
	}
	if err := t.DeleteJob(ctx, r.id); err != nil {
		return err
	}
	return t.Enqueue(ctx, args, &river.InsertOpts{ScheduledAt: at})
}

// Workers run handed-off jobs: a pool per River queue, each as large as
// the queue's River workers, so that a slow webhook endpoint never takes a
// payment's slot.
type Workers struct {
	funcs   map[string]Func
	prepare map[string]Prepare
	pools   map[string]*pool
	// OnFinished is told of every run (for the metrics): "completed",
	// "handed_back" or "panicked".
	OnFinished func(kind, outcome string)
	// Log records a run that panicked (its net stays for River).
	Log *slog.Logger
}

// NewWorkers returns workers with no kinds.
func NewWorkers() *Workers { return &Workers{funcs: map[string]Func{}, prepare: map[string]Prepare{}} }

// Add registers the run of a job kind, and optionally (not nil) what the
// queuing transaction reads for it.
func (w *Workers) Add(kind string, fn Func, prep Prepare) {
	w.funcs[kind] = fn
	if prep != nil {
		w.prepare[kind] = prep
	}
}

// Start makes a pool per queue, of the given size; window is how far the
// safety nets are scheduled (River's rescue window); now is River's clock.
func (w *Workers) Start(sizes map[string]int, window time.Duration, now func() time.Time) {
	w.pools = map[string]*pool{}
	for q, n := range sizes {
		ctx, cancel := context.WithCancel(context.Background())
		w.pools[q] = &pool{w: w, slots: make(chan struct{}, n), window: window, now: now, ctx: ctx, cancel: cancel}
	}
}

// Stop takes no more jobs and waits for the runs under way until ctx ends,
// then cancels them (their nets stay for River) and waits for them to
// return.
func (w *Workers) Stop(ctx context.Context) error {
	if w == nil {
		return nil
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
	if w == nil || w.funcs[args.Kind()] == nil {
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

func (p *pool) run(j Job) {
	go func() {
		defer p.release()
		kind := j.Args.Kind()
		outcome := "completed"
		defer func() {
			if v := recover(); v != nil {
				// River recovers a worker's panic; so does a run here,
				// leaving the job to its net.
				outcome = "panicked"
				if p.w.Log != nil {
					p.w.Log.Error("a handed-off job panicked: River runs it when its safety net falls due",
						"kind", kind, "job_id", j.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				}
			}
			if p.w.OnFinished != nil {
				p.w.OnFinished(kind, outcome)
			}
		}()
		ctx, cancel := context.WithTimeout(p.ctx, j.Due.Sub(p.now())-time.Second)
		defer cancel()
		if err := p.w.funcs[kind](ctx, j); err != nil {
			outcome = "handed_back"
		}
	}()
}

// ReturnTimeout bounds handing a run back (Return's transaction), which
// may come after the run's own context has ended (a shutdown).
const ReturnTimeout = 3 * time.Second
