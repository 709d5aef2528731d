package operation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/provider"
)

// Reader is what a run reads before its call, in one read-only
// transaction (Engine.Read) or in the transaction that queues the
// operation (a handed-off run): the store's Queries and its transactions
// offer it. A resource's handler reads through the same reader, with the
// reads it declares (its Handler's R).
type Reader interface {
	// FindOperationToRun reads, in one round trip, the operation, its
	// sealed secret (nil once deleted) and the clock offset of the key that
	// owns its resource.
	FindOperationToRun(ctx context.Context, id string) (*Operation, []byte, time.Duration, error)
}

// Tx is what the engine writes in the transaction that records an outcome
// or rescues leases. The transaction a Handler receives is the same value,
// of the handler's own richer type (its Handler's T).
type Tx interface {
	// LockOperation reads an operation and holds it until the transaction
	// ends: two runs recording an outcome for it take turns.
	LockOperation(ctx context.Context, id string) (*Operation, error)
	UpdateOperation(ctx context.Context, op *Operation) error
	DeleteOperationSecret(ctx context.Context, operationID string) error
	// ResourceClockOffset is the clock offset of the key that owns a
	// resource (docs/design/decisions.md section 14).
	ResourceClockOffset(ctx context.Context, resource, id string) (time.Duration, error)
	LeaseTx
}

// QueueTx is what queueing an operation needs, in the caller's
// transaction; it hands the run to its own process when it can
// (internal/handoff).
type QueueTx interface {
	handoff.Tx
	CreateOperation(ctx context.Context, op *Operation, sealed []byte) error
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Outcome is a provider's answer to an operation, in a resource's own type.
type Outcome interface {
	// Pending reports an accepted call without an outcome yet: the engine
	// asks again after PollEvery.
	Pending() bool
	// Result is the short record kept on the operation.
	Result() string
}

// Call is one loaded operation, ready to go to its provider.
type Call interface {
	// Send makes the call; secret is the sealed secret opened (nil when the
	// operation has none). The provider dedups on the operation id.
	Send(ctx context.Context, secret []byte) (Outcome, error)
	// Inquire asks the provider for the outcome of the operation, by id.
	Inquire(ctx context.Context) (Outcome, error)
	// ResourceKind names the resource's kind (a payment's: direct, hosted,
	// recurring …; empty for a resource without kinds), which CrashAt may
	// narrow its point to.
	ResourceKind() string
}

// Handler is what a resource implements to have its operations run. R is
// the reader its Load reads through, T the transaction its outcomes are
// recorded in: the composition root instantiates both with the store's
// types, so a read or a write the store lacks does not compile.
type Handler[R Reader, T Tx] interface {
	// Load reads what the operation's call needs, through r: the engine's
	// read-only transaction, or the transaction that queues the operation.
	Load(ctx context.Context, r R, op *Operation) (Call, error)
	// Apply records an outcome on the resource in tx. op is as read in tx
	// (it may be done already when AcceptsLate allowed it).
	Apply(ctx context.Context, tx T, op *Operation, out Outcome) error
	// Unreadable records, in tx, that the provider's answer could not be
	// read (manual_review): the engine keeps asking.
	Unreadable(ctx context.Context, tx T, op *Operation) error
	// Failed is the outcome Paygate decides when the provider cannot be
	// used (code "provider_unavailable" or "processing_error").
	Failed(op *Operation, code string) Outcome
	// AcceptsLate reports whether an outcome may still be applied once op
	// is done (a payment's 3DS step finishes after its pay operation).
	AcceptsLate(op *Operation) bool
	// Reroute, in tx, moves the resource to another acquirer after op's
	// call surely never reached its own (err is provider.Unsent), when the
	// resource allows it (docs/design/decisions.md section 17): true when
	// it queued the next attempt, and the engine then closes op.
	Reroute(ctx context.Context, tx T, op *Operation, err error) (bool, error)
}

// Engine runs operations (docs/payments.md, "Never charged twice"): the
// state change and its job commit together; each call carries the
// operation id; a transient error is retried with backoff; an unknown
// outcome is resolved by asking, never by a new call; an unreadable answer
// is recorded by the handler (manual_review) and the engine keeps asking.
type Engine[R Reader, T Tx] struct {
	Transact func(ctx context.Context, fn func(T) error) error
	// Read runs the reads that come before a provider call (the operation,
	// its key's clock, the handler's Load, the sealed secret) in one
	// read-only transaction, whose reader it hands fn: on PostgreSQL one
	// commit instead of one per read.
	Read func(ctx context.Context, fn func(r R) error) error
	// ReaderOf is the reader of a transaction that queues an operation: a
	// handed-off run reads in it (internal/handoff).
	ReaderOf func(tx T) R
	Sealer   Sealer
	Now      func() time.Time
	Log      *slog.Logger
	// PollEvery is how long a pending outcome waits before it is asked for again.
	PollEvery time.Duration
	// CrashAt kills the process at a point of an operation, for the crash
	// tests only (PAYGATE_CRASH_AT): "before_call" (after the request's
	// commit, before the provider call) or "after_call" (the provider has
	// answered, nothing recorded yet), optionally narrowed to the calls
	// whose resource is of one kind, "before_call:recurring" (a Call that
	// names its kind: a payment's kind). Empty in normal operation.
	CrashAt string
	// OpTimeout bounds one run (the provider call and its bookkeeping); it
	// must exceed the provider call timeout. Zero: 1 minute.
	OpTimeout time.Duration
	// Steps, when set, bounds how many operations do their own work at
	// once (reads, opening sealed data, recording the outcome): one that
	// waits for its provider holds no step. Twenty jobs fetched together
	// would otherwise crowd the requests out of the CPU and, on SQLite, out
	// of the group commits. serve gives it one step per core.
	Steps chan struct{}
	// KeyClocks: the handlers' decisions and times read the clock of the
	// key that owns the operation's resource (docs/design/decisions.md
	// section 14), read through the reader or the transaction at hand.
	// False: the process's clock.
	KeyClocks bool

	handlers map[string]Handler[R, T]
}

// Options are an engine's tunables; the zero value is a working engine.
type Options struct {
	PollEvery time.Duration // Engine.PollEvery
	CrashAt   string        // Engine.CrashAt
	OpTimeout time.Duration // Engine.OpTimeout
	// Steps bounds the operations doing their own work at once
	// (Engine.Steps); 0: no bound.
	Steps int
	// KeyClocks: decisions read the clock of the resource's key
	// (Engine.KeyClocks).
	KeyClocks bool
}

// NewEngine builds the operation engine; each dependency is an argument
// (docs/architecture.md, "The composition root"). Handlers are registered
// with Handle before the engine runs anything.
func NewEngine[R Reader, T Tx](transact func(ctx context.Context, fn func(T) error) error,
	read func(ctx context.Context, fn func(r R) error) error, readerOf func(tx T) R, sealer Sealer, now func() time.Time,
	log *slog.Logger, o Options) *Engine[R, T] {
	e := &Engine[R, T]{Transact: transact, Read: read, ReaderOf: readerOf, Sealer: sealer, Now: now, Log: log,
		PollEvery: o.PollEvery, CrashAt: o.CrashAt, OpTimeout: o.OpTimeout, KeyClocks: o.KeyClocks}
	if o.Steps > 0 {
		e.Steps = make(chan struct{}, o.Steps)
	}
	return e
}

// withKeyClock returns ctx carrying the clock of op's key, read in tx
// (on SQLite a read beside an open write transaction would wait for it),
// unless ctx carries one already.
func (e *Engine[R, T]) withKeyClock(ctx context.Context, tx T, op *Operation) (context.Context, error) {
	if !e.KeyClocks || clock.Known(ctx) {
		return ctx, nil
	}
	off, err := tx.ResourceClockOffset(ctx, op.Resource, op.ResourceID)
	if err != nil {
		return ctx, err
	}
	return clock.With(ctx, off), nil
}

// Handle registers the handler of a resource's operations.
func (e *Engine[R, T]) Handle(resource string, h Handler[R, T]) {
	if e.handlers == nil {
		e.handlers = map[string]Handler[R, T]{}
	}
	e.handlers[resource] = h
}

func (e *Engine[R, T]) handler(op *Operation) (Handler[R, T], error) {
	h, ok := e.handlers[op.Resource]
	if !ok {
		return nil, fmt.Errorf("operation %s: no handler for resource %q", op.ID, op.Resource)
	}
	return h, nil
}

// Queue stores a new pending operation with its secret sealed (nil: none)
// and queues its job, in the caller's transaction: the operation exists
// exactly when the change that asked for it commits. S is the resource's
// own versioned, JSON-tagged secret type.
func Queue[S any](ctx context.Context, tx QueueTx, s Sealer, op *Operation, secret *S) error {
	op.State = Pending
	var sealed []byte
	if secret != nil {
		var err error
		if sealed, err = Seal(s, op.ID, secret); err != nil {
			return fmt.Errorf("seal operation data: %w", err)
		}
	}
	// A process that runs jobs runs the operation itself once the
	// transaction commits, the row holding the run's lease; otherwise
	// River's job runs it (internal/handoff, runHandedOff).
	args := jobArgs(op)
	slot := handoff.Reserve[*queued](tx, args)
	defer slot.Release()
	op.RescueAt = slot.Lease()
	if err := tx.CreateOperation(ctx, op, sealed); err != nil {
		return err
	}
	if slot == nil {
		return tx.Enqueue(ctx, args, nil)
	}
	slot.Hand(ctx, &queued{op: *op, sealed: sealed})
	return nil
}

// QueueSecret stores a new pending operation with an opened secret
// (plaintext, as another operation's was: a payment's next attempt) sealed
// for it, and queues its job with River, in the caller's transaction.
func QueueSecret(ctx context.Context, tx QueueTx, s Sealer, op *Operation, plaintext []byte) error {
	op.State = Pending
	sealed, err := s.Seal(plaintext, AAD(op.ID))
	if err != nil {
		return fmt.Errorf("seal operation data: %w", err)
	}
	if err := tx.CreateOperation(ctx, op, sealed); err != nil {
		return err
	}
	return tx.Enqueue(ctx, jobArgs(op), nil)
}

// queued is what Queue hands its run's Prepare (runner.prepare): the
// operation and its sealed secret as written.
type queued struct {
	op     Operation
	sealed []byte
}

// Enqueue queues again the job that runs op, an operation already stored
// and run before, in the caller's transaction: River runs it.
func Enqueue(ctx context.Context, tx handoff.Enqueuer, op *Operation) error {
	return tx.Enqueue(ctx, againArgs(op.ID), nil)
}

// jobArgs is the job that runs op.
func jobArgs(op *Operation) RunArgs { return RunArgs{OperationID: op.ID} }

// Step takes one of Steps (waiting for it) and returns its release, which
// may be called more than once. Jobs of a resource that do their own work
// beside operations (a payment's poll) take steps too.
func (e *Engine[R, T]) Step(ctx context.Context) (release func(), err error) {
	if e.Steps == nil {
		return func() {}, nil
	}
	select {
	case e.Steps <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-e.Steps }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// crash kills the process without any cleanup, as kill -9 does, at the
// point CrashAt names, when the call is of the kind it names (if any).
func (e *Engine[R, T]) crash(point string, call Call) {
	at, kind, narrowed := strings.Cut(e.CrashAt, ":")
	if at != point {
		return
	}
	if narrowed && call.ResourceKind() != kind {
		return
	}
	e.Log.Warn("crashing on purpose (PAYGATE_CRASH_AT)", "point", point, "kind", kind)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never returns
}

// Backoff is the wait before attempt (from 1): 1 s, 2 s, 4 s … up to 30
// seconds, so that an operation waiting for an acquirer that does not
// answer lands soon after it is back (docs/design/decisions.md section
// 17).
func Backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 5 {
		return MaxBackoff
	}
	return min(time.Duration(1<<(attempt-1))*time.Second, MaxBackoff)
}

// MaxBackoff is the longest wait between two tries of an operation.
const MaxBackoff = 30 * time.Second

// Run runs one attempt of an operation: its attempt-th run. It returns nil
// when the outcome is recorded, a river.JobSnooze to be asked again later,
// or an error for River to retry with backoff.
//
// Only the first run may move the resource to another acquirer after a
// call that never left (Handler.Reroute): a later run's "unsent" says
// nothing of an earlier run's call, which may have reached the acquirer
// before its process died or its answer was lost (docs/design/decisions.md
// section 17). The first run is over before any other starts: a handed-off
// run's context ends before its lease lapses (handoff.Margin) and River's
// attempt before River rescues it (serve: --job-timeout <= --rescue-after),
// so a run that moves the resource is the only one there has been. (A
// subscription's charge is run by a clock advance beside its job, as a
// later run; it never moves.)
func (e *Engine[R, T]) Run(ctx context.Context, opID string, attempt, maxAttempts int) error {
	release, err := e.Step(ctx)
	if err != nil {
		return err
	}
	defer func() { release() }()
	var l *loaded[R, T]
	if err := e.Read(ctx, func(r R) error {
		var err error
		l, err = e.load(ctx, r, opID)
		return err
	}); err != nil {
		return err
	}
	return e.runLoaded(ctx, l, attempt, maxAttempts, release)
}

// loaded is what a run reads before its call.
type loaded[R Reader, T Tx] struct {
	op     *Operation
	h      Handler[R, T]
	call   Call
	sealed []byte
	// known: the run goes by a key's clock, offset by clock.
	known bool
	clock time.Duration
}

// load reads what a run needs before its call through r: the engine's
// read transaction, or the transaction that queues the operation when it
// is handed off (internal/handoff). op is done: nothing else is read.
func (e *Engine[R, T]) load(ctx context.Context, r R, opID string) (*loaded[R, T], error) {
	l := &loaded[R, T]{known: clock.Known(ctx), clock: clock.Offset(ctx)}
	var (
		off time.Duration
		err error
	)
	if l.op, l.sealed, off, err = r.FindOperationToRun(ctx, opID); err != nil || l.op.State == Done {
		return l, err
	}
	if e.KeyClocks && !l.known {
		l.known, l.clock = true, off
	}
	return e.loadCall(ctx, r, l)
}

// loadQueued is load for an operation being queued in r, from what the
// queuing transaction holds already: the operation and its sealed secret
// as written, and the key's clock that ctx carries (the request's). Only
// the handler reads (its resource).
func (e *Engine[R, T]) loadQueued(ctx context.Context, r R, q *queued) (*loaded[R, T], error) {
	op := q.op
	l := &loaded[R, T]{op: &op, sealed: q.sealed, known: clock.Known(ctx), clock: clock.Offset(ctx)}
	return e.loadCall(ctx, r, l)
}

// loadCall has l's handler load the call of l's operation through r.
func (e *Engine[R, T]) loadCall(ctx context.Context, r R, l *loaded[R, T]) (*loaded[R, T], error) {
	var err error
	if l.h, err = e.handler(l.op); err != nil {
		return nil, err
	}
	if l.known {
		ctx = clock.With(ctx, l.clock)
	}
	l.call, err = l.h.Load(ctx, r, l.op)
	return l, err
}

// runLoaded makes the call of a loaded operation and records its outcome;
// release gives back the step the caller holds (the provider's time is not
// ours).
func (e *Engine[R, T]) runLoaded(ctx context.Context, l *loaded[R, T], attempt, maxAttempts int, release func()) error {
	if l.op.State == Done {
		return nil
	}
	if l.known {
		ctx = clock.With(ctx, l.clock)
	}
	op, h, call := l.op, l.h, l.call
	e.crash("before_call", call)
	release()
	var (
		out Outcome
		err error
	)
	if op.State == Inquiring {
		out, err = call.Inquire(ctx)
		if provider.KindOf(err) == provider.NotFound {
			// The provider never saw the operation: sending it is safe.
			out, err = e.send(ctx, call, op, l.sealed)
		}
	} else {
		out, err = e.send(ctx, call, op, l.sealed)
	}
	release, stepErr := e.Step(ctx)
	if stepErr != nil {
		release = func() {}
		if err == nil {
			// Answered, then stopped before recording: the retry sends the
			// same operation id, and the provider answers what it did.
			return stepErr
		}
	}
	defer release()
	e.crash("after_call", call)
	if err != nil {
		return e.failed(ctx, h, op, err, attempt, maxAttempts)
	}
	return e.Record(ctx, op.ID, out)
}

// send opens the operation's sealed secret (nil: none) and sends the call.
func (e *Engine[R, T]) send(ctx context.Context, call Call, op *Operation, sealed []byte) (Outcome, error) {
	var secret []byte
	if sealed != nil {
		var err error
		if secret, err = e.Sealer.Open(sealed, AAD(op.ID)); err != nil {
			return nil, fmt.Errorf("open operation data: %w", err)
		}
	}
	return call.Send(ctx, secret)
}

// failed decides what a provider error means for the operation.
func (e *Engine[R, T]) failed(ctx context.Context, h Handler[R, T], op *Operation, err error, attempt, maxAttempts int) error {
	kind := provider.KindOf(err)
	e.Log.Warn("provider call failed", "operation_id", op.ID, "resource", op.Resource, "kind", op.Kind,
		"error_kind", string(kind), "attempt", attempt)
	switch kind {
	case provider.Transient:
		if provider.IsUnsent(err) && attempt == 1 {
			rerouted, rerr := e.reroute(ctx, h, op, err)
			if rerr != nil || rerouted {
				return rerr
			}
		}
		if attempt < maxAttempts {
			return err // River retries with backoff; resending this operation id is safe
		}
		return e.Record(ctx, op.ID, h.Failed(op, "provider_unavailable"))
	case provider.RateLimited:
		var pe *provider.Error
		if errors.As(err, &pe) && pe.RetryAfter > 0 {
			return river.JobSnooze(pe.RetryAfter)
		}
		return river.JobSnooze(Backoff(attempt))
	case provider.OutcomeUnknown, provider.Unreadable:
		// From now on only ask; an unreadable answer is recorded by the
		// handler too (manual_review).
		if err := e.Transact(ctx, func(tx T) error {
			cur, err := tx.LockOperation(ctx, op.ID)
			if err != nil || cur.State == Done {
				return err
			}
			cur.State, cur.Result, cur.UpdatedAt = Inquiring, string(kind), e.Now().UTC()
			if err := tx.UpdateOperation(ctx, cur); err != nil {
				return err
			}
			if kind != provider.Unreadable {
				return nil
			}
			return h.Unreadable(ctx, tx, cur)
		}); err != nil {
			return err
		}
		// Snoozing does not use up attempts: the engine keeps asking.
		return river.JobSnooze(Backoff(attempt))
	}
	// Invalid, Unsupported, NotFound on a send: retrying will not help.
	return e.Record(ctx, op.ID, h.Failed(op, "processing_error"))
}

// reroute lets h move op's resource to another acquirer, in one
// transaction with op closed (Result "rerouted") and its secret deleted.
func (e *Engine[R, T]) reroute(ctx context.Context, h Handler[R, T], op *Operation, cause error) (bool, error) {
	rerouted := false
	err := e.Transact(ctx, func(tx T) error {
		cur, err := tx.LockOperation(ctx, op.ID)
		// Inquiring: an earlier call's outcome is unknown (a timeout, an
		// unreadable answer, a call cut by a crash), so the failure of this
		// run's inquiry says nothing of it: the acquirer may have moved the
		// money, and only its answer may end the attempt
		// (docs/design/decisions.md section 17: never after an unknown
		// outcome).
		if err != nil || cur.State == Done || cur.State == Inquiring {
			return err
		}
		if ctx, err = e.withKeyClock(ctx, tx, cur); err != nil {
			return err
		}
		ok, err := h.Reroute(ctx, tx, cur, cause)
		if err != nil || !ok {
			return err
		}
		cur.State, cur.Result, cur.UpdatedAt = Done, "rerouted", e.Now().UTC().Truncate(time.Microsecond)
		if err := tx.UpdateOperation(ctx, cur); err != nil {
			return err
		}
		rerouted = true
		return tx.DeleteOperationSecret(ctx, cur.ID)
	})
	return rerouted, err
}

// Record records an outcome for an operation in one transaction: the
// handler's change to its resource, the operation done, and its secret
// deleted (the provider has seen it: docs/design/decisions.md section 8).
// A pending outcome marks the operation inquiring and answers a
// river.JobSnooze of PollEvery. A resource's own jobs (a payment's poll)
// record outcomes through it too.
func (e *Engine[R, T]) Record(ctx context.Context, opID string, out Outcome) error {
	var snooze time.Duration
	err := e.Transact(ctx, func(tx T) error {
		// Locked: a second run recording at the same time (River's rescue
		// of a stuck job, or the job rescued from a handed-off run's
		// lease) waits, then finds this outcome.
		op, err := tx.LockOperation(ctx, opID)
		if err != nil {
			return err
		}
		h, err := e.handler(op)
		if err != nil {
			return err
		}
		if op.State == Done && !h.AcceptsLate(op) {
			return nil // recorded already
		}
		if ctx, err = e.withKeyClock(ctx, tx, op); err != nil {
			return err
		}
		now := e.Now().UTC().Truncate(time.Microsecond)
		if out.Pending() {
			op.State, op.Result, op.UpdatedAt = Inquiring, out.Result(), now
			snooze = e.PollEvery
			return tx.UpdateOperation(ctx, op)
		}
		if err := h.Apply(ctx, tx, op, out); err != nil {
			return err
		}
		op.State, op.Result, op.UpdatedAt = Done, out.Result(), now
		if err := tx.UpdateOperation(ctx, op); err != nil {
			return err
		}
		// Done: a handed-off run's lease is cleared with it (UpdateOperation).
		return tx.DeleteOperationSecret(ctx, op.ID)
	})
	if err == nil && snooze > 0 {
		return river.JobSnooze(snooze)
	}
	return err // a lost compare-and-set too: River runs the job again; the provider answers the same
}
