package operation_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
)

// outcome is the fake resource's outcome.
type outcome struct{ status string }

func (o outcome) Pending() bool  { return o.status == "pending" }
func (o outcome) Result() string { return o.status }

// answer is one scripted answer of the fake provider.
type answer struct {
	status string // an outcome, when err is nil
	err    error
}

// thing is a fake resource and its provider: each call takes the next
// scripted answer and is recorded.
type thing struct {
	mu         sync.Mutex
	answers    []answer
	calls      []string // "send:<secret>" or "inquire"
	applied    []string
	unreadable int
	late       bool
	// reroute: the resource moves to another acquirer when asked
	// (Reroute), counted in rerouted.
	reroute  bool
	rerouted int
	// gate, when set, holds every call until it is closed; arrived, when
	// set, hears each call reach it.
	gate    chan struct{}
	arrived chan struct{}
}

func (h *thing) next(call string) (operation.Outcome, error) {
	if h.arrived != nil {
		h.arrived <- struct{}{}
	}
	if h.gate != nil {
		<-h.gate
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, call)
	if len(h.answers) == 0 {
		return nil, errors.New("no scripted answer left")
	}
	a := h.answers[0]
	h.answers = h.answers[1:]
	if a.err != nil {
		return nil, a.err
	}
	return outcome{a.status}, nil
}

func (h *thing) Load(context.Context, store.Queries, *operation.Operation) (operation.Call, error) {
	return (*thingCall)(h), nil
}

func (h *thing) Apply(_ context.Context, _ *store.Tx, _ *operation.Operation, out operation.Outcome) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applied = append(h.applied, out.Result())
	return nil
}

func (h *thing) Unreadable(context.Context, *store.Tx, *operation.Operation) error {
	h.unreadable++
	return nil
}

func (h *thing) Failed(_ *operation.Operation, code string) operation.Outcome {
	return outcome{"failed:" + code}
}

func (h *thing) AcceptsLate(*operation.Operation) bool { return h.late }
func (h *thing) Reroute(context.Context, *store.Tx, *operation.Operation, error) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reroute {
		h.rerouted++
	}
	return h.reroute, nil
}

type thingCall thing

func (c *thingCall) Send(_ context.Context, secret []byte) (operation.Outcome, error) {
	return (*thing)(c).next("send:" + string(secret))
}

func (c *thingCall) Inquire(context.Context) (operation.Outcome, error) {
	return (*thing)(c).next("inquire")
}

func (c *thingCall) ResourceKind() string { return "" }

// rig is an engine on a real database with the fake resource registered.
type rig struct {
	t      *testing.T
	store  *store.Store
	engine *operation.Engine[store.Queries, *store.Tx]
	thing  *thing
}

const pollEvery = 3 * time.Second

func newRig(t *testing.T, db storetest.Database) *rig {
	r, workers := newEngine(t, db)
	_, err := jobs.NewClient(r.store, workers, time.Now, jobs.Options{Log: r.engine.Log})
	require.NoError(t, err)
	return r
}

// newEngine is a rig without its River client, and the River workers to
// make one with.
func newEngine(t *testing.T, db storetest.Database) (*rig, *river.Workers) {
	s := storetest.Open(t, db)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	e := operation.NewEngine(
		func(ctx context.Context, fn func(*store.Tx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
		func(ctx context.Context, fn func(store.Queries) error) error { return s.ReadOnly(ctx, fn) },
		func(tx *store.Tx) store.Queries { return tx.Queries },
		vault.New(), time.Now, log, operation.Options{PollEvery: pollEvery})
	th := &thing{}
	e.Handle("thing", th)
	workers := river.NewWorkers()
	operation.AddWorkers(workers, e)
	return &rig{t: t, store: s, engine: e, thing: th}, workers
}

// queue stores an operation of the fake resource with a secret, in state.
func (r *rig) queue(state operation.State) *operation.Operation {
	r.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	op := &operation.Operation{ID: uuid.NewString(), Resource: "thing", ResourceID: uuid.NewString(), Kind: "poke",
		CreatedAt: now, UpdatedAt: now}
	require.NoError(r.t, r.store.InTx(ctx, func(tx *store.Tx) error {
		return operation.Queue(ctx, tx, r.engine.Sealer, op, &map[string]string{"code": "s3cret"})
	}))
	if state != operation.Pending {
		op.State = state
		require.NoError(r.t, r.store.UpdateOperation(ctx, op))
	}
	return op
}

func (r *rig) reload(op *operation.Operation) (*operation.Operation, bool) {
	r.t.Helper()
	cur, err := r.store.FindOperation(context.Background(), op.ID)
	require.NoError(r.t, err)
	_, err = r.store.OperationSecret(context.Background(), op.ID)
	return cur, err == nil
}

func snoozed(err error) (time.Duration, bool) {
	var s *rivertype.JobSnoozeError
	if errors.As(err, &s) {
		return s.Duration, true
	}
	return 0, false
}

const secret = `send:{"code":"s3cret"}`

// TestEnginePolicy is the engine's policy, case by case, against a fake
// provider on both databases: what each answer or error kind does to the
// operation, its secret and the job (docs/payments.md, "Never charged
// twice").
func TestEnginePolicy(t *testing.T) {
	transient := provider.Errorf(provider.Transient, "503 before processing")
	unsent := &provider.Error{Kind: provider.Transient, Message: "connection refused", Unsent: true}
	for _, tc := range []struct {
		name     string
		state    operation.State // the operation's state before the run
		attempt  int             // of 5
		answers  []answer
		calls    []string
		applied  []string
		snooze   time.Duration // >0: the run answers a snooze of this length
		retry    bool          // the run answers an error for River to retry
		after    operation.State
		kept     bool // the secret is still there
		unreadOK int  // Unreadable calls
		reroute  bool // the resource would move to another acquirer
		rerouted int  // times it was asked to and did
	}{
		{name: "an outcome is recorded and the secret deleted", state: operation.Pending, attempt: 1,
			answers: []answer{{status: "succeeded"}}, calls: []string{secret}, applied: []string{"succeeded"},
			after: operation.Done},
		{name: "pending: ask again after PollEvery, keep the secret", state: operation.Pending, attempt: 1,
			answers: []answer{{status: "pending"}}, calls: []string{secret}, snooze: pollEvery,
			after: operation.Inquiring, kept: true},
		{name: "transient: River retries the same send", state: operation.Pending, attempt: 2,
			answers: []answer{{err: transient}}, calls: []string{secret}, retry: true,
			after: operation.Pending, kept: true},
		{name: "transient at the last attempt: provider_unavailable", state: operation.Pending, attempt: 5,
			answers: []answer{{err: transient}}, calls: []string{secret}, applied: []string{"failed:provider_unavailable"},
			after: operation.Done},
		{name: "rate limited: snooze for Retry-After", state: operation.Pending, attempt: 3,
			answers: []answer{{err: &provider.Error{Kind: provider.RateLimited, RetryAfter: 7 * time.Second}}},
			calls:   []string{secret}, snooze: 7 * time.Second, after: operation.Pending, kept: true},
		{name: "rate limited without Retry-After: snooze by backoff", state: operation.Pending, attempt: 3,
			answers: []answer{{err: provider.Errorf(provider.RateLimited, "slow down")}},
			calls:   []string{secret}, snooze: operation.Backoff(3), after: operation.Pending, kept: true},
		{name: "outcome unknown: inquire from now on, never resend", state: operation.Pending, attempt: 1,
			answers: []answer{{err: provider.Errorf(provider.OutcomeUnknown, "timeout")}},
			calls:   []string{secret}, snooze: operation.Backoff(1), after: operation.Inquiring, kept: true},
		{name: "a plain error counts as outcome unknown", state: operation.Pending, attempt: 1,
			answers: []answer{{err: errors.New("connection reset")}},
			calls:   []string{secret}, snooze: operation.Backoff(1), after: operation.Inquiring, kept: true},
		{name: "unreadable: inquire, and the resource records it", state: operation.Pending, attempt: 2,
			answers: []answer{{err: provider.Errorf(provider.Unreadable, "garbage")}},
			calls:   []string{secret}, snooze: operation.Backoff(2), after: operation.Inquiring, kept: true, unreadOK: 1},
		{name: "inquiring: asks, does not send", state: operation.Inquiring, attempt: 7,
			answers: []answer{{status: "succeeded"}}, calls: []string{"inquire"}, applied: []string{"succeeded"},
			after: operation.Done},
		{name: "inquiring, still unreadable: keeps asking", state: operation.Inquiring, attempt: 40,
			answers: []answer{{err: provider.Errorf(provider.Unreadable, "garbage")}}, calls: []string{"inquire"},
			snooze: operation.Backoff(40), after: operation.Inquiring, kept: true, unreadOK: 1},
		{name: "inquiring, the provider never saw it: sent, safely", state: operation.Inquiring, attempt: 2,
			answers: []answer{{err: provider.Errorf(provider.NotFound, "no such operation")}, {status: "succeeded"}},
			calls:   []string{"inquire", secret}, applied: []string{"succeeded"}, after: operation.Done},
		{name: "unsent: the resource moves to another acquirer", state: operation.Pending, attempt: 1,
			answers: []answer{{err: unsent}}, calls: []string{secret}, reroute: true, rerouted: 1,
			after: operation.Done},
		{name: "unsent at a later run: sent again to the same acquirer, never moved (an earlier run's call may have reached it)",
			state: operation.Pending, attempt: 2, answers: []answer{{err: unsent}}, calls: []string{secret},
			reroute: true, retry: true, after: operation.Pending, kept: true},
		{name: "inquiring, the inquiry unsent: asks again, never moves (the first call's outcome is unknown)",
			state: operation.Inquiring, attempt: 2, answers: []answer{{err: unsent}}, calls: []string{"inquire"},
			reroute: true, retry: true, after: operation.Inquiring, kept: true},
		{name: "invalid: processing_error, no retry", state: operation.Pending, attempt: 1,
			answers: []answer{{err: provider.Errorf(provider.Invalid, "bad request")}}, calls: []string{secret},
			applied: []string{"failed:processing_error"}, after: operation.Done},
		{name: "unsupported: processing_error", state: operation.Pending, attempt: 1,
			answers: []answer{{err: provider.Errorf(provider.Unsupported, "no capability")}}, calls: []string{secret},
			applied: []string{"failed:processing_error"}, after: operation.Done},
		{name: "done: nothing is called", state: operation.Done, attempt: 1, after: operation.Done, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, db := range storetest.Databases(t) {
				t.Run(db.Name, func(t *testing.T) {
					r := newRig(t, db)
					r.thing.answers, r.thing.reroute = tc.answers, tc.reroute
					op := r.queue(tc.state)
					err := r.engine.Run(context.Background(), op.ID, tc.attempt, 5)
					d, isSnooze := snoozed(err)
					switch {
					case tc.snooze > 0:
						require.True(t, isSnooze, "want a snooze, got %v", err)
						require.Equal(t, tc.snooze, d)
					case tc.retry:
						require.Error(t, err)
						require.False(t, isSnooze)
					default:
						require.NoError(t, err)
					}
					require.Equal(t, tc.calls, r.thing.calls, "the provider calls")
					require.Equal(t, tc.applied, r.thing.applied, "the outcomes recorded")
					require.Equal(t, tc.unreadOK, r.thing.unreadable)
					require.Equal(t, tc.rerouted, r.thing.rerouted, "moved to another acquirer")
					cur, kept := r.reload(op)
					require.Equal(t, tc.after, cur.State)
					require.Equal(t, tc.kept, kept, "the secret is kept exactly while the provider may need it")
				})
			}
		})
	}
}

// TestRecordLate: an outcome for a done operation is recorded only when
// the resource accepts late outcomes (a payment's 3DS step).
func TestRecordLate(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			r := newRig(t, db)
			op := r.queue(operation.Done)
			require.NoError(t, r.engine.Record(context.Background(), op.ID, outcome{"succeeded"}))
			require.Empty(t, r.thing.applied)
			r.thing.late = true
			require.NoError(t, r.engine.Record(context.Background(), op.ID, outcome{"succeeded"}))
			require.Equal(t, []string{"succeeded"}, r.thing.applied)
		})
	}
}

// TestUnknownResource: an operation no handler serves is an error, and
// nothing is sent.
func TestUnknownResource(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			r := newRig(t, db)
			op := r.queue(operation.Pending)
			bare := operation.NewEngine(r.engine.Transact, r.engine.Read, r.engine.ReaderOf, r.engine.Sealer, time.Now,
				r.engine.Log, operation.Options{})
			require.ErrorContains(t, bare.Run(context.Background(), op.ID, 1, 5), `no handler for resource "thing"`)
			require.Empty(t, r.thing.calls)
		})
	}
}

// TestRecordOnce: runs of one operation recording outcomes at once (a
// handed-off run and River's run of its safety net, a rescued job) take
// turns on the operation's row: one outcome is applied, the others find it
// recorded, on both databases, whatever the resource's own checks.
func TestRecordOnce(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			r := newRig(t, db)
			op := r.queue(operation.Pending)
			const n = 12
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { errs[i] = r.engine.Record(context.Background(), op.ID, outcome{"succeeded"}) })
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			require.Equal(t, []string{"succeeded"}, r.thing.applied, "applied once")
			cur, kept := r.reload(op)
			require.Equal(t, operation.Done, cur.State)
			require.False(t, kept)
		})
	}
}

// TestRerouteOnce: runs of one operation at once (River's retries, the
// job of a handed-off run rescued or handed back), each with an answer in
// hand, take turns on the operation's row. Only the operation's first run
// may move its resource to another acquirer after a call that never left:
// a later run's "unsent" says nothing of an earlier call, which may have
// reached the acquirer (docs/design/decisions.md section 17). The first
// run ends before any later one starts (operation.Engine.Run), so it moves
// the resource at most once, and a later run never does, whatever the
// others hold, on both databases.
func TestRerouteOnce(t *testing.T) {
	unsent := &provider.Error{Kind: provider.Transient, Message: "connection refused", Unsent: true}
	for _, tc := range []struct {
		name    string
		first   bool // one of the runs is the operation's first
		answers []answer
	}{
		{"every run unsent, the first among them", true,
			[]answer{{err: unsent}, {err: unsent}, {err: unsent}, {err: unsent}, {err: unsent}, {err: unsent}}},
		{"later runs, one answered, the others unsent", false,
			[]answer{{status: "succeeded"}, {err: unsent}, {err: unsent}, {err: unsent}}},
		{"later runs, every one unsent", false, []answer{{err: unsent}, {err: unsent}, {err: unsent}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, db := range storetest.Databases(t) {
				t.Run(db.Name, func(t *testing.T) {
					r := newRig(t, db)
					n := len(tc.answers)
					r.thing.answers, r.thing.reroute = tc.answers, true
					r.thing.gate, r.thing.arrived = make(chan struct{}), make(chan struct{}, n)
					op := r.queue(operation.Pending)
					errs := make([]error, n)
					var wg sync.WaitGroup
					for i := range n {
						attempt := 2
						if tc.first && i == 0 {
							attempt = 1
						}
						wg.Go(func() { errs[i] = r.engine.Run(context.Background(), op.ID, attempt, 5) })
					}
					for range n { // every run holds its answer before any records
						<-r.thing.arrived
					}
					close(r.thing.gate)
					wg.Wait()
					for _, err := range errs {
						if err != nil {
							require.ErrorIs(t, err, unsent, "an unsent run is retried, and finds the operation done")
						}
					}
					cur, kept := r.reload(op)
					switch {
					case tc.first:
						require.Empty(t, r.thing.applied)
						require.Equal(t, 1, r.thing.rerouted, "moved once, by the first run")
						require.Equal(t, operation.Done, cur.State)
						require.Equal(t, "rerouted", cur.Result)
						require.False(t, kept)
					case tc.answers[0].err == nil:
						require.Equal(t, []string{"succeeded"}, r.thing.applied, "the answer recorded")
						require.Zero(t, r.thing.rerouted, "never moved by a later run")
						require.Equal(t, operation.Done, cur.State)
					default:
						require.Zero(t, r.thing.rerouted, "never moved by a later run")
						require.Equal(t, operation.Pending, cur.State, "sent again to its own acquirer")
						require.True(t, kept)
					}
				})
			}
		})
	}
}
