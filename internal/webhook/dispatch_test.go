package webhook

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/vault"
)

// memory is an in-memory store for the jobs: both DispatchStore and
// DispatchTx (a transaction here is just the calls in order).
type memory struct {
	events     map[string]*Recorded
	endpoints  map[string]*Endpoint
	deliveries map[string]*Delivery
	attempts   []*Attempt
	jobs       []DeliverArgs
	runAt      []time.Time
}

var errMissing = errors.New("missing")

func (m *memory) FindRecordedEvent(_ context.Context, id string) (*Recorded, error) {
	if e, ok := m.events[id]; ok {
		return e, nil
	}
	return nil, errMissing
}

func (m *memory) FindDelivery(_ context.Context, id string) (*Delivery, error) {
	if d, ok := m.deliveries[id]; ok {
		c := *d
		return &c, nil
	}
	return nil, errMissing
}

// FindDeliveryToSend reads a delivery, and its endpoint and event while
// it is pending.
func (m *memory) FindDeliveryToSend(ctx context.Context, id string) (*Delivery, *Endpoint, *Recorded, error) {
	del, err := m.FindDelivery(ctx, id)
	if err != nil || del.Status != Pending {
		return del, nil, nil, err
	}
	ep, err := m.FindWebhookEndpoint(ctx, del.EndpointID)
	if err != nil {
		return nil, nil, nil, err
	}
	ev, err := m.FindRecordedEvent(ctx, del.EventID)
	if err != nil {
		return nil, nil, nil, err
	}
	return del, ep, ev, nil
}

// AfterCommit and Handoff: the memory's transactions hand nothing off.
func (m *memory) AfterCommit(fn func(bool)) { fn(true) }
func (m *memory) Handoff() *handoff.Workers { return nil }

func (m *memory) FindWebhookEndpoint(_ context.Context, id string) (*Endpoint, error) {
	if e, ok := m.endpoints[id]; ok {
		return e, nil
	}
	return nil, errMissing
}

func (m *memory) ListWebhookEndpoints(_ context.Context, keyID string) ([]*Endpoint, error) {
	var out []*Endpoint
	for _, e := range m.endpoints {
		if e.AccessKeyID == keyID && e.DeletedAt == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memory) OverdueDeliveries(_ context.Context, before time.Time, limit int) ([]*Delivery, error) {
	var out []*Delivery
	for _, d := range m.deliveries {
		if d.Status == Pending && d.NextAttemptAt != nil && d.NextAttemptAt.Before(before) && len(out) < limit {
			c := *d
			out = append(out, &c)
		}
	}
	return out, nil
}

func (m *memory) CreateDelivery(_ context.Context, d *Delivery) (bool, error) {
	for _, o := range m.deliveries {
		if o.EventID == d.EventID && o.EndpointID == d.EndpointID {
			return false, nil
		}
	}
	c := *d
	m.deliveries[d.ID] = &c
	return true, nil
}

func (m *memory) UpdateDelivery(_ context.Context, d *Delivery, generation int) (bool, error) {
	if m.deliveries[d.ID].Generation != generation {
		return false, nil
	}
	c := *d
	m.deliveries[d.ID] = &c
	return true, nil
}

func (m *memory) RecordAttempt(_ context.Context, a *Attempt) error {
	m.attempts = append(m.attempts, a)
	return nil
}

func (m *memory) DisableWebhookEndpoint(_ context.Context, id string, at time.Time, reason string) error {
	m.endpoints[id].DisabledAt, m.endpoints[id].DisabledReason = &at, reason
	return nil
}

func (m *memory) Enqueue(_ context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	a, ok := args.(DeliverArgs)
	if !ok {
		return errors.New("unexpected job")
	}
	var at time.Time
	if opts != nil {
		at = opts.ScheduledAt
	}
	m.jobs, m.runAt = append(m.jobs, a), append(m.runAt, at)
	return nil
}

// script answers from a list, then the last answer forever.
type script struct {
	answers []Answer
	sent    []Message
}

func (s *script) Send(_ context.Context, m Message) Answer {
	s.sent = append(s.sent, m)
	a := s.answers[0]
	if len(s.answers) > 1 {
		s.answers = s.answers[1:]
	}
	return a
}

type rig struct {
	mem    *memory
	sender *script
	d      *Dispatcher
	now    time.Time
	ep     *Endpoint
	secret string
}

func newRig(t *testing.T, answers ...Answer) *rig {
	r := &rig{mem: &memory{events: map[string]*Recorded{}, endpoints: map[string]*Endpoint{}, deliveries: map[string]*Delivery{}},
		sender: &script{answers: answers}, now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	kr := vault.New()
	r.d = &Dispatcher{Store: r.mem, Sealer: kr, Sender: r.sender, Now: func() time.Time { return r.now }, NewID: uuid.NewString,
		Jitter:   func(d time.Duration) time.Duration { return d },
		Transact: func(_ context.Context, fn func(DispatchTx) error) error { return fn(r.mem) }}
	svc := &Service{Sealer: kr, Now: r.d.Now, NewID: uuid.NewString}
	ep, secret, err := svc.Create(context.Background(), endpointSink{r.mem}, "key", NewEndpoint{URL: "https://shop.example/h"})
	require.NoError(t, err)
	r.ep, r.secret = ep, secret
	r.mem.events["evt"] = &Recorded{ID: "evt", AccessKeyID: "key", Type: "payment.succeeded", Body: []byte(`{"id":"evt"}`)}
	return r
}

// endpointSink stores created endpoints in memory.
type endpointSink struct{ m *memory }

func (s endpointSink) CreateWebhookEndpoint(_ context.Context, e *Endpoint) error {
	s.m.endpoints[e.ID] = e
	return nil
}

func (s endpointSink) RotateWebhookSecret(context.Context, string, []byte, []byte, *time.Time) error {
	return nil
}

func (r *rig) fanout(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, r.d.Transact(ctx, func(tx DispatchTx) error {
		ev, err := tx.FindRecordedEvent(ctx, "evt")
		if err != nil {
			return err
		}
		return FanOut(ctx, tx, ev, r.d.Now(), r.d.NewID)
	}))
}

// run works the queued jobs in order, the clock set to each one's time,
// until none is left, and returns the delivery.
func (r *rig) run(t *testing.T) *Delivery {
	w := &DeliverWorker{Dispatcher: r.d}
	for len(r.mem.jobs) > 0 {
		args, at := r.mem.jobs[0], r.mem.runAt[0]
		r.mem.jobs, r.mem.runAt = r.mem.jobs[1:], r.mem.runAt[1:]
		if at.After(r.now) {
			r.now = at
		}
		require.NoError(t, w.Work(context.Background(), &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{}, Args: args}))
	}
	for _, d := range r.mem.deliveries {
		return d
	}
	return nil
}

// TestSweep: a pending delivery SweepGrace past due gets a job again (its
// own was lost); one due more recently is left to its job.
func TestSweep(t *testing.T) {
	r := newRig(t, Answer{StatusCode: 200})
	r.fanout(t)
	require.Len(t, r.mem.jobs, 1)
	r.mem.jobs, r.mem.runAt = nil, nil // the job is lost
	sweep := func() {
		w := &SweepWorker{Dispatcher: r.d}
		require.NoError(t, w.Work(context.Background(), &river.Job[SweepArgs]{JobRow: &rivertype.JobRow{}}))
	}
	r.now = r.now.Add(SweepGrace - time.Minute)
	sweep()
	require.Empty(t, r.mem.jobs, "not yet overdue enough: its job may only be late")
	r.now = r.now.Add(2 * time.Minute)
	sweep()
	require.Len(t, r.mem.jobs, 1)
	d := r.run(t)
	require.Equal(t, Succeeded, d.Status)
	require.Len(t, r.sender.sent, 1)
	sweep()
	require.Empty(t, r.mem.jobs, "a finished delivery is not swept")
}

func TestDispatchGivesUpAfterThreeDays(t *testing.T) {
	r := newRig(t, Answer{StatusCode: 500})
	start := r.now
	r.fanout(t)
	r.fanout(t) // a second run of the same fan-out adds nothing
	require.Len(t, r.mem.deliveries, 1)
	d := r.run(t)
	require.Equal(t, Failed, d.Status)
	require.Equal(t, ReasonExpired, d.Reason)
	require.Len(t, r.mem.attempts, 11)
	require.Len(t, r.sender.sent, 11)
	require.LessOrEqual(t, r.mem.attempts[10].At.Sub(start), RetryWindow)
	require.Greater(t, r.mem.attempts[10].At.Sub(start), 60*time.Hour)
	for i, m := range r.sender.sent {
		require.Equal(t, "evt", m.Header[HeaderID])
		require.Equal(t, strconv.FormatInt(r.mem.attempts[i].At.Unix(), 10), m.Header[HeaderTimestamp])
		h := http.Header{}
		for k, v := range m.Header {
			h.Set(k, v)
		}
		wh, _ := standardwebhooks.NewWebhook(r.secret)
		require.NoError(t, wh.VerifyIgnoringTimestamp(m.Body, h))
	}
}

func TestDispatchAnswers(t *testing.T) {
	t.Run("Retry-After postpones the retry", func(t *testing.T) {
		r := newRig(t, Answer{StatusCode: 429, RetryAfter: time.Hour}, Answer{StatusCode: 200})
		r.fanout(t)
		start := r.now
		d := r.run(t)
		require.Equal(t, Succeeded, d.Status)
		require.Equal(t, time.Hour, r.mem.attempts[1].At.Sub(start))
	})
	t.Run("410 disables the endpoint", func(t *testing.T) {
		r := newRig(t, Answer{StatusCode: 410})
		r.fanout(t)
		d := r.run(t)
		require.Equal(t, Failed, d.Status)
		require.Equal(t, ReasonEndpointGone, d.Reason)
		require.False(t, r.ep.Enabled())
		require.Len(t, r.mem.attempts, 1)
	})
	t.Run("a redirect is a failure", func(t *testing.T) {
		r := newRig(t, Answer{StatusCode: 302}, Answer{StatusCode: 200})
		r.fanout(t)
		require.Equal(t, Succeeded, r.run(t).Status)
		require.Len(t, r.mem.attempts, 2)
	})
	t.Run("a removed endpoint gets nothing more", func(t *testing.T) {
		r := newRig(t, Answer{StatusCode: 500})
		r.fanout(t)
		w := &DeliverWorker{Dispatcher: r.d}
		require.NoError(t, w.Work(context.Background(), &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{}, Args: r.mem.jobs[0]}))
		r.mem.jobs, r.mem.runAt = r.mem.jobs[1:], r.mem.runAt[1:]
		now := r.now
		r.ep.DeletedAt = &now
		d := r.run(t)
		require.Equal(t, Failed, d.Status)
		require.Equal(t, ReasonEndpointRemoved, d.Reason)
		require.Len(t, r.sender.sent, 1)
	})
	t.Run("a superseded job does nothing", func(t *testing.T) {
		r := newRig(t, Answer{StatusCode: 200})
		r.fanout(t)
		stale := r.mem.jobs[0]
		for _, d := range r.mem.deliveries {
			d.Generation = 1 // a resend queued generation 1
		}
		w := &DeliverWorker{Dispatcher: r.d}
		require.NoError(t, w.Work(context.Background(), &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{}, Args: stale}))
		require.Empty(t, r.sender.sent)
	})
	t.Run("filters and disabled endpoints", func(t *testing.T) {
		r := newRig(t, Answer{StatusCode: 200})
		r.ep.EventTypes = []string{"payment.failed"}
		r.fanout(t)
		require.Empty(t, r.mem.deliveries)
		r.ep.EventTypes = nil
		now := r.now
		r.ep.DisabledAt = &now
		r.fanout(t)
		require.Empty(t, r.mem.deliveries)
	})
}

// leasing is the memory store with the leases of handed-off first attempts
// (LeaseTx), cleared as the store clears them.
func (l *memory) ClearDeliveryLease(_ context.Context, id string) (bool, error) {
	d, ok := l.deliveries[id]
	if !ok || d.RescueAt.IsZero() {
		return false, nil
	}
	d.RescueAt = time.Time{}
	return true, nil
}

func (l *memory) LapsedDeliveries(_ context.Context, before time.Time, limit int) ([]*Delivery, error) {
	var out []*Delivery
	for _, d := range l.deliveries {
		if !d.RescueAt.IsZero() && d.RescueAt.Before(before) && len(out) < limit {
			d.RescueAt = time.Time{}
			c := *d
			out = append(out, &c)
		}
	}
	return out, nil
}

// TestRescue: a first attempt whose process stopped with its lease held
// gets its job once the lease has lapsed, of its generation, exactly once;
// a lease not yet lapsed and a delivery already finished get none
// (docs/operations.md, "Jobs run where they are queued (handoff)").
func TestRescue(t *testing.T) {
	r := newRig(t, Answer{StatusCode: 200})
	ctx := context.Background()
	lease := r.now.Add(2 * time.Minute)
	add := func(id, status string, rescueAt time.Time) {
		r.mem.deliveries[id] = &Delivery{ID: id, EventID: "evt-" + id, EndpointID: r.ep.ID, Status: status, Generation: 2,
			NextAttemptAt: &r.now, CreatedAt: r.now, UpdatedAt: r.now, RescueAt: rescueAt}
	}
	add("lost", Pending, lease)
	add("done", Succeeded, lease)
	add("later", Pending, lease.Add(time.Minute))
	add("unleased", Pending, time.Time{})
	r.mem.events["evt-lost"] = &Recorded{ID: "evt-lost", AccessKeyID: "key", Type: "payment.succeeded", Body: []byte(`{"id":"evt-lost"}`)}

	n, err := r.d.rescue(ctx, lease)
	require.NoError(t, err)
	require.Zero(t, n, "no lease has lapsed yet")
	require.Empty(t, r.mem.jobs)

	n, err = r.d.rescue(ctx, lease.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []DeliverArgs{{DeliveryID: "lost", Generation: 2}}, r.mem.jobs)
	require.True(t, r.mem.deliveries["lost"].RescueAt.IsZero(), "the rescue cleared the lease")
	require.True(t, r.mem.deliveries["done"].RescueAt.IsZero(), "a finished delivery's lapsed lease is cleared too")
	require.Equal(t, lease.Add(time.Minute), r.mem.deliveries["later"].RescueAt, "a lease not lapsed is kept")

	n, err = r.d.rescue(ctx, lease.Add(time.Second))
	require.NoError(t, err)
	require.Zero(t, n, "a lease is rescued once")

	r.now = lease.Add(time.Second)
	r.run(t)
	require.Equal(t, Succeeded, r.mem.deliveries["lost"].Status)
	require.Len(t, r.sender.sent, 1, "the rescued job made the attempt, once")
}
